import { describe, expect, it } from 'vitest';
import {
  CLUSTER_AUTOSCALER,
  DEPENDENTS_SCALED_DOWN,
  DEPENDENTS_SCALED_UP,
  KUBE_CONTROLLER_MANAGER,
  MACHINE_CONTROLLER_MANAGER,
  decideProbe,
  probeStateSchema,
  type ProbeRound,
  type ProbeState,
  type ProbeVerdict,
} from '../../../core/dwd/index.js';
import { lbDown, round, state, TYPICAL_REPLICAS } from './builders.js';

const HELD: ProbeState = state({
  scaledDown: true,
  rememberedReplicas: { ...TYPICAL_REPLICAS },
});

/** Runs rounds in order from `start`, returning every decision. */
function run(start: ProbeState, rounds: ProbeRound[], options = {}) {
  let current = start;
  return rounds.map((r) => {
    const decision = decideProbe({ state: current, round: r, options });
    current = decision.state;
    return decision;
  });
}

describe('decideProbe: one round', () => {
  it.each<{
    name: string;
    given: ProbeState;
    round: ProbeRound;
    verdict: ProbeVerdict;
    failures: number;
    successes: number;
  }>([
    {
      name: 'first LB failure starts counting',
      given: state(),
      round: lbDown(),
      verdict: 'counting-failures',
      failures: 1,
      successes: 0,
    },
    {
      name: 'timeout counts as a failure',
      given: state(),
      round: lbDown({ external: 'timeout' }),
      verdict: 'counting-failures',
      failures: 1,
      successes: 0,
    },
    {
      name: 'failure resets the success streak',
      given: state({ consecutiveExternalSuccesses: 2 }),
      round: lbDown(),
      verdict: 'counting-failures',
      failures: 1,
      successes: 0,
    },
    {
      name: 'both down: no action, streak restarts',
      given: state({ consecutiveExternalFailures: 2 }),
      round: lbDown({ internal: { result: 'failure', ageSeconds: 1 } }),
      verdict: 'both-down',
      failures: 0,
      successes: 0,
    },
    {
      name: 'internal unknown: no action, streak restarts',
      given: state({ consecutiveExternalFailures: 2 }),
      round: lbDown({ internal: { result: 'unknown', ageSeconds: 1 } }),
      verdict: 'internal-unknown',
      failures: 0,
      successes: 0,
    },
    {
      name: 'internal missing counts as unknown',
      given: state({ consecutiveExternalFailures: 2 }),
      round: lbDown({ internal: undefined }),
      verdict: 'internal-unknown',
      failures: 0,
      successes: 0,
    },
    {
      name: 'internal stale counts as unknown',
      given: state({ consecutiveExternalFailures: 2 }),
      round: lbDown({ internal: { result: 'success', ageSeconds: 31 } }),
      verdict: 'internal-unknown',
      failures: 0,
      successes: 0,
    },
    {
      name: 'internal exactly at max age is fresh',
      given: state({ consecutiveExternalFailures: 2 }),
      round: lbDown({ internal: { result: 'success', ageSeconds: 30 } }),
      verdict: 'scaled-down',
      failures: 3,
      successes: 0,
    },
    {
      name: 'internal from a clock ahead of ours is fresh',
      given: state({ consecutiveExternalFailures: 2 }),
      round: lbDown({ internal: { result: 'success', ageSeconds: -5 } }),
      verdict: 'scaled-down',
      failures: 3,
      successes: 0,
    },
    {
      name: 'internal age NaN counts as unknown',
      given: state({ consecutiveExternalFailures: 2 }),
      round: lbDown({ internal: { result: 'success', ageSeconds: Number.NaN } }),
      verdict: 'internal-unknown',
      failures: 0,
      successes: 0,
    },
    {
      name: 'success while nothing held counts',
      given: state(),
      round: round(),
      verdict: 'counting-successes',
      failures: 0,
      successes: 1,
    },
    {
      name: 'success resets the failure streak',
      given: state({ consecutiveExternalFailures: 2 }),
      round: round(),
      verdict: 'counting-successes',
      failures: 0,
      successes: 1,
    },
    {
      name: 'successes saturate at the threshold',
      given: state({ consecutiveExternalSuccesses: 2 }),
      round: round(),
      verdict: 'healthy',
      failures: 0,
      successes: 2,
    },
    {
      name: 'external up with internal unknown still counts toward recovery',
      given: HELD,
      round: round({ internal: undefined }),
      verdict: 'recovering',
      failures: 0,
      successes: 1,
    },
    {
      name: 'held and LB still down',
      given: { ...HELD, consecutiveExternalFailures: 3 },
      round: lbDown(),
      verdict: 'held-down',
      failures: 3,
      successes: 0,
    },
    {
      name: 'held and both down keeps the hold',
      given: HELD,
      round: lbDown({ internal: { result: 'failure', ageSeconds: 0 } }),
      verdict: 'both-down',
      failures: 0,
      successes: 0,
    },
    {
      name: 'hibernated is skipped',
      given: state({ consecutiveExternalFailures: 2 }),
      round: lbDown({ hibernated: true }),
      verdict: 'skipped-hibernated',
      failures: 0,
      successes: 0,
    },
    {
      name: 'migrating is skipped',
      given: state({ consecutiveExternalFailures: 2 }),
      round: lbDown({ migrating: true }),
      verdict: 'skipped-migrating',
      failures: 0,
      successes: 0,
    },
    {
      name: 'hibernated wins over migrating',
      given: state(),
      round: round({ hibernated: true, migrating: true }),
      verdict: 'skipped-hibernated',
      failures: 0,
      successes: 0,
    },
  ])('$name', ({ given, round: r, verdict, failures, successes }) => {
    // Act
    const decision = decideProbe({ state: given, round: r });

    // Assess
    expect(decision.verdict).toBe(verdict);
    expect(decision.state.consecutiveExternalFailures).toBe(failures);
    expect(decision.state.consecutiveExternalSuccesses).toBe(successes);
    if (verdict !== 'scaled-down') {
      expect(decision.actions).toEqual([]);
      expect(decision.events).toEqual([]);
    }
  });

  it.each([
    { name: 'hibernated', round: lbDown({ hibernated: true }) },
    { name: 'migrating', round: lbDown({ migrating: true }) },
    { name: 'both down', round: lbDown({ internal: { result: 'failure', ageSeconds: 0 } }) },
  ])('keeps the hold and its remembered replicas when $name', ({ round: r }) => {
    const decision = decideProbe({ state: HELD, round: r });
    expect(decision.state.scaledDown).toBe(true);
    expect(decision.state.rememberedReplicas).toEqual(TYPICAL_REPLICAS);
  });
});

