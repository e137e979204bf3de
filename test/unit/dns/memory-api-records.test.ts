import { describe, expect, it } from 'vitest';
import {
  ApiRecordConflictError,
  ApiRecordsUnavailableError,
  FailingApiRecords,
  InMemoryApiRecords,
} from '../../../core/dns/index.js';

const NAME = 'api.api1.dev.shoots.example';
const SOURCE = { type: 'A', value: '127.0.0.2' } as const;
const DESTINATION = { type: 'A', value: '127.0.0.3' } as const;

describe('InMemoryApiRecords', () => {
  it('creates on condition that the record is missing, and a retry of the same create succeeds', async () => {
    const records = new InMemoryApiRecords();
    await records.set({ name: NAME, target: SOURCE, expected: null, ttl: 30 });
    await expect(records.set({ name: `${NAME}.`, target: SOURCE, expected: null, ttl: 30 })).resolves.toMatchObject({
      value: '127.0.0.2',
    });
    expect(await records.get(NAME.toUpperCase())).toEqual({ name: NAME, ...SOURCE, ttl: 30 });
    expect(records.changes).toHaveLength(1);
  });

  it('switches only from the expected target and reports the current record otherwise', async () => {
    const records = new InMemoryApiRecords();
    await records.set({ name: NAME, target: SOURCE });
    await expect(
      records.set({ name: NAME, target: { type: 'CNAME', value: 'lb.example' }, expected: DESTINATION }),
    ).rejects.toMatchObject({ name: 'ApiRecordConflictError', current: { value: '127.0.0.2' } });
    await expect(
      records.set({ name: NAME, target: { type: 'CNAME', value: 'lb.example' }, expected: null }),
    ).rejects.toBeInstanceOf(ApiRecordConflictError);
    await records.set({ name: NAME, target: DESTINATION, expected: SOURCE });
    expect((await records.get(NAME))?.value).toBe('127.0.0.3');
  });

  it('deletes on condition, and deleting what is gone is false', async () => {
    const records = new InMemoryApiRecords();
    await records.set({ name: NAME, target: SOURCE });
    await expect(records.delete({ name: NAME, expected: DESTINATION })).rejects.toBeInstanceOf(ApiRecordConflictError);
    expect(await records.delete({ name: NAME, expected: SOURCE })).toBe(true);
    expect(await records.delete({ name: NAME })).toBe(false);
  });
});

describe('FailingApiRecords', () => {
  it('fails every call as unavailable', async () => {
    const records = new FailingApiRecords();
    await expect(records.get(NAME)).rejects.toBeInstanceOf(ApiRecordsUnavailableError);
    await expect(records.set({ name: NAME, target: SOURCE })).rejects.toBeInstanceOf(ApiRecordsUnavailableError);
    await expect(records.delete({ name: NAME })).rejects.toBeInstanceOf(ApiRecordsUnavailableError);
  });
});
