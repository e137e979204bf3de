import { withoutUndefined } from '../objects.js';
import { requirePositiveFinite, requirePositiveInteger } from './validate.js';

/** Tuning of the prober. Defaults follow docs/design.md section 8 and dependency-watchdog's own defaults. */
export interface ProberOptions {
  /** Consecutive (external down, internal up) rounds before the dependents are scaled down. */
  failureThreshold: number;
  /** Consecutive external successes before held-down dependents are restored. */
  successThreshold: number;
  /** Seconds between two probes of the same shoot. */
  probeIntervalSeconds: number;
  /**
   * Oldest internal result (from the seed agent's heartbeat) that still counts. Older ones count as
   * unknown: a silent agent says nothing about the API server, and acting on its last word would
   * scale down on stale evidence.
   */
  internalMaxAgeSeconds: number;
}

export const DEFAULT_FAILURE_THRESHOLD = 3;
export const DEFAULT_SUCCESS_THRESHOLD = 2;
export const DEFAULT_PROBE_INTERVAL_SECONDS = 10;
/** Three probe intervals: one missed heartbeat is tolerated, a silent agent is not. */
export const DEFAULT_INTERNAL_MAX_AGE_SECONDS = 3 * DEFAULT_PROBE_INTERVAL_SECONDS;

export const DEFAULT_PROBER_OPTIONS: Readonly<ProberOptions> = Object.freeze({
  failureThreshold: DEFAULT_FAILURE_THRESHOLD,
  successThreshold: DEFAULT_SUCCESS_THRESHOLD,
  probeIntervalSeconds: DEFAULT_PROBE_INTERVAL_SECONDS,
  internalMaxAgeSeconds: DEFAULT_INTERNAL_MAX_AGE_SECONDS,
});

/** Merges defaults with overrides and rejects values that would make the rules meaningless. */
export function resolveProberOptions(overrides: Partial<ProberOptions> = {}): ProberOptions {
  const options: ProberOptions = { ...DEFAULT_PROBER_OPTIONS, ...withoutUndefined(overrides) };
  requirePositiveInteger(options.failureThreshold, 'failureThreshold');
  requirePositiveInteger(options.successThreshold, 'successThreshold');
  requirePositiveFinite(options.probeIntervalSeconds, 'probeIntervalSeconds');
  requirePositiveFinite(options.internalMaxAgeSeconds, 'internalMaxAgeSeconds');
  return options;
}