describe('decideProbe: scale-down', () => {
  it('scales kube-controller-manager, machine-controller-manager, cluster-autoscaler to 0 in that order on the third round', () => {
    // Act
    const rounds = [lbDown(), lbDown(), lbDown()];
    const decisions = run(state(), rounds);

    // Assess
    expect(decisions.map((d) => d.verdict)).toEqual(['counting-failures', 'counting-failures', 'scaled-down']);
    const last = decisions[2]!;
    expect(last.actions).toEqual([
      { action: 'scale', component: KUBE_CONTROLLER_MANAGER, replicas: 0 },
      { action: 'scale', component: MACHINE_CONTROLLER_MANAGER, replicas: 0 },
      { action: 'scale', component: CLUSTER_AUTOSCALER, replicas: 0 },
    ]);
    expect(last.state).toEqual({ ...HELD, consecutiveExternalFailures: 3, externalDownSinceMs: rounds[0]!.atMs });
    expect(last.events).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: DEPENDENTS_SCALED_DOWN,
        subjects: [KUBE_CONTROLLER_MANAGER, MACHINE_CONTROLLER_MANAGER, CLUSTER_AUTOSCALER],
      }),
    ]);
  });

  it.each([
    { failureThreshold: 2, rounds: 2 },
    { failureThreshold: 5, rounds: 5 },
  ])('honours failureThreshold $failureThreshold', ({ failureThreshold, rounds }) => {
    const decisions = run(
      state(),
      Array.from({ length: rounds }, () => lbDown()),
      { failureThreshold },
    );
    expect(decisions.map((d) => d.verdict).indexOf('scaled-down')).toBe(rounds - 1);
  });

  it('with failureThreshold 1 still waits for an internal "up" observed after the first failing probe', () => {
    // The internal result of the first round (1 s old) was taken before the probe that began the outage.
    const decisions = run(state(), [lbDown(), lbDown()], { failureThreshold: 1 });
    expect(decisions.map((d) => d.verdict)).toEqual(['internal-predates-outage', 'scaled-down']);
  });
});

