import { describe, expect, it } from 'vitest';
import {
  FailingOwnerRecords,
  InMemoryOwnerRecords,
  OwnerRecordConflictError,
  OwnerRecordsUnavailableError,
  type OwnerRecord,
} from '../../../core/ownership/index.js';

const NAME = 'owner.api1.dev.internal.example';
const SRC = 'aws-eu1-1111';
const DST = 'aws-eu2-2222';

async function conflict(promise: Promise<unknown>): Promise<OwnerRecordConflictError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(OwnerRecordConflictError);
  return error as OwnerRecordConflictError;
}

describe('InMemoryOwnerRecords', () => {
  it('creates only when absent (expected: null) and carries the current record on conflict', async () => {
    const records = new InMemoryOwnerRecords();
    await records.set({ name: NAME, value: SRC, expected: null });
    const error = await conflict(records.set({ name: NAME, value: DST, expected: null }));
    expect(error.current).toEqual({ name: NAME, value: SRC, ttl: 5 });
    expect(error.code).toBe('OwnerRecordConflict');
  });

  it('moves ownership only from the expected seed', async () => {
    const records = new InMemoryOwnerRecords();
    await records.set({ name: NAME, value: SRC });
    await conflict(records.set({ name: NAME, value: DST, expected: 'aws-eu3-3333' }));
    expect(await records.set({ name: NAME, value: DST, expected: SRC })).toEqual({ name: NAME, value: DST, ttl: 5 });
    // A retried step finds its own change done and succeeds.
    expect((await records.set({ name: NAME, value: DST, expected: SRC })).value).toBe(DST);
  });

  it('reports an expected record that is gone as a conflict with no current record', async () => {
    const records = new InMemoryOwnerRecords();
    const error = await conflict(records.set({ name: NAME, value: DST, expected: SRC }));
    expect(error.current).toBeUndefined();
  });

  it('deletes idempotently and conditionally', async () => {
    const records = new InMemoryOwnerRecords();
    await records.set({ name: `${NAME}.`, value: SRC, ttl: 30 });
    await conflict(records.delete({ name: NAME, expected: DST }));
    expect(await records.delete({ name: NAME, expected: SRC })).toBe(true);
    expect(await records.delete({ name: NAME, expected: SRC })).toBe(false);
    expect(await records.get(NAME)).toBeUndefined();
  });

  it('lists every record in pages', async () => {
    // Prepare
    const records = new InMemoryOwnerRecords();
    for (let i = 0; i < 701; i++)
      await records.set({ name: `owner.s${String(i).padStart(4, '0')}.dev.example`, value: SRC });
    // Act
    const seen: OwnerRecord[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await records.list({ cursor });
      seen.push(...page.records);
      sizes.push(page.records.length);
      cursor = page.next;
    } while (cursor !== undefined);
    // Assess
    expect(sizes).toEqual([300, 300, 101]);
    expect(new Set(seen.map((r) => r.name)).size).toBe(701);
  });

  it.each([0, 301, 1.5])('rejects page size %d', async (pageSize) => {
    await expect(new InMemoryOwnerRecords().list({ pageSize })).rejects.toThrow(/pageSize/);
  });
});

describe('FailingOwnerRecords', () => {
  const records = new FailingOwnerRecords();
  it.each<[string, () => Promise<unknown>]>([
    ['get', () => records.get(NAME)],
    ['set', () => records.set({ name: NAME, value: SRC })],
    ['delete', () => records.delete({ name: NAME })],
    ['list', () => records.list()],
  ])('fails %s', async (_op, call) => {
    await expect(call()).rejects.toBeInstanceOf(OwnerRecordsUnavailableError);
  });
});
