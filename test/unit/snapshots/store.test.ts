import { describe, expect, it } from 'vitest';
import {
  contentChecksum,
  FailingSnapshotStore,
  InMemorySnapshotStore,
  SnapshotNotFoundError,
  SnapshotStoreError,
  type SnapshotStore,
} from '../../../core/snapshots/index.js';
import { full, incr, TECHNICAL_ID } from './helpers.js';

const bytes = (text: string) => new TextEncoder().encode(text);

async function collect(stream: AsyncIterable<Uint8Array>): Promise<string> {
  let out = '';
  const decoder = new TextDecoder();
  for await (const chunk of stream) out += decoder.decode(chunk, { stream: true });
  return out;
}

describe('InMemorySnapshotStore', () => {
  it('lists one etcd sorted by revision, without foreign objects or other shoots', async () => {
    // Prepare
    const store = new InMemorySnapshotStore();
    await store.put(incr(101, 120).key, bytes('delta'));
    await store.put(full(100).key, bytes('full'));
    await store.put(`${TECHNICAL_ID}/v2/${full(100).name}/0000001`, bytes('chunk'));
    await store.put(`${TECHNICAL_ID}/v2/README`, bytes('not a snapshot'));
    await store.put(`shoot--dev--api10/v2/${full(5).name}`, bytes('another shoot'));
    // Act
    const listed = await store.list(TECHNICAL_ID);
    // Assess
    expect(listed.map((s) => s.name)).toEqual([full(100).name, incr(101, 120).name]);
    expect(listed[0]).toMatchObject({ size: 4, checksum: contentChecksum(bytes('full')) });
  });

  it('gets, fetches as a stream, heads and deletes', async () => {
    const store = new InMemorySnapshotStore();
    const key = full(7).key;
    const head = await store.put(
      key,
      (async function* () {
        yield bytes('hello ');
        yield bytes('world');
      })(),
    );
    expect(head).toEqual({ key, size: 11, checksum: contentChecksum(bytes('hello world')) });
    expect(new TextDecoder().decode(await store.get(key))).toBe('hello world');
    expect(await collect(await store.fetch(key))).toBe('hello world');
    expect(await store.head(key)).toEqual(head);
    await store.delete(key);
    await store.delete(key);
    expect(await store.head(key)).toBeUndefined();
  });

  it('reports a missing key as SnapshotNotFoundError', async () => {
    const store = new InMemorySnapshotStore();
    await expect(store.get('shoot--x--y/v2/nope')).rejects.toBeInstanceOf(SnapshotNotFoundError);
    await expect(store.fetch('shoot--x--y/v2/nope')).rejects.toBeInstanceOf(SnapshotNotFoundError);
  });

  it('does not let callers alias stored bytes', async () => {
    const store = new InMemorySnapshotStore();
    const body = bytes('abc');
    await store.put(full(1).key, body);
    body[0] = 0;
    (await store.get(full(1).key))[1] = 0;
    expect(new TextDecoder().decode(await store.get(full(1).key))).toBe('abc');
  });
});

describe('FailingSnapshotStore', () => {
  const store: SnapshotStore = new FailingSnapshotStore({ reason: 'AccessDenied' });
  it.each<[string, () => Promise<unknown>]>([
    ['list', () => store.list(TECHNICAL_ID)],
    ['get', () => store.get('k')],
    ['fetch', () => store.fetch('k')],
    ['put', () => store.put('k', new Uint8Array())],
    ['delete', () => store.delete('k')],
    ['head', () => store.head('k')],
  ])('fails %s with SnapshotStoreError', async (_op, call) => {
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SnapshotStoreError);
    expect((error as SnapshotStoreError).reason).toBe('AccessDenied');
    expect((error as SnapshotStoreError).code).toBe('SnapshotStoreAccessDenied');
  });
});
