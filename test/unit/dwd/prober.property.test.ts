import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SCALE_DOWN_ORDER,
  decideProbe,
  initialProbeState,
  probeStateSchema,
  reconcileReplicas,
  type ProbeDecision,
  type ProbeRound,
  type ProberOptions,
  type ScalableDependent,
} from '../../../core/dwd/index.js';

type Replicas = Partial<Record<ScalableDependent, number>>;

/** One simulated 10-second step: what the probes say and whether someone else touches the replicas. */
interface Step {
  external: ProbeRound['external'];
  internal: ProbeRound['internal'];
  hibernated: boolean;
  migrating: boolean;
  /** An operator or reconcile sets this component's replicas before the round (the guard applies). */
  outsideChange?: { component: ScalableDependent; replicas: number };
}

const MAX_AGE = 30;

/** Biased towards the outcomes the rules are about, so streaks actually form. */
const stepArb = (withOutsideChanges: boolean): fc.Arbitrary<Step> =>
  fc.record(
    {
      external: fc.constantFrom<Step['external']>('success', 'success', 'failure', 'failure', 'timeout'),
      internal: fc.oneof(
        {
          weight: 6,
          arbitrary: fc.record({
            result: fc.constant<'success'>('success'),
            ageSeconds: fc.integer({ min: -5, max: MAX_AGE }),
          }),
        },
        {
          weight: 1,
          arbitrary: fc.record({
            result: fc.constantFrom<'failure' | 'unknown'>('failure', 'unknown'),
            ageSeconds: fc.integer({ min: 0, max: MAX_AGE }),
          }),
        },
        {
          weight: 1,
          arbitrary: fc.record({
            result: fc.constant<'success'>('success'),
            ageSeconds: fc.integer({ min: MAX_AGE + 1, max: 600 }),
          }),
        },
        { weight: 1, arbitrary: fc.constant(undefined) },
      ),
      // About one round in twenty each, so streaks still form between skips.
      hibernated: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
      migrating: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
      ...(withOutsideChanges
        ? {
            outsideChange: fc.option(
              fc.record({ component: fc.constantFrom(...SCALE_DOWN_ORDER), replicas: fc.integer({ min: 0, max: 5 }) }),
              { freq: 8, nil: undefined },
            ),
          }
        : {}),
    },
    { requiredKeys: ['external', 'internal', 'hibernated', 'migrating'] },
  );

/**
 * Runs of repeated steps: independent random rounds almost never form a streak of 3, while real
 * outages and recoveries are runs; short runs between them are the flapping the rules must absorb.
 * An outside change applies to the first round of its run only.
 */
const stepsArb = (withOutsideChanges: boolean): fc.Arbitrary<Step[]> =>
  fc
    .array(fc.tuple(stepArb(withOutsideChanges), fc.integer({ min: 1, max: 6 })), { minLength: 1, maxLength: 30 })
    .map((runs) =>
      runs.flatMap(([step, times]) =>
        Array.from({ length: times }, (_, i) => (i === 0 ? step : { ...step, outsideChange: undefined })),
      ),
    );

const optionsArb = fc.record({
  failureThreshold: fc.integer({ min: 1, max: 5 }),
  successThreshold: fc.integer({ min: 1, max: 4 }),
});

const replicasArb: fc.Arbitrary<Replicas> = fc.record(
  Object.fromEntries(SCALE_DOWN_ORDER.map((c) => [c, fc.integer({ min: 0, max: 5 })])) as Record<
    ScalableDependent,
    fc.Arbitrary<number>
  >,
  { requiredKeys: [] },
);

interface Trace {
  steps: Step[];
  decisions: ProbeDecision[];
  /** Replicas the agent reported to each round, before applying that round's commands. */
  before: Replicas[];
}

/** Plays the steps against a simulated agent that applies every command and the reconcile guard. */
function simulate(steps: Step[], options: Partial<ProberOptions>, initialReplicas: Replicas): Trace {
  let current = initialProbeState();
  let replicas: Replicas = { ...initialReplicas };
  const decisions: ProbeDecision[] = [];
  const before: Replicas[] = [];
  for (const [i, step] of steps.entries()) {
    if (step.outsideChange !== undefined && replicas[step.outsideChange.component] !== undefined) {
      const desired = { ...replicas, [step.outsideChange.component]: step.outsideChange.replicas } as Record<
        string,
        number
      >;
      replicas = reconcileReplicas(desired, current).replicas;
    }
    before.push({ ...replicas });
    const decision = decideProbe({
      state: current,
      round: {
        atMs: i * 10_000,
        external: step.external,
        internal: step.internal,
        hibernated: step.hibernated,
        migrating: step.migrating,
        replicas,
      },
      options: { ...options, internalMaxAgeSeconds: MAX_AGE },
    });
    for (const a of decision.actions) replicas = { ...replicas, [a.component]: a.replicas };
    decisions.push(decision);
    current = decision.state;
  }
  return { steps, decisions, before };
}