describe('decideProbe: an internal "up" from before the outage (a frozen agent)', () => {
  it('never scales down on the last heartbeat of an agent that went silent when the external probe began to fail', () => {
    // Prepare: the agent took its last internal result just before the outage; rounds come 10 s apart and
    // the result ages with them, staying under internalMaxAgeSeconds (30 s) for three rounds.
    const first = lbDown();
    const observedAt = first.atMs - 2_000;
    const later = [lbDown(), lbDown()];
    const rounds = [first, ...later].map((r) => ({
      ...r,
      internal: { result: 'success' as const, ageSeconds: (r.atMs - observedAt) / 1_000 },
    }));

    // Act
    const decisions = run(state(), rounds);

    // Assess: the streak reaches the threshold, but nothing is scaled: the "up" predates the outage.
    expect(rounds.map((r) => r.internal.ageSeconds)).toEqual([2, 12, 22]);
    expect(decisions.map((d) => d.verdict)).toEqual([
      'counting-failures',
      'counting-failures',
      'internal-predates-outage',
    ]);
    expect(decisions.flatMap((d) => d.actions)).toEqual([]);
    expect(decisions[2]!.state).toMatchObject({
      consecutiveExternalFailures: 3,
      externalDownSinceMs: first.atMs,
      scaledDown: false,
    });
  });

  it('scales down on the first fresh "up" once the agent reports again, the outage still going on', () => {
    const stale = lbDown();
    const decisions = run(state(), [
      { ...stale, internal: { result: 'success', ageSeconds: 5 } },
      lbDown({ internal: { result: 'success', ageSeconds: 15 } }),
      lbDown({ internal: { result: 'success', ageSeconds: 25 } }),
      lbDown({ internal: { result: 'success', ageSeconds: 1 } }),
    ]);
    expect(decisions.map((d) => d.verdict)).toEqual([
      'counting-failures',
      'counting-failures',
      'internal-predates-outage',
      'scaled-down',
    ]);
  });

  it("keeps the outage's start through rounds whose internal side is unknown", () => {
    const first = lbDown({ internal: undefined });
    const decisions = run(state(), [first, lbDown({ internal: { result: 'unknown', ageSeconds: 1 } }), lbDown()]);
    expect(decisions.map((d) => d.verdict)).toEqual(['internal-unknown', 'internal-unknown', 'counting-failures']);
    expect(decisions[2]!.state.externalDownSinceMs).toBe(first.atMs);
  });

  it.each<{ name: string; ending: ProbeRound }>([
    { name: 'an external success', ending: round() },
    { name: 'a hibernated round', ending: lbDown({ hibernated: true }) },
    { name: 'a migrating round', ending: lbDown({ migrating: true }) },
  ])('ends the outage on $name', ({ ending }) => {
    const decisions = run(state(), [lbDown(), ending]);
    expect(decisions[0]!.state.externalDownSinceMs).toBeDefined();
    expect(decisions[1]!.state.externalDownSinceMs).toBeUndefined();
  });

  it.each([
    {
      name: 'skips and forgets components already at 0',
      replicas: { [KUBE_CONTROLLER_MANAGER]: 1, [MACHINE_CONTROLLER_MANAGER]: 0, [CLUSTER_AUTOSCALER]: 2 },
      actions: [KUBE_CONTROLLER_MANAGER, CLUSTER_AUTOSCALER],
      remembered: { [KUBE_CONTROLLER_MANAGER]: 1, [CLUSTER_AUTOSCALER]: 2 },
    },
    {
      name: 'skips components that are not deployed',
      replicas: { [KUBE_CONTROLLER_MANAGER]: 3, [MACHINE_CONTROLLER_MANAGER]: 2 },
      actions: [KUBE_CONTROLLER_MANAGER, MACHINE_CONTROLLER_MANAGER],
      remembered: { [KUBE_CONTROLLER_MANAGER]: 3, [MACHINE_CONTROLLER_MANAGER]: 2 },
    },
  ])('$name', ({ replicas, actions, remembered }) => {
    const decision = decideProbe({ state: state({ consecutiveExternalFailures: 2 }), round: lbDown({ replicas }) });
    expect(decision.actions.map((a) => a.component)).toEqual(actions);
    expect(decision.state.rememberedReplicas).toEqual(remembered);
  });

  it('holds nothing when every dependent is already at 0, and catches one that comes up later in the outage', () => {
    const zero = { [KUBE_CONTROLLER_MANAGER]: 0, [MACHINE_CONTROLLER_MANAGER]: 0, [CLUSTER_AUTOSCALER]: 0 };
    const decisions = run(state(), [
      lbDown({ replicas: zero }),
      lbDown({ replicas: zero }),
      lbDown({ replicas: zero }),
      lbDown({ replicas: { ...zero, [KUBE_CONTROLLER_MANAGER]: 1 } }),
    ]);
    expect(decisions.map((d) => d.verdict)).toEqual([
      'counting-failures',
      'counting-failures',
      'nothing-to-scale',
      'scaled-down',
    ]);
    expect(decisions[2]!.state.scaledDown).toBe(false);
    expect(decisions[2]!.events).toEqual([]);
    expect(decisions[3]!.state.rememberedReplicas).toEqual({ [KUBE_CONTROLLER_MANAGER]: 1 });
  });

  it('never scales down twice while held, and does not overwrite the remembered replicas with 0', () => {
    const atZero = { [KUBE_CONTROLLER_MANAGER]: 0, [MACHINE_CONTROLLER_MANAGER]: 0, [CLUSTER_AUTOSCALER]: 0 };
    const decisions = run(
      HELD,
      Array.from({ length: 10 }, () => lbDown({ replicas: atZero })),
    );
    expect(decisions.every((d) => d.actions.length === 0 && d.verdict === 'held-down')).toBe(true);
    expect(decisions.at(-1)!.state.rememberedReplicas).toEqual(TYPICAL_REPLICAS);
  });

  it.each([
    { name: 'a success', interruption: round() },
    { name: 'internal down', interruption: lbDown({ internal: { result: 'failure', ageSeconds: 0 } }) },
    { name: 'internal stale', interruption: lbDown({ internal: { result: 'success', ageSeconds: 3600 } }) },
    { name: 'hibernation', interruption: lbDown({ hibernated: true }) },
    { name: 'migration', interruption: lbDown({ migrating: true }) },
  ])('restarts the failure streak after $name', ({ interruption }) => {
    const decisions = run(state(), [lbDown(), lbDown(), interruption, lbDown(), lbDown()]);
    expect(decisions.every((d) => d.actions.length === 0)).toBe(true);
  });
});

