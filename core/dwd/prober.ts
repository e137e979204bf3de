import { SCALE_DOWN_ORDER, SCALE_UP_ORDER } from './components.js';
import type { ScaleCommand } from './commands.js';
import { DEPENDENTS_SCALED_DOWN, DEPENDENTS_SCALED_UP, type WatchdogEvent } from './events.js';
import { resolveProberOptions, type ProberOptions } from './prober-options.js';
import { internalObservedAtMs, isExternalUp, viewInternal, type ProbeRound } from './probe-round.js';
import type { ProbeState, RememberedReplicas } from './probe-state.js';

/**
 * Why the prober did what it did this round; the Lambda logs it and tests assert on it.
 * - `skipped-*`: the shoot is hibernated or migrating; no probe evidence counts.
 * - `both-down` / `internal-unknown`: external down but the internal side is not known to be up, so
 *   the API server itself may be down; scaling down would not help (dependency-watchdog's rule).
 * - `counting-failures` / `counting-successes`: a streak is building but has not reached its threshold.
 * - `internal-predates-outage`: the failure threshold is reached, but the internal "up" was observed
 *   before the external probe began to fail (a silent agent's last word); waits for a fresher one.
 * - `held-down`: dependents are already scaled down and the external side is still down.
 * - `recovering`: dependents are held down and the external side is up, below the success threshold.
 * - `healthy`: nothing is held and the external side is up.
 * - `nothing-to-scale`: the failure threshold is reached but no dependent has replicas to take away.
 * - `scaled-down` / `scaled-up`: this round emits scale commands.
 */
export type ProbeVerdict =
  | 'skipped-hibernated'
  | 'skipped-migrating'
  | 'both-down'
  | 'internal-unknown'
  | 'counting-failures'
  | 'internal-predates-outage'
  | 'held-down'
  | 'recovering'
  | 'counting-successes'
  | 'healthy'
  | 'nothing-to-scale'
  | 'scaled-down'
  | 'scaled-up';

export interface ProbeDecision {
  /** State to store (conditionally) for the next round. */
  state: ProbeState;
  /** Scale commands for the seed agent, in the order they must be applied. */
  actions: ScaleCommand[];
  events: WatchdogEvent[];
  verdict: ProbeVerdict;
}

export interface DecideProbeInput {
  state: ProbeState;
  round: ProbeRound;
  options?: Partial<ProberOptions>;
}

/**
 * One prober round for one shoot. Pure: the caller probes, reads the heartbeat, stores the state and
 * sends the commands. The rules (docs/design.md section 8):
 * - internal up and external down for `failureThreshold` consecutive rounds, with an internal "up" that
 *   the agent observed after the external probe began to fail: scale the dependents to 0 in
 *   {@link SCALE_DOWN_ORDER}, remembering the replicas of those it scaled;
 * - external up for `successThreshold` consecutive rounds while held down: restore exactly the
 *   remembered replicas in reverse order;
 * - external down with internal down, unknown or stale: no action, and the failure streak restarts,
 *   because rounds that do not prove a load-balancer-only outage must not add up to one;
 * - hibernated or migrating: skipped, see {@link skipRound}.
 * Each action happens once: scale-down only when nothing is held, scale-up only when something is.
 */
export function decideProbe(input: DecideProbeInput): ProbeDecision {
  const options = resolveProberOptions(input.options);
  const { state, round } = input;

  if (round.hibernated) return skipRound(state, 'skipped-hibernated');
  if (round.migrating) return skipRound(state, 'skipped-migrating');

  if (isExternalUp(round.external)) {
    const successes = Math.min(state.consecutiveExternalSuccesses + 1, options.successThreshold);
    const counted: ProbeState = {
      ...withoutOutage(state),
      consecutiveExternalFailures: 0,
      consecutiveExternalSuccesses: successes,
    };
    if (!state.scaledDown)
      return noAction(counted, successes >= options.successThreshold ? 'healthy' : 'counting-successes');
    if (successes < options.successThreshold) return noAction(counted, 'recovering');
    return scaleUp(counted, round);
  }

  // The outage began with the first failing probe; rounds where the inside is not known to be up do not end it.
  const downSince = state.externalDownSinceMs ?? round.atMs;
  const internal = viewInternal(round.internal, options);
  if (internal !== 'up') {
    const reset: ProbeState = {
      ...state,
      externalDownSinceMs: downSince,
      consecutiveExternalFailures: 0,
      consecutiveExternalSuccesses: 0,
    };
    return noAction(reset, internal === 'down' ? 'both-down' : 'internal-unknown');
  }

  const failures = Math.min(state.consecutiveExternalFailures + 1, options.failureThreshold);
  const counted: ProbeState = {
    ...state,
    externalDownSinceMs: downSince,
    consecutiveExternalFailures: failures,
    consecutiveExternalSuccesses: 0,
  };
  if (state.scaledDown) return noAction(counted, 'held-down');
  if (failures < options.failureThreshold) return noAction(counted, 'counting-failures');
  // Only an "up" seen after the outage began proves that the load balancer, not the API server, is down.
  if (!(internalObservedAtMs(round)! > downSince)) return noAction(counted, 'internal-predates-outage');
  return scaleDown(counted, round, options);
}