const skipped = (s: Step) => s.hibernated || s.migrating;
const internalUp = (s: Step) =>
  s.internal !== undefined && s.internal.result === 'success' && s.internal.ageSeconds <= MAX_AGE;
/** The only kind of round that may count toward a scale-down. */
const qualifiesForDown = (s: Step) => !skipped(s) && s.external !== 'success' && internalUp(s);
const qualifiesForUp = (s: Step) => !skipped(s) && s.external === 'success';

/** Number of maximal runs of `pred` with length >= threshold. */
function streaksAtLeast(steps: Step[], pred: (s: Step) => boolean, threshold: number): number {
  let count = 0;
  let run = 0;
  for (const s of [...steps, undefined]) {
    if (s !== undefined && pred(s)) {
      run += 1;
    } else {
      if (run >= threshold) count += 1;
      run = 0;
    }
  }
  return count;
}

const scenario = (withOutsideChanges: boolean) =>
  fc.record({
    steps: stepsArb(withOutsideChanges),
    options: optionsArb,
    replicas: replicasArb,
  });

const RUNS = { numRuns: 300 };

describe('prober properties over random probe sequences', () => {
  it('scales down only after >= failureThreshold consecutive (external down, internal up) rounds', () => {
    fc.assert(
      fc.property(scenario(true), ({ steps, options, replicas }) => {
        const { decisions } = simulate(steps, options, replicas);
        decisions.forEach((d, i) => {
          if (d.verdict !== 'scaled-down') return;
          expect(i + 1).toBeGreaterThanOrEqual(options.failureThreshold);
          for (let k = i - options.failureThreshold + 1; k <= i; k += 1) expect(qualifiesForDown(steps[k]!)).toBe(true);
        });
      }),
      RUNS,
    );
  });

  it('scales down only on an internal "up" the agent observed after the external probe began to fail', () => {
    fc.assert(
      fc.property(scenario(true), ({ steps, options, replicas }) => {
        const { decisions } = simulate(steps, options, replicas);
        decisions.forEach((d, i) => {
          if (d.verdict !== 'scaled-down') return;
          // The outage began at the first of the external failures (skips end an outage) leading up to this round.
          let start = i;
          while (start > 0 && steps[start - 1]!.external !== 'success' && !skipped(steps[start - 1]!)) start -= 1;
          const observedAtMs = i * 10_000 - steps[i]!.internal!.ageSeconds * 1_000;
          expect(observedAtMs).toBeGreaterThan(start * 10_000);
        });
      }),
      RUNS,
    );
  });

  it('scales up only after >= successThreshold consecutive external successes', () => {
    fc.assert(
      fc.property(scenario(true), ({ steps, options, replicas }) => {
        const { decisions } = simulate(steps, options, replicas);
        decisions.forEach((d, i) => {
          if (d.verdict !== 'scaled-up') return;
          for (let k = i - options.successThreshold + 1; k <= i; k += 1) expect(qualifiesForUp(steps[k]!)).toBe(true);
        });
      }),
      RUNS,
    );
  });

  it('scale-down goes in order, scale-up restores exactly the remembered replicas in reverse order', () => {
    fc.assert(
      fc.property(scenario(false), ({ steps, options, replicas }) => {
        const { decisions, before } = simulate(steps, options, replicas);
        let lastDown: { components: ScalableDependent[]; replicas: Replicas } | undefined;
        decisions.forEach((d, i) => {
          if (d.verdict === 'scaled-down') {
            const components = d.actions.map((a) => a.component);
            expect(components).toEqual(SCALE_DOWN_ORDER.filter((c) => (before[i]![c] ?? 0) > 0));
            expect(d.actions.every((a) => a.replicas === 0)).toBe(true);
            lastDown = { components, replicas: before[i]! };
          }
          if (d.verdict === 'scaled-up') {
            expect(lastDown).toBeDefined();
            // Nobody else touched the replicas, so every remembered component is restored.
            expect(d.actions.map((a) => a.component)).toEqual([...lastDown!.components].reverse());
            for (const a of d.actions) expect(a.replicas).toBe(lastDown!.replicas[a.component]);
            lastDown = undefined;
          }
        });
      }),
      RUNS,
    );
  });

  it('after a full down/up cycle without outside changes, replicas are exactly what they were', () => {
    fc.assert(
      fc.property(scenario(false), ({ steps, options, replicas }) => {
        const { decisions, before } = simulate(steps, options, replicas);
        const last = decisions.at(-1)!;
        if (!last.state.scaledDown) {
          const finalReplicas = { ...before.at(-1)! };
          for (const a of last.actions) finalReplicas[a.component] = a.replicas;
          expect(finalReplicas).toEqual(replicas);
        }
      }),
      RUNS,
    );
  });

  it('never takes the same action twice in a row: scale-downs and scale-ups alternate, starting with a scale-down', () => {
    fc.assert(
      fc.property(scenario(true), ({ steps, options, replicas }) => {
        const kinds = simulate(steps, options, replicas)
          .decisions.filter((d) => d.actions.length > 0)
          .map((d) => (d.actions.every((a) => a.replicas === 0) ? 'down' : 'up'));
        kinds.forEach((k, i) => expect(k).toBe(i % 2 === 0 ? 'down' : 'up'));
      }),
      RUNS,
    );
  });

  it('the number of scale actions is bounded by the number of qualifying streaks', () => {
    let totalDowns = 0;
    let totalUps = 0;
    fc.assert(
      fc.property(scenario(true), ({ steps, options, replicas }) => {
        const { decisions } = simulate(steps, options, replicas);
        const downs = decisions.filter((d) => d.verdict === 'scaled-down').length;
        const ups = decisions.filter((d) => d.verdict === 'scaled-up').length;
        totalDowns += downs;
        totalUps += ups;
        expect(downs).toBeLessThanOrEqual(streaksAtLeast(steps, qualifiesForDown, options.failureThreshold));
        expect(ups).toBeLessThanOrEqual(streaksAtLeast(steps, qualifiesForUp, options.successThreshold));
        expect(ups).toBeLessThanOrEqual(downs);
      }),
      RUNS,
    );
    // The generators must actually reach both actions, or every property above holds vacuously.
    expect(totalDowns).toBeGreaterThan(RUNS.numRuns / 2);
    expect(totalUps).toBeGreaterThan(RUNS.numRuns / 4);
  });

  it('skipped shoots never act and never count', () => {
    fc.assert(
      fc.property(scenario(true), ({ steps, options, replicas }) => {
        const { decisions } = simulate(steps, options, replicas);
        decisions.forEach((d, i) => {
          if (!skipped(steps[i]!)) return;
          expect(d.actions).toEqual([]);
          expect(d.events).toEqual([]);
          expect(d.state.consecutiveExternalFailures).toBe(0);
          expect(d.state.consecutiveExternalSuccesses).toBe(0);
        });
      }),
      RUNS,
    );
  });

  it('keeps the state valid: schema-clean, counters within thresholds, a hold iff something is remembered', () => {
    fc.assert(
      fc.property(scenario(true), ({ steps, options, replicas }) => {
        for (const d of simulate(steps, options, replicas).decisions) {
          expect(probeStateSchema.safeParse(d.state).success).toBe(true);
          expect(d.state.consecutiveExternalFailures).toBeLessThanOrEqual(options.failureThreshold);
          expect(d.state.consecutiveExternalSuccesses).toBeLessThanOrEqual(options.successThreshold);
          expect(d.state.scaledDown).toBe(Object.keys(d.state.rememberedReplicas).length > 0);
          expect(Object.values(d.state.rememberedReplicas).every((r) => r > 0)).toBe(true);
          expect(d.events.length).toBe(d.actions.length > 0 ? 1 : 0);
        }
      }),
      RUNS,
    );
  });

  it('while held, outside reconciles never bring a held component back up', () => {
    fc.assert(
      fc.property(scenario(true), ({ steps, options, replicas }) => {
        const { decisions, before } = simulate(steps, options, replicas);
        decisions.forEach((d, i) => {
          const previous = i === 0 ? initialProbeState() : decisions[i - 1]!.state;
          if (!previous.scaledDown) return;
          for (const c of Object.keys(previous.rememberedReplicas) as ScalableDependent[])
            expect(before[i]![c]).toBe(0);
        });
      }),
      RUNS,
    );
  });
});