describe('decideProbe: scale-up', () => {
  it('restores exactly the remembered replicas in reverse order after two successes', () => {
    const atZero = { [KUBE_CONTROLLER_MANAGER]: 0, [MACHINE_CONTROLLER_MANAGER]: 0, [CLUSTER_AUTOSCALER]: 0 };
    const decisions = run(HELD, [round({ replicas: atZero }), round({ replicas: atZero })]);
    expect(decisions.map((d) => d.verdict)).toEqual(['recovering', 'scaled-up']);
    const last = decisions[1]!;
    expect(last.actions).toEqual([
      { action: 'scale', component: CLUSTER_AUTOSCALER, replicas: 3 },
      { action: 'scale', component: MACHINE_CONTROLLER_MANAGER, replicas: 1 },
      { action: 'scale', component: KUBE_CONTROLLER_MANAGER, replicas: 2 },
    ]);
    expect(last.state).toEqual(state({ consecutiveExternalSuccesses: 2 }));
    expect(last.events).toEqual([
      expect.objectContaining({
        type: 'Normal',
        reason: DEPENDENTS_SCALED_UP,
        subjects: [CLUSTER_AUTOSCALER, MACHINE_CONTROLLER_MANAGER, KUBE_CONTROLLER_MANAGER],
      }),
    ]);
  });

  it('restores only what it took', () => {
    const held = state({
      scaledDown: true,
      consecutiveExternalSuccesses: 1,
      rememberedReplicas: { [MACHINE_CONTROLLER_MANAGER]: 4 },
    });
    const decision = decideProbe({
      state: held,
      round: round({ replicas: { [KUBE_CONTROLLER_MANAGER]: 0, [MACHINE_CONTROLLER_MANAGER]: 0 } }),
    });
    expect(decision.actions).toEqual([{ action: 'scale', component: MACHINE_CONTROLLER_MANAGER, replicas: 4 }]);
  });

  it('leaves a component someone else already brought back, and still releases the hold', () => {
    const held = { ...HELD, consecutiveExternalSuccesses: 1 };
    const decision = decideProbe({
      state: held,
      round: round({
        replicas: { [KUBE_CONTROLLER_MANAGER]: 5, [MACHINE_CONTROLLER_MANAGER]: 0, [CLUSTER_AUTOSCALER]: 0 },
      }),
    });
    expect(decision.actions.map((a) => a.component)).toEqual([CLUSTER_AUTOSCALER, MACHINE_CONTROLLER_MANAGER]);
    expect(decision.state.scaledDown).toBe(false);
  });

  it('emits no event when there is nothing left to restore', () => {
    const held = { ...HELD, consecutiveExternalSuccesses: 1 };
    const decision = decideProbe({ state: held, round: round() });
    expect(decision).toMatchObject({ verdict: 'scaled-up', actions: [], events: [] });
    expect(decision.state.scaledDown).toBe(false);
  });

  it('restores a component the agent no longer reports rather than losing it', () => {
    const held = { ...HELD, consecutiveExternalSuccesses: 1 };
    const decision = decideProbe({ state: held, round: round({ replicas: {} }) });
    expect(decision.actions).toHaveLength(3);
  });

  it('never scales up twice', () => {
    const decisions = run(
      HELD,
      Array.from({ length: 10 }, () => round()),
    );
    expect(decisions.filter((d) => d.verdict === 'scaled-up')).toHaveLength(1);
  });

  it.each([
    { name: 'hibernated', round: round({ hibernated: true }) },
    { name: 'migrating', round: round({ migrating: true }) },
  ])('does not restore while $name, and restores after successThreshold fresh successes', ({ round: skipped }) => {
    const decisions = run(HELD, [round(), skipped, skipped, round(), round()]);
    expect(decisions.map((d) => d.verdict)).toEqual([
      'recovering',
      skipped.hibernated ? 'skipped-hibernated' : 'skipped-migrating',
      skipped.hibernated ? 'skipped-hibernated' : 'skipped-migrating',
      'recovering',
      'scaled-up',
    ]);
  });
});

