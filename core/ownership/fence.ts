import { FenceBoundError } from './errors.js';
import { ownershipTimings, type OwnershipTimings } from './timings.js';

/** The copy's default wait-for-final timeout (docs/design.md section 4). */
export const DEFAULT_WAIT_FOR_FINAL_TIMEOUT_MS = 10 * 60_000;

/**
 * The latest time, after the owner record changed, by which a source that lost ownership has fenced
 * itself: `dnsCacheTTL + ownerCheckInterval + checkTimeout + unknownGrace + fenceTime`. The design's formula
 * leaves the check timeout out; a check that starts just before the change sees the old value from its
 * cache, and the next one may hang for the whole timeout before it counts as `unknown` and the grace
 * begins, so the bound includes it. Whatever the source sees in that time (the new owner, NXDOMAIN, or
 * nothing at all), it has stopped accepting writes.
 */
export function fenceBound(timings: Partial<OwnershipTimings> = {}): number {
  const t = ownershipTimings(timings);
  return t.dnsCacheTTL + t.ownerCheckInterval + t.checkTimeout + t.unknownGrace + t.fenceTime;
}

/**
 * How long a copy waits for the source's final snapshot: `wait` when given, else 10 minutes or the fence
 * bound when that is longer; a wait shorter than the bound is refused.
 */
export function waitForFinalTimeout(options: {
  timings?: Partial<OwnershipTimings> | undefined;
  wait?: number | undefined;
}): { waitForFinalTimeout: number; fenceBound: number } {
  const bound = fenceBound(options.timings);
  const wait = options.wait ?? Math.max(DEFAULT_WAIT_FOR_FINAL_TIMEOUT_MS, bound);
  validateWaitForFinalTimeout({ waitForFinalTimeout: wait, fenceBound: bound });
  return { waitForFinalTimeout: wait, fenceBound: bound };
}

/**
 * A copy that gives up waiting for the final snapshot before the bound could activate a copy while the
 * source still accepts writes: split brain. Such a configuration is rejected up front.
 */
export function validateWaitForFinalTimeout(options: { waitForFinalTimeout: number; fenceBound: number }): void {
  const { waitForFinalTimeout, fenceBound: bound } = options;
  if (!Number.isFinite(waitForFinalTimeout) || waitForFinalTimeout < 0) {
    throw new FenceBoundError(
      `waitForFinalTimeout must be a non-negative number of milliseconds, got ${waitForFinalTimeout}`,
      { field: 'waitForFinalTimeout' },
    );
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
  /** A final snapshot (full, or a delta last) of the current history was found (`currentFinalSnapshot`, not just any `.final` object) and copied. */
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
  return input.now >= readyAt
    ? { ready: true, reason: 'fence-bound-elapsed' }
    : { ready: false, reason: 'waiting-for-fence-bound', readyAt };
}
