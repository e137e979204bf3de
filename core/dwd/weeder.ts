import type { RestartCommand } from './commands.js';
import { DEPENDENTS_RESTARTED, type WatchdogEvent } from './events.js';
import { matchesSelector } from './label-selector.js';
import { resolveWeederOptions, type WeederOptions } from './weeder-options.js';
import type { WeederTarget } from './weeder-targets.js';
import {
  CRASH_LOOP_BACK_OFF,
  podIdentity,
  type DependencyAvailability,
  type PodReport,
  type WeederState,
} from './weeder-state.js';

export interface WeederObservation {
  availability: DependencyAvailability;
  pods: readonly PodReport[];
  /** Garden clock, epoch milliseconds. */
  nowMs: number;
}

/**
 * - `unknown`: no news about the dependency; nothing changes.
 * - `unavailable`: the dependency is down; any open recovery is closed.
 * - `first-observation`: available, but never seen down, so this is no recovery (a cold start of
 *   the weeder must not restart the fleet's crash-looping pods for reasons it cannot know).
 * - `recovered`: the round of an unavailable -> available transition.
 * - `watching`: available, inside the watch window of the current recovery.
 * - `idle`: available, no recovery window open.
 */
export type WeederVerdict = 'unknown' | 'unavailable' | 'first-observation' | 'recovered' | 'watching' | 'idle';

export interface WeederDecision {
  state: WeederState;
  /** Restart commands for the seed agent, sorted by pod name. */
  actions: RestartCommand[];
  events: WatchdogEvent[];
  verdict: WeederVerdict;
}

export interface DecideWeederInput {
  state: WeederState;
  observation: WeederObservation;
  target: WeederTarget;
  options?: Partial<WeederOptions>;
}

/**
 * One weeder round for one shoot and one dependency. Restarts only pods that match the target's
 * dependant selector, are in CrashLoopBackOff, are not already being deleted, and have not been
 * restarted in the current recovery; and only on the recovery round or inside its watch window.
 */
export function decideWeeder(input: DecideWeederInput): WeederDecision {
  const options = resolveWeederOptions(input.options);
  const { state, observation, target } = input;

  switch (observation.availability) {
    case 'unknown':
      return { state, actions: [], events: [], verdict: 'unknown' };
    case 'unavailable':
      return {
        state: { ...state, lastKnownAvailability: 'unavailable', recoveredAtMs: null, restartedPods: [] },
        actions: [],
        events: [],
        verdict: 'unavailable',
      };
    case 'available':
      break;
  }

  if (state.lastKnownAvailability === null) {
    return {
      state: { ...state, lastKnownAvailability: 'available' },
      actions: [],
      events: [],
      verdict: 'first-observation',
    };
  }

  const recovering = state.lastKnownAvailability === 'unavailable';
  const current: WeederState = recovering
    ? {
        lastKnownAvailability: 'available',
        recoveryEpoch: state.recoveryEpoch + 1,
        recoveredAtMs: observation.nowMs,
        restartedPods: [],
      }
    : state;
  if (!recovering && !windowOpen(current, observation.nowMs, options)) {
    return { state: current, actions: [], events: [], verdict: 'idle' };
  }

  const victims = crashLoopingDependants(observation.pods, target, new Set(current.restartedPods));
  const verdict: WeederVerdict = recovering ? 'recovered' : 'watching';
  if (victims.length === 0) return { state: current, actions: [], events: [], verdict };

  const actions: RestartCommand[] = victims.map((pod) => ({
    action: 'restart',
    pod: pod.name,
    dependency: target.dependency,
  }));
  return {
    state: { ...current, restartedPods: [...current.restartedPods, ...victims.map(podIdentity)] },
    actions,
    events: [
      {
        type: 'Normal',
        reason: DEPENDENTS_RESTARTED,
        message:
          `${target.dependency} available again (recovery ${String(current.recoveryEpoch)}); ` +
          `restarted crash-looping dependants: ${actions.map((a) => a.pod).join(', ')}`,
        subjects: actions.map((a) => a.pod),
      },
    ],
    verdict,
  };
}

/** A garden clock that went backwards counts as still inside the window rather than closing it early. */
function windowOpen(state: WeederState, nowMs: number, options: WeederOptions): boolean {
  if (state.recoveredAtMs === null) return false;
  return nowMs - state.recoveredAtMs <= options.watchDurationSeconds * 1000;
}

function crashLoopingDependants(
  pods: readonly PodReport[],
  target: WeederTarget,
  restarted: ReadonlySet<string>,
): PodReport[] {
  const seen = new Set<string>();
  const victims: PodReport[] = [];
  for (const pod of pods) {
    const id = podIdentity(pod);
    if (seen.has(id) || restarted.has(id)) continue;
    seen.add(id);
    if (pod.state !== CRASH_LOOP_BACK_OFF || pod.deleting === true) continue;
    if (!matchesSelector(pod.labels, target.dependantSelector)) continue;
    victims.push(pod);
  }
  return victims.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