describe('decideProbe: flapping', () => {
  it.each([
    { name: 'LB down/up alternating', pattern: ['down', 'up'] },
    { name: 'two down, one up', pattern: ['down', 'down', 'up'] },
    { name: 'LB down, both down alternating', pattern: ['down', 'both'] },
  ])('takes no action on $name', ({ pattern }) => {
    const rounds = Array.from({ length: 60 }, (_, i) => {
      const kind = pattern[i % pattern.length];
      if (kind === 'up') return round();
      if (kind === 'both') return lbDown({ internal: { result: 'failure', ageSeconds: 0 } });
      return lbDown();
    });
    expect(run(state(), rounds).every((d) => d.actions.length === 0)).toBe(true);
  });

  it('once held, one success between failures does not restore', () => {
    const rounds = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? round() : lbDown()));
    const decisions = run(HELD, rounds);
    expect(decisions.every((d) => d.actions.length === 0)).toBe(true);
    expect(decisions.at(-1)!.state.scaledDown).toBe(true);
  });
});

describe('decideProbe: state', () => {
  it('produces states the store schema accepts', () => {
    const decisions = run(state(), [lbDown(), lbDown(), lbDown(), round(), round(), round({ hibernated: true })]);
    for (const d of decisions) expect(probeStateSchema.safeParse(d.state).success).toBe(true);
  });

  it('does not mutate its input', () => {
    const given = structuredClone(HELD);
    const r = round();
    decideProbe({ state: given, round: r, options: { successThreshold: 1 } });
    expect(given).toEqual(HELD);
  });

  it('rejects remembered replicas without a hold, accepts a hold with nothing remembered', () => {
    expect(
      probeStateSchema.safeParse({ ...state(), rememberedReplicas: { [KUBE_CONTROLLER_MANAGER]: 1 } }).success,
    ).toBe(false);
    expect(probeStateSchema.safeParse({ ...state(), scaledDown: true }).success).toBe(true);
  });
});
