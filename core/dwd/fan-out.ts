import { ValidationError } from '../errors.js';
import { requirePositiveFinite } from './validate.js';

/**
 * EventBridge schedules fire at most once a minute, the prober must probe every 10 seconds. One
 * invocation per minute therefore runs several rounds, at these offsets from its start.
 */
export interface ProbeRoundPlanOptions {
  intervalSeconds: number;
  /** The schedule period one invocation covers. */
  windowSeconds: number;
}

/**
 * Offsets in seconds: `0, interval, 2*interval, ...` below `windowSeconds`, e.g. 10 s in 60 s gives
 * `[0, 10, 20, 30, 40, 50]`. The window must be a multiple of the interval, so that the last round of
 * one invocation and the first of the next are one interval apart too: the thresholds count rounds,
 * and uneven spacing would make "3 failures" mean a different outage length each minute.
 */
export function planProbeRounds(options: ProbeRoundPlanOptions): number[] {
  requirePositiveFinite(options.intervalSeconds, 'intervalSeconds');
  requirePositiveFinite(options.windowSeconds, 'windowSeconds');
  const rounds = options.windowSeconds / options.intervalSeconds;
  const count = Math.round(rounds);
  if (count < 1 || Math.abs(rounds - count) > 1e-9) {
    throw new ValidationError(
      `windowSeconds (${String(options.windowSeconds)}) must be a positive multiple of intervalSeconds (${String(options.intervalSeconds)})`,
      { field: 'windowSeconds' },
    );
  }
  // Multiplying instead of summing keeps 0.1-second intervals free of accumulated rounding.
  return Array.from({ length: count }, (_, k) => k * options.intervalSeconds);
}

export interface RoundTiming {
  /** Milliseconds to wait before starting the round; 0 when it is due or overdue. */
  delayMs: number;
  /** True when the next round is already due: running this one would put two probes closer than an interval. */
  missed: boolean;
}

/** When to start the round at `offsetSeconds` of an invocation that started at `invocationStartMs`. */
export function roundTiming(options: {
  invocationStartMs: number;
  offsetSeconds: number;
  intervalSeconds: number;
  nowMs: number;
}): RoundTiming {
  const dueMs = options.invocationStartMs + options.offsetSeconds * 1000;
  return {
    delayMs: Math.max(0, dueMs - options.nowMs),
    missed: options.nowMs >= dueMs + options.intervalSeconds * 1000,
  };
}