function withoutOutage(state: ProbeState): ProbeState {
  const { externalDownSinceMs: _since, ...rest } = state;
  return rest;
}

/**
 * A hibernated or migrating shoot takes no action, and both streaks restart: probes of a control
 * plane that is being shut down or moved say nothing about its load balancer, and a streak must not
 * span the gap. A hold survives (`scaledDown`, `rememberedReplicas`): the dependents are still at 0
 * because of the watchdog, only it knows their old replicas, and after wake-up or restore on the
 * destination the reconcile guard keeps them down until the external probe succeeds
 * `successThreshold` times. This is what dependency-watchdog does too: it stops the prober, which
 * drops its counters, while the replicas annotation stays on the Deployments.
 */
function skipRound(state: ProbeState, verdict: 'skipped-hibernated' | 'skipped-migrating'): ProbeDecision {
  return noAction(
    { ...withoutOutage(state), consecutiveExternalFailures: 0, consecutiveExternalSuccesses: 0 },
    verdict,
  );
}

function noAction(state: ProbeState, verdict: ProbeVerdict): ProbeDecision {
  return { state, actions: [], events: [], verdict };
}

/**
 * Components already at 0 are neither scaled nor remembered: the watchdog did not take their
 * replicas, so it must not give any back. Components the agent does not report are not deployed.
 */
function scaleDown(state: ProbeState, round: ProbeRound, options: ProberOptions): ProbeDecision {
  const actions: ScaleCommand[] = [];
  const remembered: RememberedReplicas = {};
  for (const component of SCALE_DOWN_ORDER) {
    const current = round.replicas[component];
    if (current === undefined || current === 0) continue;
    actions.push({ action: 'scale', component, replicas: 0 });
    remembered[component] = current;
  }
  // Nothing taken means nothing held: a component that comes up later in this outage is still caught.
  if (actions.length === 0) return noAction(state, 'nothing-to-scale');

  const described = actions.map((a) => `${a.component} (was ${String(remembered[a.component])})`).join(', ');
  return {
    state: { ...state, scaledDown: true, rememberedReplicas: remembered },
    actions,
    events: [
      {
        type: 'Warning',
        reason: DEPENDENTS_SCALED_DOWN,
        message:
          `kube-apiserver unreachable through its load balancer but reachable internally for ` +
          `${String(options.failureThreshold)} consecutive probes; scaled to 0: ${described}`,
        subjects: actions.map((a) => a.component),
      },
    ],
    verdict: 'scaled-down',
  };
}

/**
 * A component someone else already brought back (replicas > 0) is left alone rather than fought
 * over, as dependency-watchdog does. A component the agent no longer reports still gets its command:
 * releasing the hold without restoring a component would leave it at 0 for good.
 */
function scaleUp(state: ProbeState, round: ProbeRound): ProbeDecision {
  const actions: ScaleCommand[] = [];
  for (const component of SCALE_UP_ORDER) {
    const remembered = state.rememberedReplicas[component];
    if (remembered === undefined) continue;
    const current = round.replicas[component];
    if (current !== undefined && current > 0) continue;
    actions.push({ action: 'scale', component, replicas: remembered });
  }
  const released: ProbeState = { ...state, scaledDown: false, rememberedReplicas: {} };
  const events: WatchdogEvent[] =
    actions.length === 0
      ? []
      : [
          {
            type: 'Normal',
            reason: DEPENDENTS_SCALED_UP,
            message: `kube-apiserver reachable through its load balancer again; restored ${actions
              .map((a) => `${a.component} to ${String(a.replicas)}`)
              .join(', ')}`,
            subjects: actions.map((a) => a.component),
          },
        ];
  return { state: released, actions, events, verdict: 'scaled-up' };
}
