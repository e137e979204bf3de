import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareSnapshots,
  currentFinalSnapshot,
  latestFinalSnapshot,
  latestFullSnapshot,
  latestSnapshot,
  parseSnapshotKey,
  tryParseSnapshotKey,
  type Snapshot,
} from '../../../core/snapshots/index.js';
import { full, incr } from './helpers.js';

/** A bucket's worth of keys: a full snapshot every 180 revisions, deltas of 1-3 revisions in between. */
function bucketKeys(count: number): {
  keys: string[];
  expected: { latest: string; latestFull: string; latestFinal: string };
} {
  const out: Snapshot[] = [];
  let revision = 0;
  while (out.length < count - 1) {
    if (out.length % 180 === 0) out.push(full(revision || 1, { compressionSuffix: '.gz' }));
    else {
      const start = revision + 1;
      revision += 1 + (out.length % 3);
      out.push(incr(start, revision, { compressionSuffix: '.gz' }));
    }
  }
  // One final snapshot early on (an earlier migration away and back), one plain full at the end.
  const final = full(500, { final: true, compressionSuffix: '.gz' });
  out.push(final);
  const latestFull = [...out]
    .filter((s) => s.kind === 'Full')
    .sort(compareSnapshots)
    .at(-1)!;
  const latest = [...out].sort(compareSnapshots).at(-1)!;
  // Listings come in key order, which is not revision order.
  const keys = out.map((s) => s.key).sort();
  return { keys, expected: { latest: latest.key, latestFull: latestFull.key, latestFinal: final.key } };
}

describe('latest and final lookup', () => {
  it('finds the latest, latest full and latest final snapshot among 10,000 keys quickly', () => {
    // Prepare
    const { keys, expected } = bucketKeys(10_000);
    expect(keys).toHaveLength(10_000);
    // Act
    const started = performance.now();
    const snapshots = keys.map(parseSnapshotKey);
    const latest = latestSnapshot(snapshots);
    const latestFull = latestFullSnapshot(snapshots);
    const latestFinal = latestFinalSnapshot(snapshots);
    const elapsed = performance.now() - started;
    // Assess
    expect(latest?.key).toBe(expected.latest);
    expect(latestFull?.key).toBe(expected.latestFull);
    expect(latestFinal?.key).toBe(expected.latestFinal);
    // Parsing plus three linear passes: tens of milliseconds, not seconds.
    expect(elapsed).toBeLessThan(1_000);
  });

  it('skips objects that are not snapshots in a listing', () => {
    const keys = [
      'shoot--dev--api1/v2/Full-00000000-00000010-1/0000001',
      'shoot--dev--api1/v2/tmp-upload',
      full(10).key,
    ];
    expect(keys.map(tryParseSnapshotKey).filter((s) => s !== undefined)).toHaveLength(1);
  });

  const f5 = full(5);
  const f9 = full(9, { createdOn: 2 });
  const f9final = full(9, { final: true, createdOn: 1 });
  it.each<[string, Snapshot[], Snapshot | undefined, Snapshot | undefined]>([
    ['nothing', [], undefined, undefined],
    ['only deltas', [incr(1, 5)], undefined, undefined],
    ['no final', [f5, incr(6, 9)], f5, undefined],
    ['a final delta', [f5, incr(6, 9, { final: true })], f5, incr(6, 9, { final: true })],
    ['a final and a later-created plain full at the same revision', [f9, f9final], f9final, f9final],
  ])('with %s', (_case, snapshots, expectedFull, expectedFinal) => {
    expect(latestFullSnapshot(snapshots)?.key).toBe(expectedFull?.key);
    expect(latestFinalSnapshot(snapshots)?.key).toBe(expectedFinal?.key);
  });

  it('agrees with sorting the whole listing (property)', () => {
    const snapshotArb = fc
      .record({
        kind: fc.constantFrom('Full' as const, 'Incr' as const),
        a: fc.nat({ max: 1e9 }),
        b: fc.nat({ max: 1e9 }),
        final: fc.boolean(),
        createdOn: fc.nat({ max: 2e9 }),
      })
      .map(({ kind, a, b, final, createdOn }) =>
        kind === 'Full'
          ? full(Math.max(a, b), { final, createdOn })
          : incr(Math.min(a, b), Math.max(a, b), { final, createdOn }),
      );
    fc.assert(
      fc.property(fc.array(snapshotArb, { maxLength: 200 }), (snapshots) => {
        const sorted = [...snapshots].sort(compareSnapshots);
        expect(latestSnapshot(snapshots)?.key).toBe(sorted.at(-1)?.key);
        expect(latestFullSnapshot(snapshots)?.key).toBe(sorted.filter((s) => s.kind === 'Full').at(-1)?.key);
        expect(latestFinalSnapshot(snapshots)?.key).toBe(sorted.filter((s) => s.final).at(-1)?.key);
      }),
    );
  });
});

