import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CRASH_LOOP_BACK_OFF,
  KUBE_APISERVER,
  decideWeeder,
  defaultWeederTarget,
  initialWeederState,
  matchesSelector,
  podIdentity,
  type DependencyAvailability,
  type PodReport,
  type WeederDecision,
} from '../../../core/dwd/index.js';

const target = defaultWeederTarget(KUBE_APISERVER);
const WATCH_SECONDS = 60;

const podArb: fc.Arbitrary<PodReport> = fc.record(
  {
    name: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
    labels: fc.record(
      {
        'gardener.cloud/role': fc.constantFrom('controlplane', 'logging'),
        role: fc.constantFrom('apiserver', 'controller-manager', 'scheduler', 'main'),
      },
      { requiredKeys: [] },
    ),
    state: fc.constantFrom(CRASH_LOOP_BACK_OFF, CRASH_LOOP_BACK_OFF, 'Running', 'Error', 'Pending'),
    deleting: fc.boolean(),
  },
  { requiredKeys: ['name', 'labels', 'state'] },
);

interface Round {
  availability: DependencyAvailability;
  pods: PodReport[];
  elapsedSeconds: number;
}

const roundArb: fc.Arbitrary<Round> = fc.record({
  availability: fc.constantFrom<DependencyAvailability>('available', 'available', 'unavailable', 'unknown'),
  pods: fc.array(podArb, { maxLength: 6 }),
  elapsedSeconds: fc.integer({ min: 0, max: 40 }),
});

function simulate(rounds: Round[]) {
  let state = initialWeederState();
  let nowMs = 0;
  const out: Array<{
    decision: WeederDecision;
    pods: PodReport[];
    availability: DependencyAvailability;
    previous: typeof state;
  }> = [];
  for (const r of rounds) {
    nowMs += r.elapsedSeconds * 1000;
    const decision = decideWeeder({
      state,
      observation: { availability: r.availability, pods: r.pods, nowMs },
      target,
      options: { watchDurationSeconds: WATCH_SECONDS },
    });
    out.push({ decision, pods: r.pods, availability: r.availability, previous: state });
    state = decision.state;
  }
  return out;
}

describe('weeder properties over random rounds', () => {
  it('restarts only crash-looping, matching, not-deleting pods, only while available, each at most once per recovery', () => {
    fc.assert(
      fc.property(fc.array(roundArb, { minLength: 1, maxLength: 40 }), (rounds) => {
        const restartedPerEpoch = new Map<number, Set<string>>();
        for (const { decision, pods, availability, previous } of simulate(rounds)) {
          if (decision.actions.length === 0) continue;
          expect(availability).toBe('available');
          // Only in a recovery: the transition round or a later round of the same epoch.
          expect(decision.state.recoveryEpoch).toBeGreaterThan(0);
          expect(decision.verdict === 'recovered' || decision.verdict === 'watching').toBe(true);
          if (decision.verdict === 'recovered') expect(previous.lastKnownAvailability).toBe('unavailable');
          const seen = restartedPerEpoch.get(decision.state.recoveryEpoch) ?? new Set<string>();
          for (const action of decision.actions) {
            const candidates = pods.filter((p) => p.name === action.pod);
            expect(
              candidates.some(
                (p) =>
                  p.state === CRASH_LOOP_BACK_OFF &&
                  p.deleting !== true &&
                  matchesSelector(p.labels, target.dependantSelector),
              ),
            ).toBe(true);
            const id = podIdentity(candidates[0]!);
            expect(seen.has(id)).toBe(false);
            seen.add(id);
          }
          restartedPerEpoch.set(decision.state.recoveryEpoch, seen);
          expect(decision.events).toHaveLength(1);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('repeating the same round never restarts anything the second time', () => {
    fc.assert(
      fc.property(fc.array(roundArb, { minLength: 1, maxLength: 20 }), (rounds) => {
        const last = rounds.at(-1)!;
        const results = simulate([...rounds, { ...last, elapsedSeconds: 0 }]);
        expect(results.at(-1)!.decision.actions).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('the recovery epoch counts unavailable -> available transitions', () => {
    fc.assert(
      fc.property(fc.array(roundArb, { minLength: 1, maxLength: 40 }), (rounds) => {
        let lastKnown: 'available' | 'unavailable' | null = null;
        let transitions = 0;
        for (const r of rounds) {
          if (r.availability === 'unknown') continue;
          if (lastKnown === 'unavailable' && r.availability === 'available') transitions += 1;
          lastKnown = r.availability;
        }
        expect(simulate(rounds).at(-1)!.decision.state.recoveryEpoch).toBe(transitions);
      }),
      { numRuns: 300 },
    );
  });
});
