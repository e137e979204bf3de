import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  digestHex,
  EMPTY_KEY_SPACE_DIGEST,
  entryHash,
  KeySpaceDigest,
  parseDigest,
  type KeyEntry,
} from '../../../core/snapshots/index.js';

const bytes = fc.uint8Array({ maxLength: 12 });
const entry: fc.Arbitrary<KeyEntry> = fc.record({
  key: bytes,
  value: bytes,
  createRevision: fc.integer({ min: 1, max: 1e9 }),
  modRevision: fc.integer({ min: 1, max: 1e9 }),
  version: fc.integer({ min: 1, max: 1e6 }),
  lease: fc.oneof(fc.constant('0'), fc.bigInt({ min: 1n, max: (1n << 63n) - 1n }).map(String)),
});

function digestOf(entries: readonly KeyEntry[]): string {
  const d = new KeySpaceDigest();
  for (const e of entries) d.add(e);
  return d.hex;
}

/** A key space as a writer leaves it: the last entry of each key, none for a deleted key. */
type Write = { key: string; entry: KeyEntry | undefined };
const writes = fc.array(
  fc.record({ key: fc.constantFrom('a', 'b', 'c', 'd'), entry: fc.option(entry, { nil: undefined }) }),
  { maxLength: 40 },
);

describe('key-space digest', () => {
  it('is independent of the order keys are visited in', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 20 }), fc.integer(), (entries, seed) => {
        const shuffled = [...entries].sort(() => ((seed = (seed * 1103515245 + 12345) | 0) & 1 ? 1 : -1));
        expect(digestOf(shuffled)).toBe(digestOf(entries));
      }),
    );
  });

  it('takes out exactly what it put in: an entry removed leaves the digest it found', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 10 }), entry, (entries, extra) => {
        const d = new KeySpaceDigest(digestOf(entries));
        expect(d.add(extra).remove(extra).hex).toBe(digestOf(entries));
      }),
    );
  });

  it('kept from writes (the old entry out, the new one in) equals the digest of the key space they leave', () => {
    fc.assert(
      fc.property(writes, (sequence: Write[]) => {
        const live = new Map<string, KeyEntry>();
        const kept = new KeySpaceDigest();
        for (const w of sequence) {
          const previous = live.get(w.key);
          if (previous) kept.remove(previous);
          if (w.entry) {
            kept.add(w.entry);
            live.set(w.key, w.entry);
          } else live.delete(w.key);
        }
        expect(kept.hex).toBe(digestOf([...live.values()]));
      }),
    );
  });

  it.each([
    ['value', { value: Buffer.from('other') }],
    ['create_revision', { createRevision: 8 }],
    ['mod_revision', { modRevision: 10 }],
    ['version', { version: 3 }],
    ['lease', { lease: '4660' }],
    ['lease removed', { lease: '0' }],
    ['key', { key: Buffer.from('k2') }],
  ])('changes when one field changes: %s', (_field, change) => {
    const base: KeyEntry = {
      key: Buffer.from('k'),
      value: Buffer.from('v'),
      createRevision: 7,
      modRevision: 9,
      version: 2,
      lease: '1234',
    };
    expect(entryHash({ ...base, ...change })).not.toBe(entryHash(base));
  });

  it('does not confuse where the key ends and the value begins', () => {
    const common = { createRevision: 1, modRevision: 1, version: 1, lease: 0 };
    expect(entryHash({ ...common, key: Buffer.from('ab'), value: Buffer.from('c') })).not.toBe(
      entryHash({ ...common, key: Buffer.from('a'), value: Buffer.from('bc') }),
    );
  });

  it('reads a lease ID as etcd writes it, in any spelling of the same int64', () => {
    const e = { key: Buffer.from('k'), value: Buffer.from('v'), createRevision: 1, modRevision: 1, version: 1 };
    expect(entryHash({ ...e, lease: '7587899193907348535' })).toBe(entryHash({ ...e, lease: 7587899193907348535n }));
    expect(entryHash({ ...e, lease: '-1' })).toBe(entryHash({ ...e, lease: (1n << 64n) - 1n }));
  });

  it('writes 64 hex digits and reads them back; anything else is no digest', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 5 }), (entries) => {
        const hex = digestOf(entries);
        expect(hex).toMatch(/^[0-9a-f]{64}$/);
        expect(new KeySpaceDigest(hex).hex).toBe(hex);
      }),
    );
    expect(EMPTY_KEY_SPACE_DIGEST).toBe(digestHex(0n));
    expect(() => parseDigest('ABC')).toThrow(RangeError);
    expect(() => parseDigest('0'.repeat(63))).toThrow(RangeError);
  });
});