describe('currentFinalSnapshot', () => {
  const oldFinal = full(100, { final: true, createdOn: 1_000 });
  const newFinal = full(300, { final: true, createdOn: 3_000 });
  it.each<[string, Snapshot[], { notBefore?: number }, Snapshot | undefined]>([
    [
      'a final snapshot that ends the history',
      [full(50), incr(51, 100), full(100, { final: true })],
      {},
      full(100, { final: true }),
    ],
    [
      'an old final snapshot the shoot came back after',
      [oldFinal, full(200, { createdOn: 2_000 }), incr(201, 250)],
      {},
      undefined,
    ],
    ['the new final snapshot after an old one', [oldFinal, full(200, { createdOn: 2_000 }), newFinal], {}, newFinal],
    ['a final snapshot from before the owner change', [oldFinal], { notBefore: 1_001 }, undefined],
    ['a final snapshot from after the owner change', [oldFinal], { notBefore: 1_000 }, oldFinal],
    [
      'a final delta that ends the history',
      [full(50), incr(51, 100), incr(101, 120, { final: true })],
      {},
      incr(101, 120, { final: true }),
    ],
    [
      'a final delta of the revision the full snapshot already holds',
      [full(120), incr(120, 120, { final: true })],
      {},
      incr(120, 120, { final: true }),
    ],
    [
      'an old final delta the shoot came back after',
      [incr(101, 120, { final: true, createdOn: 1_000 }), full(120, { createdOn: 2_000 })],
      {},
      undefined,
    ],
    ['nothing', [], {}, undefined],
  ])('%s', (_case, snapshots, options, expected) => {
    expect(currentFinalSnapshot(snapshots, options)?.key).toBe(expected?.key);
  });

  // The quick start's second migration (A to B, then B to A on the bad path): B's bucket holds A's final
  // snapshot, copied in by the first migration, and the full snapshot B's restored sidecar took of the same
  // revision before serving. The writes B acknowledged since are in no snapshot yet; the old final must
  // not end the copy's wait for B's own.
  const copiedIn = { ...full(1, { final: true, createdOn: 1_254 }), storedAt: 1_256_000 };
  const restoredFull = { ...full(1, { createdOn: 1_259 }), storedAt: 1_259_500 };
  it.each<[string, (Snapshot & { storedAt?: number })[], Snapshot | undefined]>([
    [
      'an old final of the same revision, stored before the restored full snapshot',
      [copiedIn, restoredFull],
      undefined,
    ],
    [
      "the same, when the old final seed's clock ran ahead of the restored seed's",
      [{ ...copiedIn, createdOn: 1_300 }, restoredFull],
      undefined,
    ],
    [
      "the same, without the store's clock: creation times decide",
      [
        { ...copiedIn, storedAt: undefined },
        { ...restoredFull, storedAt: undefined },
      ],
      undefined,
    ],
    [
      'the new final of the same revision after the restored full snapshot (no write since)',
      [copiedIn, restoredFull, { ...full(1, { final: true, createdOn: 1_270 }), storedAt: 1_270_000 }],
      full(1, { final: true, createdOn: 1_270 }),
    ],
    [
      'a final and a delta stored in the same second before it',
      [
        { ...incr(2, 5, { createdOn: 1_270 }), storedAt: 1_270_000 },
        { ...full(5, { final: true, createdOn: 1_270 }), storedAt: 1_270_000 },
      ],
      full(5, { final: true, createdOn: 1_270 }),
    ],
  ])('%s', (_case, snapshots, expected) => {
    expect(currentFinalSnapshot(snapshots)?.key).toBe(expected?.key);
  });

  it('is never a final that some other snapshot was stored after', () => {
    const snapshot = fc.record({
      revision: fc.integer({ min: 1, max: 50 }),
      final: fc.boolean(),
      storedAt: fc.integer({ min: 0, max: 100 }),
    });
    fc.assert(
      fc.property(fc.array(snapshot, { minLength: 1, maxLength: 12 }), (items) => {
        const listing = items.map((i, n) => ({
          ...full(i.revision, { final: i.final, createdOn: 1_000 + n }),
          storedAt: i.storedAt,
        }));
        const found = currentFinalSnapshot(listing);
        if (found === undefined) return;
        expect(found.final).toBe(true);
        expect(listing.every((s) => s.storedAt <= found.storedAt && s.lastRevision <= found.lastRevision)).toBe(true);
      }),
    );
  });
});
