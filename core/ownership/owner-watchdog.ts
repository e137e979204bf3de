import { ValidationError } from '../errors.js';
import type { OwnerCheckResult } from './check.js';
import { ownershipTimings, type OwnershipTimings } from './timings.js';

/**
 * The sidecar's owner watchdog (docs/design.md section 4) as a pure state machine: the sidecar feeds it check
 * results and the outcome of the final snapshot, and executes the returned actions in order, each
 * idempotent. Times are milliseconds from a monotonic clock.
 *
 * - `serving`: etcd accepts client writes, the snapshotter runs.
 * - `fenced`: etcd is reachable only on the sidecar's private address; reversible (after an `unknown`
 *   streak outlasted the grace, or before the first check at start-up).
 * - `lost`: ownership is gone; fenced for good. Once a seed has seen `not-owner` the destination may
 *   already be restoring from its final snapshot, so nothing short of an operator (a fresh sidecar
 *   state) brings it back: not even the record naming this seed again.
 */
export type WatchdogMode = 'serving' | 'fenced' | 'lost';

export interface WatchdogState {
  readonly mode: WatchdogMode;
  /** Why it is fenced; undefined while serving. */
  readonly fencedBecause: 'starting' | 'unknown' | 'not-owner' | undefined;
  /** When the current streak of `unknown` began; undefined after a check that resolved. */
  readonly unknownSince: number | undefined;
  /** Checks in the current `unknown` streak, for the retry backoff. */
  readonly unknownChecks: number;
  readonly finalSnapshot: 'none' | 'requested' | 'taken';
  readonly lastResult: OwnerCheckResult | undefined;
}

export type WatchdogAction =
  | { readonly type: 'stop-snapshotter' }
  | { readonly type: 'start-snapshotter' }
  /** SIGTERM etcd and bring it back on the private address only. Must complete before the next action. */
  | { readonly type: 'fence' }
  | { readonly type: 'unfence' }
  /** One full snapshot, marked `.final`, from the fenced etcd. Report back with `recordFinalSnapshot`. */
  | { readonly type: 'take-final-snapshot' };

export interface WatchdogDecision {
  readonly state: WatchdogState;
  /** To execute in this order. Empty means: keep doing what you do. */
  readonly actions: readonly WatchdogAction[];
  /** What the readiness endpoint answers now. */
  readonly readiness: 200 | 503;
  /** When to check next: the interval, sooner while retrying an `unknown` streak. */
  readonly nextCheckIn: number;
}

export type WatchdogOptions = Partial<
  Pick<OwnershipTimings, 'ownerCheckInterval' | 'unknownGrace' | 'initialRetryDelay'>
>;

type ResolvedOptions = Pick<OwnershipTimings, 'ownerCheckInterval' | 'unknownGrace' | 'initialRetryDelay'>;

const resolve = (options: WatchdogOptions): ResolvedOptions => ownershipTimings(options);

/**
 * The state before the first check. By default etcd is not serving yet: a sidecar that (re)starts must
 * not accept writes before it has seen that it owns the shoot. `serving: true` adopts a running etcd.
 */
export function initialWatchdogState(options: { serving?: boolean } = {}): WatchdogState {
  return {
    mode: options.serving ? 'serving' : 'fenced',
    fencedBecause: options.serving ? undefined : 'starting',
    unknownSince: undefined,
    unknownChecks: 0,
    finalSnapshot: 'none',
    lastResult: undefined,
  };
}

const LOSE_OWNERSHIP: readonly WatchdogAction[] = [
  { type: 'stop-snapshotter' },
  { type: 'fence' },
  { type: 'take-final-snapshot' },
];

/** The next state and actions after one owner check. */
export function decideOwnerWatchdog(input: {
  state: WatchdogState;
  result: OwnerCheckResult;
  now: number;
  options?: WatchdogOptions;
}): WatchdogDecision {
  const { state, result, now } = input;
  const options = resolve(input.options ?? {});
  const resolved = { ...state, lastResult: result, unknownSince: undefined, unknownChecks: 0 };

  if (state.mode === 'lost') {
    // Stay fenced whatever the record says now; retry the final snapshot if the last attempt failed.
    const retry = state.finalSnapshot === 'none';
    return decision(
      { ...state, lastResult: result, finalSnapshot: retry ? 'requested' : state.finalSnapshot },
      retry ? [{ type: 'take-final-snapshot' }] : [],
      options.ownerCheckInterval,
    );
  }

  switch (result) {
    case 'not-owner':
      // Fence first, so every write acknowledged before the fence is in the final snapshot.
      return decision(
        { ...resolved, mode: 'lost', fencedBecause: 'not-owner', finalSnapshot: 'requested' },
        LOSE_OWNERSHIP,
        options.ownerCheckInterval,
      );

    case 'owner':
      if (state.mode === 'serving') return decision(resolved, [], options.ownerCheckInterval);
      return decision(
        { ...resolved, mode: 'serving', fencedBecause: undefined },
        [{ type: 'unfence' }, { type: 'start-snapshotter' }],
        options.ownerCheckInterval,
      );

    case 'unknown': {
      const unknownSince = state.unknownSince ?? now;
      const unknownChecks = state.unknownChecks + 1;
      const streak = { ...state, lastResult: result, unknownSince, unknownChecks };
      const retryIn = Math.min(
        options.ownerCheckInterval,
        options.initialRetryDelay * 2 ** Math.min(unknownChecks - 1, 30),
      );
      if (state.mode === 'fenced') return decision(streak, [], retryIn);
      // Clocks are monotonic, but a caller passing an earlier time must not shorten the grace.
      const deadline = unknownSince + options.unknownGrace;
      if (now < deadline) {
        // Keep serving; never sleep past the deadline, so the fence comes on time if DNS stays away.
        return decision(streak, [], Math.max(1, Math.min(retryIn, deadline - now)));
      }
      return decision(
        { ...streak, mode: 'fenced', fencedBecause: 'unknown' },
        [{ type: 'stop-snapshotter' }, { type: 'fence' }],
        retryIn,
      );
    }
  }
}

/** Feeds back the outcome of a `take-final-snapshot` action. A failed one is retried at the next check. */
export function recordFinalSnapshot(input: {
  state: WatchdogState;
  outcome: 'taken' | 'failed';
  options?: WatchdogOptions;
}): WatchdogDecision {
  const options = resolve(input.options ?? {});
  const { state } = input;
  if (state.mode !== 'lost')
    throw new ValidationError(
      `a final snapshot is only taken after losing ownership, but the watchdog is ${state.mode}`,
      { field: 'state' },
    );
  const finalSnapshot = state.finalSnapshot === 'taken' || input.outcome === 'taken' ? 'taken' : 'none';
  return decision({ ...state, finalSnapshot }, [], options.ownerCheckInterval);
}

function decision(state: WatchdogState, actions: readonly WatchdogAction[], nextCheckIn: number): WatchdogDecision {
  return { state, actions, readiness: state.mode === 'serving' ? 200 : 503, nextCheckIn };
}
