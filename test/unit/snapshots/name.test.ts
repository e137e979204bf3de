import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareSnapshots,
  COMPRESSION_SUFFIXES,
  formatSnapshotName,
  makeSnapshot,
  parseSnapshotKey,
  parseSnapshotName,
  SnapshotNameError,
  tryParseSnapshotKey,
} from '../../../core/snapshots/index.js';

describe('snapshot names (etcd-backup-restore v2 layout)', () => {
  it.each([
    [
      'Full-00000000-00000100-1700000000',
      { kind: 'Full', startRevision: 0, lastRevision: 100, createdOn: 1700000000, compressionSuffix: '', final: false },
    ],
    [
      'Incr-00000101-00000120-1700000020.gz',
      {
        kind: 'Incr',
        startRevision: 101,
        lastRevision: 120,
        createdOn: 1700000020,
        compressionSuffix: '.gz',
        final: false,
      },
    ],
    [
      'Full-00000000-00000120-1700000030.gz.final',
      {
        kind: 'Full',
        startRevision: 0,
        lastRevision: 120,
        createdOn: 1700000030,
        compressionSuffix: '.gz',
        final: true,
      },
    ],
    [
      'Full-00000000-00000120-1700000030.final',
      { kind: 'Full', startRevision: 0, lastRevision: 120, createdOn: 1700000030, compressionSuffix: '', final: true },
    ],
    [
      'Incr-00000001-00000002-1.Z',
      { kind: 'Incr', startRevision: 1, lastRevision: 2, createdOn: 1, compressionSuffix: '.Z', final: false },
    ],
    [
      'Incr-00000001-00000002-1.zlib',
      { kind: 'Incr', startRevision: 1, lastRevision: 2, createdOn: 1, compressionSuffix: '.zlib', final: false },
    ],
    // Revisions outgrow the eight-digit padding; etcd-backup-restore writes them unpadded then.
    [
      'Full-00000000-123456789-1700000000',
      {
        kind: 'Full',
        startRevision: 0,
        lastRevision: 123456789,
        createdOn: 1700000000,
        compressionSuffix: '',
        final: false,
      },
    ],
  ])('parses %s', (name, expected) => {
    // Act
    const parsed = parseSnapshotName(name);
    // Assess
    expect(parsed).toEqual(expected);
    expect(formatSnapshotName(parsed)).toBe(name);
  });

  it.each([
    ['unknown kind', 'Chunk-00000000-00000100-1700000000'],
    ['lower-case kind', 'full-00000000-00000100-1700000000'],
    ['too few parts', 'Full-00000000-1700000000'],
    ['non-numeric revision', 'Full-0000000x-00000100-1700000000'],
    ['start after last', 'Incr-00000200-00000100-1700000000'],
    ['unknown compression', 'Full-00000000-00000100-1700000000.bz2'],
    ['final before compression', 'Full-00000000-00000100-1700000000.final.gz'],
    ['two compressions', 'Full-00000000-00000100-1700000000.gz.gz'],
    ['empty', ''],
  ])('rejects a name with %s', (_case, name) => {
    expect(() => parseSnapshotName(name)).toThrow(SnapshotNameError);
  });

  it('parses a full key into technical ID and name', () => {
    const s = parseSnapshotKey('shoot--dev--api1/v2/Incr-00000101-00000120-1700000020.gz');
    expect(s).toMatchObject({
      technicalID: 'shoot--dev--api1',
      name: 'Incr-00000101-00000120-1700000020.gz',
      kind: 'Incr',
    });
  });

  it.each([
    ['no v2 folder', 'shoot--dev--api1/Full-00000000-00000100-1700000000'],
    ['v1 layout', 'shoot--dev--api1/v1/Backup-1700000000/Full-00000000-00000100-1700000000'],
    ['chunk object', 'shoot--dev--api1/v2/Full-00000000-00000100-1700000000/0000000001'],
    ['no technical ID', '/v2/Full-00000000-00000100-1700000000'],
  ])('rejects a key with %s', (_case, key) => {
    expect(() => parseSnapshotKey(key)).toThrow(SnapshotNameError);
    expect(tryParseSnapshotKey(key)).toBeUndefined();
  });

  it('keeps the key on the error so a listing can report what it skipped', () => {
    const key = 'shoot--dev--api1/v2/Full-bad';
    const error = (() => {
      try {
        parseSnapshotKey(key);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(SnapshotNameError);
    expect((error as SnapshotNameError).key).toBe(key);
    expect((error as SnapshotNameError).name).toBe('SnapshotNameError');
  });

  const fields = fc
    .record({
      technicalID: fc.stringMatching(/^shoot--[a-z0-9]{1,10}--[a-z0-9]{1,20}$/),
      kind: fc.constantFrom('Full' as const, 'Incr' as const),
      a: fc.nat({ max: 2 ** 40 }),
      b: fc.nat({ max: 2 ** 40 }),
      createdOn: fc.nat({ max: 2 ** 34 }),
      compressionSuffix: fc.constantFrom(...COMPRESSION_SUFFIXES),
      final: fc.boolean(),
    })
    .map(({ a, b, ...rest }) => ({ ...rest, startRevision: Math.min(a, b), lastRevision: Math.max(a, b) }));

  it('round-trips every snapshot through its key (property)', () => {
    fc.assert(
      fc.property(fields, (f) => {
        const made = makeSnapshot(f);
        const parsed = parseSnapshotKey(made.key);
        expect(parsed).toEqual(made);
        expect(formatSnapshotName(parsed)).toBe(made.name);
      }),
    );
  });

  it('orders by last revision, a full after a delta at the same revision, final last (property: total order)', () => {
    fc.assert(
      fc.property(fields, fields, (x, y) => {
        const a = makeSnapshot(x);
        const b = makeSnapshot(y);
        const ab = compareSnapshots(a, b);
        expect(Math.sign(ab)).toBe(-Math.sign(compareSnapshots(b, a)));
        if (a.lastRevision !== b.lastRevision) expect(Math.sign(ab)).toBe(Math.sign(a.lastRevision - b.lastRevision));
        if (ab === 0) expect(a.key).toBe(b.key);
      }),
    );
  });
});
