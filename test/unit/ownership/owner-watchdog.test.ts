import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decideOwnerWatchdog,
  initialWatchdogState,
  recordFinalSnapshot,
  type OwnerCheckResult,
  type WatchdogDecision,
  type WatchdogState,
} from '../../../core/ownership/index.js';
import { ValidationError } from '../../../core/errors.js';

type Step = readonly [number, OwnerCheckResult | 'final-taken' | 'final-failed'];
const OPTIONS = { ownerCheckInterval: 5_000, unknownGrace: 30_000 };

function run(
  steps: readonly Step[],
  state: WatchdogState = initialWatchdogState({ serving: true }),
): WatchdogDecision[] {
  const out: WatchdogDecision[] = [];
  for (const [now, event] of steps) {
    const decision =
      event === 'final-taken' || event === 'final-failed'
        ? recordFinalSnapshot({ state, outcome: event === 'final-taken' ? 'taken' : 'failed', options: OPTIONS })
        : decideOwnerWatchdog({ state, result: event, now, options: OPTIONS });
    out.push(decision);
    state = decision.state;
  }
  return out;
}

const summary = (d: WatchdogDecision) => `${d.state.mode} ${d.readiness} [${d.actions.map((a) => a.type).join(',')}]`;

describe('owner watchdog', () => {
  it.each<[string, WatchdogState, Step[], string[]]>([
    [
      'starts fenced and serves once it sees it owns the shoot',
      initialWatchdogState(),
      [
        [0, 'owner'],
        [5_000, 'owner'],
      ],
      ['serving 200 [unfence,start-snapshotter]', 'serving 200 []'],
    ],
    [
      'does not serve at start-up while the record cannot be read',
      initialWatchdogState(),
      [
        [0, 'unknown'],
        [60_000, 'unknown'],
        [61_000, 'owner'],
      ],
      ['fenced 503 []', 'fenced 503 []', 'serving 200 [unfence,start-snapshotter]'],
    ],
    [
      'not-owner: stop, fence first, final snapshot, stay fenced',
      initialWatchdogState({ serving: true }),
      [
        [0, 'owner'],
        [5_000, 'not-owner'],
        [5_100, 'final-taken'],
        [10_000, 'owner'],
        [15_000, 'not-owner'],
      ],
      [
        'serving 200 []',
        'lost 503 [stop-snapshotter,fence,take-final-snapshot]',
        'lost 503 []',
        'lost 503 []',
        'lost 503 []',
      ],
    ],
    [
      'a failed final snapshot is retried at the next check',
      initialWatchdogState({ serving: true }),
      [
        [0, 'not-owner'],
        [100, 'final-failed'],
        [5_000, 'not-owner'],
        [5_100, 'final-taken'],
        [10_000, 'not-owner'],
      ],
      [
        'lost 503 [stop-snapshotter,fence,take-final-snapshot]',
        'lost 503 []',
        'lost 503 [take-final-snapshot]',
        'lost 503 []',
        'lost 503 []',
      ],
    ],
    [
      'unknown: keeps serving through the grace, then fences without a final snapshot',
      initialWatchdogState({ serving: true }),
      [
        [0, 'unknown'],
        [20_000, 'unknown'],
        [29_999, 'unknown'],
        [30_000, 'unknown'],
        [35_000, 'unknown'],
      ],
      ['serving 200 []', 'serving 200 []', 'serving 200 []', 'fenced 503 [stop-snapshotter,fence]', 'fenced 503 []'],
    ],
    [
      'an owner answer ends the unknown streak; the next streak gets a full grace',
      initialWatchdogState({ serving: true }),
      [
        [0, 'unknown'],
        [25_000, 'owner'],
        [26_000, 'unknown'],
        [55_000, 'unknown'],
        [56_000, 'unknown'],
      ],
      ['serving 200 []', 'serving 200 []', 'serving 200 []', 'serving 200 []', 'fenced 503 [stop-snapshotter,fence]'],
    ],
    [
      'fenced on unknown, resolves to owner: unfence',
      initialWatchdogState({ serving: true }),
      [
        [0, 'unknown'],
        [30_000, 'unknown'],
        [40_000, 'owner'],
      ],
      ['serving 200 []', 'fenced 503 [stop-snapshotter,fence]', 'serving 200 [unfence,start-snapshotter]'],
    ],
    [
      'fenced on unknown, resolves to another owner: final snapshot, stay fenced (S4 reconnect)',
      initialWatchdogState({ serving: true }),
      [
        [0, 'unknown'],
        [30_000, 'unknown'],
        [40_000, 'not-owner'],
        [40_500, 'final-taken'],
        [45_000, 'owner'],
      ],
      [
        'serving 200 []',
        'fenced 503 [stop-snapshotter,fence]',
        'lost 503 [stop-snapshotter,fence,take-final-snapshot]',
        'lost 503 []',
        'lost 503 []',
      ],
    ],
    [
      'not-owner in the middle of an unknown streak ends it at once',
      initialWatchdogState({ serving: true }),
      [
        [0, 'unknown'],
        [1_000, 'not-owner'],
      ],
      ['serving 200 []', 'lost 503 [stop-snapshotter,fence,take-final-snapshot]'],
    ],
  ])('%s', (_case, initial, steps, expected) => {
    expect(run(steps, initial).map(summary)).toEqual(expected);
  });

  it('retries an unknown streak with backoff, never sleeping past the grace deadline', () => {
    const delays = run([
      [0, 'unknown'],
      [1_000, 'unknown'],
      [3_000, 'unknown'],
      [7_000, 'unknown'],
      [12_000, 'unknown'],
      [27_000, 'unknown'],
    ]).map((d) => d.nextCheckIn);
    expect(delays).toEqual([1_000, 2_000, 4_000, 5_000, 5_000, 3_000]);
    expect(run([[0, 'owner']])[0]?.nextCheckIn).toBe(5_000);
  });

  it('uses the design defaults (5 s interval, 30 s grace)', () => {
    let state = initialWatchdogState({ serving: true });
    state = decideOwnerWatchdog({ state, result: 'unknown', now: 0 }).state;
    expect(decideOwnerWatchdog({ state, result: 'unknown', now: 29_999 }).actions).toEqual([]);
    expect(decideOwnerWatchdog({ state, result: 'unknown', now: 30_000 }).actions.map((a) => a.type)).toEqual([
      'stop-snapshotter',
      'fence',
    ]);
  });

  it('rejects a final snapshot outcome while not fenced for good, and nonsense options', () => {
    expect(() => recordFinalSnapshot({ state: initialWatchdogState({ serving: true }), outcome: 'taken' })).toThrow(
      ValidationError,
    );
    expect(() =>
      decideOwnerWatchdog({ state: initialWatchdogState(), result: 'owner', now: 0, options: { unknownGrace: -1 } }),
    ).toThrow(ValidationError);
  });

  const event = fc.constantFrom<OwnerCheckResult | 'final-taken' | 'final-failed'>(
    'owner',
    'owner',
    'unknown',
    'unknown',
    'unknown',
    'not-owner',
    'final-taken',
    'final-failed',
  );
  const timeline = <T>(events: fc.Arbitrary<T>) =>
    fc.array(fc.tuple(fc.integer({ min: 0, max: 12_000 }), events), { maxLength: 60 }).map((steps) => {
      let now = 0;
      return steps.map(([dt, e]) => [(now += dt), e] as const);
    });

  /** Runs a timeline, skipping final-snapshot outcomes where no final snapshot was requested. */
  function walk(
    steps: readonly (readonly [number, OwnerCheckResult | 'final-taken' | 'final-failed'])[],
    serving: boolean,
  ) {
    let state = initialWatchdogState({ serving });
    const trace: { now: number; event: string; before: WatchdogState; decision: WatchdogDecision }[] = [];
    for (const [now, e] of steps) {
      if ((e === 'final-taken' || e === 'final-failed') && state.finalSnapshot !== 'requested') continue;
      const decision =
        e === 'final-taken' || e === 'final-failed'
          ? recordFinalSnapshot({ state, outcome: e === 'final-taken' ? 'taken' : 'failed', options: OPTIONS })
          : decideOwnerWatchdog({ state, result: e, now, options: OPTIONS });
      trace.push({ now, event: e, before: state, decision });
      state = decision.state;
    }
    return trace;
  }

  it('never unfences after a final snapshot, nor after seeing not-owner at all (property)', () => {
    fc.assert(
      fc.property(timeline(event), fc.boolean(), (steps, serving) => {
        let finalTaken = false;
        let lost = false;
        for (const { decision } of walk(steps, serving)) {
          const types = decision.actions.map((a) => a.type);
          if (finalTaken || lost) {
            expect(types).not.toContain('unfence');
            expect(types).not.toContain('start-snapshotter');
            expect(decision.readiness).toBe(503);
          }
          if (types.includes('take-final-snapshot') && !lost) {
            // Fence first: the final snapshot holds every write acknowledged before the fence.
            expect(types.indexOf('fence')).toBeGreaterThanOrEqual(0);
            expect(types.indexOf('fence')).toBeLessThan(types.indexOf('take-final-snapshot'));
            expect(types.indexOf('stop-snapshotter')).toBeLessThan(types.indexOf('fence'));
          }
          if (decision.state.finalSnapshot === 'taken') finalTaken = true;
          if (decision.state.mode === 'lost') lost = true;
        }
      }),
      { numRuns: 500 },
    );
  });

  it('never fences an owner seed within the grace of an unknown streak (property)', () => {
    fc.assert(
      fc.property(timeline(fc.constantFrom<OwnerCheckResult>('owner', 'unknown', 'unknown')), (steps) => {
        let streakStart: number | undefined;
        for (const { now, event: e, before, decision } of walk(steps, true)) {
          streakStart = e === 'unknown' ? (streakStart ?? now) : undefined;
          const fences = decision.actions.some((a) => a.type === 'fence');
          if (e === 'owner') expect(fences).toBe(false);
          if (fences) expect(now - streakStart!).toBeGreaterThanOrEqual(OPTIONS.unknownGrace);
          if (before.mode === 'serving' && e === 'unknown' && now - streakStart! < OPTIONS.unknownGrace) {
            expect(decision.readiness).toBe(200);
            expect(decision.actions).toEqual([]);
          }
          expect(decision.actions.map((a) => a.type)).not.toContain('take-final-snapshot');
        }
      }),
      { numRuns: 500 },
    );
  });
});
