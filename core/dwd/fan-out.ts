import { ValidationError } from '../errors.js';
import { requireNonNegativeInteger, requirePositiveFinite, requirePositiveInteger } from './validate.js';

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

/** A half-open index range `[start, end)` into the list of shoots. */
export interface BatchRange {
  start: number;
  end: number;
}

/**
 * Splits `total` items into the fewest batches of at most `maxBatchSize`, balanced so that sizes
 * differ by at most one (the slowest worker sets the round's wall time).
 */
export function planBatches(options: { total: number; maxBatchSize: number }): BatchRange[] {
  requireNonNegativeInteger(options.total, 'total');
  requirePositiveInteger(options.maxBatchSize, 'maxBatchSize');
  const count = Math.ceil(options.total / options.maxBatchSize);
  const ranges: BatchRange[] = [];
  const base = Math.floor(options.total / Math.max(count, 1));
  const bigger = options.total - base * count;
  let start = 0;
  for (let i = 0; i < count; i += 1) {
    const size = base + (i < bigger ? 1 : 0);
    ranges.push({ start, end: start + size });
    start += size;
  }
  return ranges;
}

export function splitIntoBatches<T>(items: readonly T[], options: { maxBatchSize: number }): T[][] {
  return planBatches({ total: items.length, maxBatchSize: options.maxBatchSize }).map((r) => items.slice(r.start, r.end));
}

export interface FanOutPlanOptions {
  shootCount: number;
  /** Probes one worker invocation runs at the same time (its HTTP concurrency limit). */
  concurrencyPerWorker: number;
  /** Upper bound of one external probe; a probe that takes longer is a timeout. */
  probeTimeoutSeconds: number;
  /** Seconds between two rounds; a worker's round must fit in it even when every probe times out. */
  intervalSeconds: number;
  /** Optional cap below the computed capacity, to keep workers small. */
  maxShootsPerWorker?: number;
}

export interface FanOutPlan {
  /** Shoots one worker can probe within an interval if every probe times out. */
  capacityPerWorker: number;
  batches: BatchRange[];
  /** Worst-case seconds of one round for the largest batch. */
  worstCaseRoundSeconds: number;
}

/**
 * Sizes worker batches so a round never overruns the interval: a worker with concurrency C and probe
 * timeout T finishes at most C * floor(interval / T) probes per interval in the worst case.
 */
export function planFanOut(options: FanOutPlanOptions): FanOutPlan {
  requireNonNegativeInteger(options.shootCount, 'shootCount');
  requirePositiveInteger(options.concurrencyPerWorker, 'concurrencyPerWorker');
  requirePositiveFinite(options.probeTimeoutSeconds, 'probeTimeoutSeconds');
  requirePositiveFinite(options.intervalSeconds, 'intervalSeconds');
  const waves = Math.floor(options.intervalSeconds / options.probeTimeoutSeconds);
  if (waves < 1) {
    throw new ValidationError('probeTimeoutSeconds must not exceed intervalSeconds', { field: 'probeTimeoutSeconds' });
  }
  let capacityPerWorker = options.concurrencyPerWorker * waves;
  if (options.maxShootsPerWorker !== undefined) {
    requirePositiveInteger(options.maxShootsPerWorker, 'maxShootsPerWorker');
    capacityPerWorker = Math.min(capacityPerWorker, options.maxShootsPerWorker);
  }
  const batches = planBatches({ total: options.shootCount, maxBatchSize: capacityPerWorker });
  const largest = batches.reduce((max, b) => Math.max(max, b.end - b.start), 0);
  const worstCaseRoundSeconds = Math.ceil(largest / options.concurrencyPerWorker) * options.probeTimeoutSeconds;
  return { capacityPerWorker, batches, worstCaseRoundSeconds };
}
