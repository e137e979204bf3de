import { describe, expect, it } from 'vitest';
import {
  NoFullSnapshotError,
  planCopy,
  RestorePlanGapError,
  type ObjectHead,
  type StoredSnapshot,
} from '../../../core/snapshots/index.js';
import { full, incr, stored } from './helpers.js';

const older = stored(full(50));
const olderDelta = stored(incr(51, 100));
const base = stored(full(100));
const d1 = stored(incr(101, 120));
const d2 = stored(incr(121, 140));
const source: StoredSnapshot[] = [older, olderDelta, base, d1, d2];
const head = (s: StoredSnapshot, more: Partial<ObjectHead> = {}): ObjectHead => ({
  key: s.key,
  size: s.size,
  checksum: s.checksum,
  ...more,
});

describe('planCopy', () => {
  it('copies only what the restore needs by default', () => {
    // Act
    const plan = planCopy({ source, destination: [] });
    // Assess
    expect(plan.copy.map((c) => c.snapshot.key)).toEqual([base.key, d1.key, d2.key]);
    expect(plan.copy.every((c) => c.reason === 'missing')).toBe(true);
    expect(plan.skip).toEqual([]);
    expect(plan.lastRevision).toBe(140);
    expect(plan.final).toBe(false);
    expect(plan.bytesToCopy).toBe(base.size + d1.size + d2.size);
  });

  it('copies everything with all: true, in revision order', () => {
    const plan = planCopy({ source: [...source].reverse(), destination: [], all: true });
    expect(plan.copy.map((c) => c.snapshot.key)).toEqual(source.map((s) => s.key));
  });

  it.each<[string, ObjectHead[], string[], Record<string, string>]>([
    ['a second copy skips everything', [head(base), head(d1), head(d2)], [base.key, d1.key, d2.key], {}],
    [
      'an interrupted copy resumes with what is missing',
      [head(base)],
      [base.key],
      { [d1.key]: 'missing', [d2.key]: 'missing' },
    ],
    [
      'a partial object of another size is copied again',
      [head(base), head(d1, { size: 3 }), head(d2)],
      [base.key, d2.key],
      { [d1.key]: 'size-differs' },
    ],
    [
      'same size, other content is copied again',
      [head(base), head(d1, { checksum: 'sha256:other' }), head(d2)],
      [base.key, d2.key],
      { [d1.key]: 'checksum-differs' },
    ],
    [
      'an unknown checksum is copied again',
      [head(base), head(d1, { checksum: undefined }), head(d2)],
      [base.key, d2.key],
      { [d1.key]: 'checksum-unknown' },
    ],
  ])('%s', (_case, destination, skipped, copied) => {
    // Act
    const plan = planCopy({ source, destination });
    // Assess
    expect(plan.skip.map((s) => s.key)).toEqual(skipped);
    expect(Object.fromEntries(plan.copy.map((c) => [c.snapshot.key, c.reason]))).toEqual(copied);
    expect(plan.bytesSkipped + plan.bytesToCopy).toBe(base.size + d1.size + d2.size);
  });

  it('starts from the final snapshot when there is one', () => {
    const final = stored(full(140, { final: true }));
    const plan = planCopy({ source: [...source, final], destination: [] });
    expect(plan.final).toBe(true);
    expect(plan.copy.map((c) => c.snapshot.key)).toEqual([final.key]);
  });

  it.each([
    ['an empty source', [], NoFullSnapshotError],
    ['a source with a gap', [base, d2], RestorePlanGapError],
  ])('fails before copying anything for %s', (_case, src, error) => {
    expect(() => planCopy({ source: src, destination: [] })).toThrow(error);
  });
});
