import { describe, expect, it } from 'vitest';
import { resumePoint, snapshotChain } from '../../../core/snapshots/index.js';
import { full, incr } from './helpers.js';

describe('resumePoint: where a new snapshot leader continues', () => {
  it('after the last delta of the latest full snapshot', () => {
    expect(resumePoint([full(100), incr(101, 120), incr(121, 150)])).toMatchObject({
      kind: 'resume',
      lastRevision: 150,
      fullKey: full(100).key,
    });
  });

  it('a full snapshot when the store has none', () => {
    expect(resumePoint([])).toMatchObject({ kind: 'full' });
    expect(resumePoint([incr(1, 10)])).toMatchObject({ kind: 'full' });
  });

  it('a full snapshot when the deltas have a gap', () => {
    expect(resumePoint([full(100), incr(101, 120), incr(130, 150)])).toMatchObject({ kind: 'full' });
  });
});

describe('snapshotChain: a store history without gap or duplicate', () => {
  it('a handover that continues at the next revision leaves neither', () => {
    const chain = snapshotChain([full(100), incr(101, 120), incr(121, 150), incr(151, 151)]);
    expect(chain).toEqual({ gaps: [], overlaps: [], lastRevision: 151 });
  });

  it('finds a delta that skips revisions and one that repeats them', () => {
    const skip = incr(125, 130);
    const repeat = incr(128, 140);
    const chain = snapshotChain([full(100), incr(101, 120), skip, repeat]);
    expect(chain.gaps).toEqual([{ key: skip.key, covered: 120, startRevision: 125 }]);
    expect(chain.overlaps).toEqual([{ key: repeat.key, covered: 130, startRevision: 128 }]);
    expect(chain.lastRevision).toBe(140);
  });

  it('a later full snapshot covers what came before', () => {
    expect(snapshotChain([full(100), incr(101, 120), full(200), incr(201, 210)])).toEqual({
      gaps: [],
      overlaps: [],
      lastRevision: 210,
    });
  });
});
