import { describe, expect, it } from 'vitest';
import {
  DEFAULT_WAIT_FOR_FINAL_TIMEOUT_MS,
  FenceBoundError,
  fenceBound,
  readyToRestore,
  validateWaitForFinalTimeout,
  type ReadyToRestoreInput,
} from '../../../core/ownership/index.js';

describe('fenceBound', () => {
  it.each([
    [
      'the design formula',
      { dnsCacheTTL: 5_000, ownerCheckInterval: 5_000, unknownGrace: 30_000, fenceTime: 2_000, checkTimeout: 0 },
      42_000,
    ],
    [
      'defaults (cache: interval + 5 s record TTL; check timeout: the interval; 10 s fence time)',
      {},
      10_000 + 5_000 + 5_000 + 30_000 + 10_000,
    ],
    [
      'a check timeout of the interval by default',
      { dnsCacheTTL: 5_000, ownerCheckInterval: 5_000, unknownGrace: 30_000, fenceTime: 2_000 },
      47_000,
    ],
    [
      'a check timeout on top',
      { dnsCacheTTL: 1_000, ownerCheckInterval: 1_000, unknownGrace: 3_000, fenceTime: 500, checkTimeout: 2_000 },
      7_500,
    ],
    [
      'test-sized timings',
      { dnsCacheTTL: 200, ownerCheckInterval: 200, unknownGrace: 1_000, fenceTime: 300, checkTimeout: 0 },
      1_700,
    ],
  ])('adds up %s', (_case, timings, expected) => {
    expect(fenceBound(timings)).toBe(expected);
  });

  it.each([
    ['negative', { unknownGrace: -1 }, 'unknownGrace'],
    ['not a number', { fenceTime: Number.NaN }, 'fenceTime'],
    ['infinite', { dnsCacheTTL: Number.POSITIVE_INFINITY }, 'dnsCacheTTL'],
  ])('rejects a %s duration', (_case, timings, field) => {
    expect(() => fenceBound(timings)).toThrow(FenceBoundError);
    try {
      fenceBound(timings);
    } catch (error) {
      expect((error as FenceBoundError).field).toBe(field);
    }
  });

  it('fits the default wait-for-final timeout', () => {
    expect(() =>
      validateWaitForFinalTimeout({ waitForFinalTimeout: DEFAULT_WAIT_FOR_FINAL_TIMEOUT_MS, fenceBound: fenceBound() }),
    ).not.toThrow();
  });

  it.each([
    [49_999, true],
    [50_000, false],
    [600_000, false],
  ])('a wait-for-final timeout of %i ms against a 50 s bound: rejected %s', (timeout, rejected) => {
    const act = () => validateWaitForFinalTimeout({ waitForFinalTimeout: timeout, fenceBound: 50_000 });
    if (rejected) expect(act).toThrow(/shorter than the fence bound/);
    else expect(act).not.toThrow();
  });
});

describe('readyToRestore', () => {
  const base: ReadyToRestoreInput = {
    finalFound: false,
    ownerChangedAt: 1_000_000,
    now: 1_000_000,
    fenceBound: 50_000,
  };
  it.each<[string, Partial<ReadyToRestoreInput>, ReturnType<typeof readyToRestore>]>([
    ['a final snapshot, at once', { finalFound: true }, { ready: true, reason: 'final-snapshot' }],
    [
      'no final snapshot, before the bound',
      { now: 1_049_999 },
      { ready: false, reason: 'waiting-for-fence-bound', readyAt: 1_050_000 },
    ],
    ['no final snapshot, at the bound', { now: 1_050_000 }, { ready: true, reason: 'fence-bound-elapsed' }],
    [
      'no final snapshot, no known owner change',
      { ownerChangedAt: undefined, now: 9e12 },
      { ready: false, reason: 'owner-change-unknown' },
    ],
    ['a hibernated source', { sourceHibernated: true }, { ready: true, reason: 'source-hibernated' }],
  ])('%s', (_case, input, expected) => {
    expect(readyToRestore({ ...base, ...input })).toEqual(expected);
  });
});
