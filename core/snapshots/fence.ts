import { DEFAULT_OWNER_RECORD_TTL_SECONDS } from '../ownership/owner-records.js';
import { FenceBoundError } from './errors.js';

/** All durations in milliseconds. */
export interface FenceTimings {
  /**
   * How long a seed may still see the old owner record: its own cache TTL plus what a caching resolver
   * on the way may hold (the record's TTL). Default: the check interval (the longest the sidecar's own
   * cache may hold) plus the default owner record TTL.
   */
  readonly dnsCacheTTL?: number;
  /** Default 5 s. */
  readonly ownerCheckInterval?: number;
  /** How long `unknown` keeps serving before it fences. Default 30 s. */
  readonly unknownGrace?: number;
  /** From the decision to fence until no client can write (SIGTERM to exit). Default 10 s, generous against the 6 ms measured. */
  readonly fenceTime?: number;
  /**
   * How long one check may take before it reports `unknown` (resolver timeout x tries). The design's
   * formula leaves it out; a check that starts just before the change and hangs delays the grace by
   * this much, so the bound includes it. Default 0, the design's formula.
   */
  readonly checkTimeout?: number;
}

export const DEFAULT_OWNER_CHECK_INTERVAL_MS = 5_000;
export const DEFAULT_UNKNOWN_GRACE_MS = 30_000;
export const DEFAULT_FENCE_TIME_MS = 10_000;
/** The copy's default wait-for-final timeout (DESIGN section 4). */
export const DEFAULT_WAIT_FOR_FINAL_TIMEOUT_MS = 10 * 60_000;

function duration(value: number | undefined, fallback: number, field: string): number {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v < 0) throw new FenceBoundError(`${field} must be a non-negative number of milliseconds, got ${v}`, { field });
  return v;
}

/**
 * The latest time, after the owner record changed, by which a source that lost ownership has fenced
 * itself: `dnsCacheTTL + ownerCheckInterval + unknownGrace + fenceTime` (+ `checkTimeout`). Whatever the
 * source sees in that time (the new owner, NXDOMAIN, or nothing at all), it has stopped accepting writes.
 */
export function fenceBound(timings: FenceTimings = {}): number {
  const ownerCheckInterval = duration(timings.ownerCheckInterval, DEFAULT_OWNER_CHECK_INTERVAL_MS, 'ownerCheckInterval');
  return (
    duration(timings.dnsCacheTTL, ownerCheckInterval + DEFAULT_OWNER_RECORD_TTL_SECONDS * 1_000, 'dnsCacheTTL') +
    ownerCheckInterval +
    duration(timings.unknownGrace, DEFAULT_UNKNOWN_GRACE_MS, 'unknownGrace') +
    duration(timings.fenceTime, DEFAULT_FENCE_TIME_MS, 'fenceTime') +
    duration(timings.checkTimeout, 0, 'checkTimeout')
  );
}

/**
 * A copy that gives up waiting for the final snapshot before the bound could activate a copy while the
 * source still accepts writes: split brain. Such a configuration is rejected up front.
 */
export function validateWaitForFinalTimeout(options: { waitForFinalTimeout: number; fenceBound: number }): void {
  const { waitForFinalTimeout, fenceBound: bound } = options;
  if (!Number.isFinite(waitForFinalTimeout) || waitForFinalTimeout < 0) {
    throw new FenceBoundError(`waitForFinalTimeout must be a non-negative number of milliseconds, got ${waitForFinalTimeout}`, { field: 'waitForFinalTimeout' });
  }
  if (waitForFinalTimeout < bound) {
    throw new FenceBoundError(
      `waitForFinalTimeout ${waitForFinalTimeout} ms is shorter than the fence bound ${bound} ms: the source might still accept writes when the copy gives up waiting`,
      { field: 'waitForFinalTimeout' },
    );
  }
}

export type ReadyToRestore =
  | { readonly ready: true; readonly reason: 'final-snapshot' | 'fence-bound-elapsed' | 'source-hibernated' }
  | { readonly ready: false; readonly reason: 'waiting-for-fence-bound'; readonly readyAt: number }
  | { readonly ready: false; readonly reason: 'owner-change-unknown' };

export interface ReadyToRestoreInput {
  /** A final full snapshot of the current history was found (`currentFinalSnapshot`, not just any `.final` object) and copied. */
  readonly finalFound: boolean;
  /** Epoch ms at which the orchestrator changed (set or deleted) the owner record. */
  readonly ownerChangedAt: number | undefined;
  /** Epoch ms. */
  readonly now: number;
  /** `fenceBound(...)` in ms. */
  readonly fenceBound: number;
  /** A hibernated shoot has no running etcd: nothing can write, and no final snapshot will ever come. */
  readonly sourceHibernated?: boolean;
}

/**
 * Whether a copy result may be reported ready to restore. A final snapshot proves the source fenced;
 * without one, only the fence bound having passed since the owner change does. With no known owner
 * change time nothing proves it, so the answer is no.
 */
export function readyToRestore(input: ReadyToRestoreInput): ReadyToRestore {
  if (input.finalFound) return { ready: true, reason: 'final-snapshot' };
  if (input.sourceHibernated) return { ready: true, reason: 'source-hibernated' };
  if (input.ownerChangedAt === undefined) return { ready: false, reason: 'owner-change-unknown' };
  const readyAt = input.ownerChangedAt + input.fenceBound;
  return input.now >= readyAt ? { ready: true, reason: 'fence-bound-elapsed' } : { ready: false, reason: 'waiting-for-fence-bound', readyAt };
}
