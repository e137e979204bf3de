import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backupLag,
  backupLagLimit,
  BackupLagLimitError,
  decideWriteGuard,
  DEFAULT_BACKUP_LAG_TOLERANCE_MS,
  scenarioLoss,
  type Scenario,
} from '../../../core/snapshots/index.js';

describe('backupLagLimit', () => {
  it('defaults to one delta interval plus 30 s', () => {
    expect(backupLagLimit({ deltaSnapshotInterval: 20_000 })).toBe(50_000);
    expect(backupLagLimit({ deltaSnapshotInterval: 1_000 })).toBe(1_000 + DEFAULT_BACKUP_LAG_TOLERANCE_MS);
  });

  it('takes a given limit longer than the delta interval', () => {
    expect(backupLagLimit({ deltaSnapshotInterval: 1_000, backupLagLimit: 2_000 })).toBe(2_000);
  });

  it('rejects a limit that a healthy sidecar reaches between two deltas, and nonsense', () => {
    for (const limit of [1_000, 500, 0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => backupLagLimit({ deltaSnapshotInterval: 1_000, backupLagLimit: limit })).toThrow(
        BackupLagLimitError,
      );
    }
    expect(() => backupLagLimit({ deltaSnapshotInterval: 0 })).toThrow(BackupLagLimitError);
  });
});

describe('decideWriteGuard', () => {
  const time = fc.integer({ min: 0, max: 10_000_000 });

  it('refuses writes exactly while the lag is beyond the limit, and changes only what differs', () => {
    fc.assert(
      fc.property(
        time,
        fc.option(time, { nil: undefined }),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.boolean(),
        (now, oldestPendingAt, limit, stalled) => {
          const d = decideWriteGuard({ now, oldestPendingAt, limit, stalled });
          expect(d.lagMs).toBe(backupLag(now, oldestPendingAt));
          expect(d.stall).toBe(d.lagMs > limit);
          expect(d.change).toBe(d.stall === stalled ? undefined : d.stall ? 'stall' : 'resume');
        },
      ),
    );
  });

  it('nothing pending never stalls: a shoot without writes stays writable through any S3 outage', () => {
    fc.assert(
      fc.property(time, fc.integer({ min: 1, max: 1_000_000 }), fc.boolean(), (now, limit, stalled) => {
        expect(decideWriteGuard({ now, oldestPendingAt: undefined, limit, stalled }).stall).toBe(false);
      }),
    );
  });

  it('is no latch: a stalled guard resumes once the lag is back within the limit', () => {
    expect(decideWriteGuard({ now: 10_000, oldestPendingAt: 9_000, limit: 2_000, stalled: true })).toEqual({
      stall: false,
      change: 'resume',
      lagMs: 1_000,
    });
    expect(decideWriteGuard({ now: 10_000, oldestPendingAt: 7_999, limit: 2_000, stalled: false })).toEqual({
      stall: true,
      change: 'stall',
      lagMs: 2_001,
    });
    expect(decideWriteGuard({ now: 10_000, oldestPendingAt: 8_000, limit: 2_000, stalled: false }).stall).toBe(false);
  });
});

describe('scenarioLoss', () => {
  it('S1, S2 and a reconnected S4 lose nothing; S3 and S4 lose what followed the last uploaded delta, within the limit plus the reaction', () => {
    const timings = { backupLagLimit: 2_000, guardReaction: 500 };
    for (const s of ['S1', 'S2', 'S4-reconnected'] as const) expect(scenarioLoss(s, timings)).toEqual({ kind: 'none' });
    for (const s of ['S3', 'S4'] as const)
      expect(scenarioLoss(s, timings)).toEqual({ kind: 'after-last-uploaded-delta', spanMs: 2_500 });
  });

  it('rejects timings that are not durations', () => {
    expect(() => scenarioLoss('S3' as Scenario, { backupLagLimit: Number.NaN, guardReaction: 0 })).toThrow(
      BackupLagLimitError,
    );
    expect(() => scenarioLoss('S3' as Scenario, { backupLagLimit: 1, guardReaction: -1 })).toThrow(BackupLagLimitError);
  });
});

/**
 * The bound as a property of the guard's decisions over any run: a source acknowledges writes at random
 * times, cuts a delta every interval whose upload succeeds or fails at random and takes a random time,
 * and its guard decides at every tick; it dies at a random moment. Whatever it lost (acknowledged after
 * the cut of its last uploaded delta) spans at most the limit plus one tick, the guard's reaction here.
 */
describe('the loss bound over simulated runs', () => {
  interface Run {
    writes: number[];
    interval: number;
    limit: number;
    tick: number;
    uploads: { ok: boolean; ms: number }[];
    deathAt: number;
  }
  const run: fc.Arbitrary<Run> = fc
    .record({
      interval: fc.integer({ min: 50, max: 400 }),
      extra: fc.integer({ min: 1, max: 600 }),
      tick: fc.integer({ min: 1, max: 50 }),
      writes: fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 200 }),
      uploads: fc.array(fc.record({ ok: fc.boolean(), ms: fc.integer({ min: 0, max: 600 }) }), {
        minLength: 60,
        maxLength: 60,
      }),
      deathAt: fc.integer({ min: 0, max: 5_000 }),
    })
    .map((r) => ({ ...r, limit: r.interval + r.extra, writes: [...r.writes].sort((a, b) => a - b) }));

  function simulate(r: Run): { acknowledged: number[]; lastUploadedCut: number } {
    const acknowledged: number[] = [];
    let pending: number[] = [];
    let stalled = false;
    let lastUploadedCut = 0;
    let nextCut = r.interval;
    let upload: { cut: number; events: number[]; doneAt: number; ok: boolean } | undefined;
    let uploadIndex = 0;
    let w = 0;
    for (let t = 0; t <= r.deathAt; t++) {
      if (upload && upload.doneAt <= t) {
        if (upload.ok) {
          lastUploadedCut = upload.cut;
          pending = pending.filter((at) => !upload!.events.includes(at));
        }
        upload = undefined;
      }
      if (!upload && t >= nextCut) {
        const u = r.uploads[uploadIndex++ % r.uploads.length]!;
        upload = { cut: t, events: [...pending], doneAt: t + u.ms, ok: u.ok };
        nextCut = t + r.interval;
      }
      if (t % r.tick === 0)
        stalled = decideWriteGuard({ now: t, oldestPendingAt: pending[0], limit: r.limit, stalled }).stall;
      while (w < r.writes.length && r.writes[w]! <= t) {
        if (!stalled) {
          acknowledged.push(t);
          pending.push(t);
        }
        w++;
      }
    }
    return { acknowledged, lastUploadedCut };
  }

  it('spans at most the limit plus the reaction', () => {
    fc.assert(
      fc.property(run, (r) => {
        const { acknowledged, lastUploadedCut } = simulate(r);
        const lost = acknowledged.filter((at) => at >= lastUploadedCut);
        if (lost.length === 0) return;
        const bound = scenarioLoss('S3', { backupLagLimit: r.limit, guardReaction: r.tick });
        expect(bound.kind).toBe('after-last-uploaded-delta');
        if (bound.kind === 'after-last-uploaded-delta')
          expect(lost.at(-1)! - lost[0]!).toBeLessThanOrEqual(bound.spanMs);
      }),
      { numRuns: 300 },
    );
  });
});
