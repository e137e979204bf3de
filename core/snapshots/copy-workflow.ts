import { ValidationError } from '../errors.js';
import { CopyPlanTooLargeError, CopyVerificationError, NoSnapshotBeforeTimeoutError } from './copy-errors.js';
import type { CopyBatchItem, CopyBatchResult } from './copy-batch.js';
import { planCopy } from './copy-plan.js';
import { NoFullSnapshotError } from './errors.js';
import { FenceBoundError } from '../ownership/errors.js';
import { readyToRestore, waitForFinalTimeout } from '../ownership/fence.js';
import type { OwnershipTimings } from '../ownership/timings.js';
import { currentFinalSnapshot, latestFullSnapshot, latestSnapshot } from './lookup.js';
import { snapshotPrefix } from './name.js';
import { planRestore } from './restore-plan.js';
import type { SnapshotStore } from './store.js';

/**
 * The steps of the copy-snapshots workflow (docs/design.md section 4), one function per state-machine task:
 * validate → find the final snapshot (polled until a deadline) → plan batches → copy batches (see
 * `copyBatch`) → verify → summarise. Each step is a pure function of its input, a store and the clock,
 * so that Step Functions may retry any of them.
 */

export interface CopyRequest {
  readonly technicalID: string;
  readonly sourceBucket: string;
  readonly destinationBucket: string;
  /** Copy every snapshot, not only what the restore needs. */
  readonly all?: boolean;
  /** How long to wait for a final snapshot, ms. Default 10 min; never shorter than the fence bound. */
  readonly waitForFinalTimeoutMs?: number;
  /**
   * Epoch ms from which the copy proceeds without the final snapshot (`finalWait`: the migration decides it
   * from the source's bounds); replaces `waitForFinalTimeoutMs`. Needs `ownerChangedAt`, and is refused before
   * the fence bound has passed since it.
   */
  readonly proceedWithoutFinalAt?: number;
  /** Seconds between listings while waiting. Default 1 (`DEFAULT_POLL_INTERVAL_SECONDS`). */
  readonly pollIntervalSeconds?: number;
  readonly fenceTimings?: Partial<OwnershipTimings>;
  /** Epoch ms at which the orchestrator changed (set or deleted) the owner record. */
  readonly ownerChangedAt?: number;
  /** How far the seeds' clocks may lag the garden's, ms; older final snapshots are not this migration's. Default 30 s. */
  readonly clockSkewMs?: number;
  /** A hibernated shoot has no sidecar: no final snapshot will come, so there is no wait. */
  readonly sourceHibernated?: boolean;
  readonly expectedLastRevision?: number;
  /** Objects per copy task. Default 16. */
  readonly batchSize?: number;
  /** Objects above this size are copied in parts (UploadPartCopy). Default 64 MiB. */
  readonly multipartThresholdBytes?: number;
  /**
   * A pre-copy (docs/design.md section 5): before the owner change, copy what the restore needs now, without
   * waiting for a final snapshot and without the fence-bound gate. Nothing serves from it: the destination
   * only restores ahead from it, unserved, and the copy after the owner change copies and gates again.
   */
  readonly precopy?: boolean;
}

export interface CopyConfig {
  readonly technicalID: string;
  readonly sourceBucket: string;
  readonly destinationBucket: string;
  readonly all: boolean;
  readonly waitForFinalTimeoutMs: number;
  readonly pollIntervalSeconds: number;
  readonly fenceBoundMs: number;
  readonly ownerChangedAt: number | null;
  /** Unix seconds: final snapshots created before this belong to an earlier migration. */
  readonly notBefore: number | null;
  readonly sourceHibernated: boolean;
  readonly expectedLastRevision: number | null;
  readonly batchSize: number;
  readonly multipartThresholdBytes: number | null;
  readonly startedAt: number;
  /** Epoch ms after which the copy stops waiting for a final snapshot (a pre-copy: at once). */
  readonly deadline: number;
  readonly precopy: boolean;
}

/**
 * The Wait between two calls that watch for the final snapshot (`watchForFinalSnapshot`, which looks
 * several times a second itself). A live source's final snapshot is in its bucket about a second after
 * the owner change, and every second the copy waits beyond that is downtime of the bad path
 * (bench:downtime: at 10 s between listings the copy's wait was three quarters of the window).
 */
export const DEFAULT_POLL_INTERVAL_SECONDS = 1;
export const DEFAULT_COPY_BATCH_SIZE = 16;
export const DEFAULT_CLOCK_SKEW_MS = 30_000;
/** A Step Functions payload holds 256 KiB; at about 60 bytes a planned object this keeps well below. */
export const MAX_PLANNED_OBJECTS = 3_000;

/** Fills in defaults and rejects a configuration that could activate a copy before the source fenced. */
export function validateCopyRequest(request: CopyRequest, now: number): CopyConfig {
  snapshotPrefix(request.technicalID);
  if (request.sourceBucket === request.destinationBucket) {
    throw new ValidationError(`source and destination are the same bucket ${request.sourceBucket}: nothing to copy`, {
      field: 'destinationBucket',
      code: 'InvalidCopyInput',
    });
  }
  const precopy = request.precopy ?? false;
  if (precopy && request.ownerChangedAt !== undefined) {
    // A pre-copy runs before the owner change: a time for it says the caller meant the copy after it.
    throw new ValidationError('a pre-copy runs before the owner change: it takes no ownerChangedAt', {
      field: 'ownerChangedAt',
      code: 'InvalidCopyInput',
    });
  }
  const { waitForFinalTimeout: fixedWaitMs, fenceBound: bound } = waitForFinalTimeout({
    timings: request.fenceTimings,
    wait: request.waitForFinalTimeoutMs,
  });
  const skew = request.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS;
  const ownerChangedAt = request.ownerChangedAt ?? null;
  const deadline =
    precopy && request.proceedWithoutFinalAt === undefined ? now : copyDeadline(request, { now, fixedWaitMs, bound });
  const waitForFinalTimeoutMs = request.proceedWithoutFinalAt === undefined ? fixedWaitMs : Math.max(0, deadline - now);
  return {
    technicalID: request.technicalID,
    sourceBucket: request.sourceBucket,
    destinationBucket: request.destinationBucket,
    all: request.all ?? false,
    waitForFinalTimeoutMs,
    pollIntervalSeconds: request.pollIntervalSeconds ?? DEFAULT_POLL_INTERVAL_SECONDS,
    fenceBoundMs: bound,
    ownerChangedAt,
    notBefore: ownerChangedAt === null ? null : Math.floor((ownerChangedAt - skew) / 1_000),
    sourceHibernated: request.sourceHibernated ?? false,
    expectedLastRevision: request.expectedLastRevision ?? null,
    batchSize: request.batchSize ?? DEFAULT_COPY_BATCH_SIZE,
    multipartThresholdBytes: request.multipartThresholdBytes ?? null,
    startedAt: now,
    deadline,
    precopy,
  };
}

/** When the copy stops waiting for a final snapshot: the migration's decision, or the fixed wait from now. */
function copyDeadline(request: CopyRequest, o: { now: number; fixedWaitMs: number; bound: number }): number {
  const at = request.proceedWithoutFinalAt;
  if (at === undefined) return o.now + o.fixedWaitMs;
  if (request.precopy || request.ownerChangedAt === undefined) {
    throw new ValidationError('proceedWithoutFinalAt counts from an owner change: it needs ownerChangedAt', {
      field: 'proceedWithoutFinalAt',
      code: 'InvalidCopyInput',
    });
  }
  if (at < request.ownerChangedAt + o.bound) {
    throw new FenceBoundError(
      `proceedWithoutFinalAt ${new Date(at).toISOString()} is earlier than the fence bound (${o.bound} ms) after the owner change at ${new Date(request.ownerChangedAt).toISOString()}: the source might still accept writes when the copy gives up waiting`,
      { field: 'proceedWithoutFinalAt' },
    );
  }
  return at;
}

export interface ListingSummary {
  readonly snapshots: number;
  readonly latestKey: string | null;
  readonly latestFullKey: string | null;
  readonly lastRevision: number | null;
}

export interface FindFinalResult {
  readonly finalFound: boolean;
  readonly finalKey: string | null;
  /** The deadline has passed: proceed with the latest snapshot. */
  readonly timedOut: boolean;
  readonly listing: ListingSummary;
}

/**
 * One poll of the source store. A final snapshot of this migration ends the wait; so does the deadline,
 * unless the store holds nothing at all, which fails with `NoSnapshotBeforeTimeoutError`.
 */
export async function findFinalSnapshot(options: {
  source: SnapshotStore;
  config: CopyConfig;
  now: number;
}): Promise<FindFinalResult> {
  const { config } = options;
  const listing = await options.source.list(config.technicalID);
  const final = currentFinalSnapshot(listing, config.notBefore === null ? {} : { notBefore: config.notBefore });
  const timedOut = options.now >= config.deadline;
  if (final === undefined && timedOut && listing.length === 0) {
    throw new NoSnapshotBeforeTimeoutError(
      `no snapshot of ${config.technicalID} appeared in bucket ${config.sourceBucket} under ${snapshotPrefix(config.technicalID)} within ${Math.round(config.waitForFinalTimeoutMs / 1_000)} s`,
      config.technicalID,
    );
  }
  const latest = latestSnapshot(listing);
  return {
    finalFound: final !== undefined,
    finalKey: final?.key ?? null,
    timedOut,
    listing: {
      snapshots: listing.length,
      latestKey: latest?.key ?? null,
      latestFullKey: latestFullSnapshot(listing)?.key ?? null,
      lastRevision: latest?.lastRevision ?? null,
    },
  };
}

/**
 * How often, and for how long in one call, `watchForFinalSnapshot` looks. A live source's final snapshot
 * lands at no particular moment: looking once a second (Step Functions' finest Wait) missed it by a few
 * milliseconds in three of five 500 MB bad-path runs of bench:downtime, each miss a second of downtime.
 * Five listings a second while the copy waits, each call well inside the function's 15 s timeout.
 */
export const FINAL_LOOK_INTERVAL_MS = 200;
export const FINAL_WATCH_MS = 5_000;

/**
 * `findFinalSnapshot` again every `lookEveryMs` for up to `forMs`, until the final snapshot is there or
 * the deadline passed (the last look's answer), so that the copy starts within a look of the final
 * snapshot's arrival rather than within a state machine's Wait. Looks once where nothing is waited for:
 * a hibernated source, and a pre-copy (its deadline is its start, so its first look has timed out).
 */
export async function watchForFinalSnapshot(options: {
  source: SnapshotStore;
  config: CopyConfig;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  lookEveryMs?: number;
  forMs?: number;
}): Promise<FindFinalResult> {
  const { config } = options;
  const every = options.lookEveryMs ?? FINAL_LOOK_INTERVAL_MS;
  const until = options.now() + (options.forMs ?? FINAL_WATCH_MS);
  for (;;) {
    const found = await findFinalSnapshot({ source: options.source, config, now: options.now() });
    if (found.finalFound || found.timedOut || config.sourceHibernated) return found;
    if (options.now() + every > until) return found;
    await options.sleep(every);
  }
}

export interface PlannedObject {
  /** The object name below `<technicalID>/v2/`. */
  readonly name: string;
  readonly size: number;
}

export interface CopyBatchPlan {
  readonly objects: readonly PlannedObject[];
}

export interface CopyBatchesPlan {
  readonly batches: readonly CopyBatchPlan[];
  readonly objects: number;
  readonly bytes: number;
  /** The restore ends with this migration's final snapshot (a full one, or a delta last) and nothing follows it; never for a pre-copy. */
  readonly finalFound: boolean;
  readonly lastRevision: number;
  readonly fullKey: string;
  readonly deltas: number;
}

/**
 * Lists the source and decides what to copy: the restore plan (latest full + later deltas, no gap) or,
 * with `all`, every snapshot; split into batches for the parallel copy. Fails with
 * `NoFullSnapshotError` when the source holds nothing to restore from.
 */
export async function planCopyBatches(options: {
  source: SnapshotStore;
  config: CopyConfig;
}): Promise<CopyBatchesPlan> {
  const { config } = options;
  const listing = await options.source.list(config.technicalID);
  if (listing.length === 0) {
    throw new NoFullSnapshotError(
      `source bucket ${config.sourceBucket} holds no snapshot under ${snapshotPrefix(config.technicalID)}: nothing to copy`,
      config.technicalID,
    );
  }
  let plan;
  try {
    plan = planCopy({
      source: listing,
      destination: [],
      all: config.all,
      technicalID: config.technicalID,
      ...(config.expectedLastRevision === null ? {} : { expectedLastRevision: config.expectedLastRevision }),
    });
  } catch (error) {
    if (error instanceof NoFullSnapshotError) {
      throw new NoFullSnapshotError(`source bucket ${config.sourceBucket}: ${error.message}`, config.technicalID, {
        cause: error,
      });
    }
    throw error;
  }
  if (plan.copy.length > MAX_PLANNED_OBJECTS) {
    throw new CopyPlanTooLargeError(
      `the copy of ${config.technicalID} names ${plan.copy.length} objects, more than the ${MAX_PLANNED_OBJECTS} one run carries; copy what the restore needs (all=false)`,
    );
  }
  // Before the owner change no final snapshot is this migration's: one in the store is an earlier migration's.
  const final = config.precopy
    ? undefined
    : currentFinalSnapshot(listing, config.notBefore === null ? {} : { notBefore: config.notBefore });
  const objects = plan.copy.map(({ snapshot }) => ({ name: snapshot.name, size: snapshot.size }));
  const batches: CopyBatchPlan[] = [];
  for (let i = 0; i < objects.length; i += config.batchSize)
    batches.push({ objects: objects.slice(i, i + config.batchSize) });
  return {
    batches,
    objects: objects.length,
    bytes: plan.bytesToCopy,
    finalFound:
      final !== undefined && plan.final && final.key === (plan.restore.deltas.at(-1) ?? plan.restore.full).key,
    lastRevision: plan.lastRevision,
    fullKey: plan.restore.full.key,
    deltas: plan.restore.deltas.length,
  };
}

/** The batch's objects as full keys. */
export function batchItems(technicalID: string, batch: CopyBatchPlan): CopyBatchItem[] {
  const prefix = snapshotPrefix(technicalID);
  return batch.objects.map((o) => ({ key: `${prefix}${o.name}`, size: o.size }));
}

export interface VerifyResult {
  readonly verified: number;
  readonly lastRevision: number;
}

/**
 * Checks the destination as a whole after the batches: every planned object is there with its size, and
 * a restore from what was planned reaches the planned revision. Batches already verified each object's
 * checksum; this catches a batch result that was lost or an object deleted in between.
 */
export async function verifyCopy(options: {
  destination: SnapshotStore;
  config: CopyConfig;
  plan: CopyBatchesPlan;
}): Promise<VerifyResult> {
  const { config, plan } = options;
  const listing = await options.destination.list(config.technicalID);
  const byName = new Map(listing.map((s) => [s.name, s]));
  const planned = plan.batches.flatMap((b) => b.objects);
  const missing = planned.filter((o) => byName.get(o.name)?.size !== o.size);
  if (missing.length > 0) {
    const first = missing[0]!;
    throw new CopyVerificationError(
      `${missing.length} planned object(s) missing or of the wrong size in bucket ${config.destinationBucket}, first ${first.name} (${first.size} bytes expected, ${byName.get(first.name)?.size ?? 'none'} found)`,
      `${snapshotPrefix(config.technicalID)}${first.name}`,
    );
  }
  const present = planned.map((o) => byName.get(o.name)!);
  if (present.length === 0) return { verified: 0, lastRevision: plan.lastRevision };
  const restore = planRestore(present, { technicalID: config.technicalID, expectedLastRevision: plan.lastRevision });
  return { verified: present.length, lastRevision: restore.lastRevision };
}

export interface CopySummary {
  readonly technicalID: string;
  readonly sourceBucket: string;
  readonly destinationBucket: string;
  readonly copied: number;
  readonly skipped: number;
  readonly bytes: number;
  readonly bytesSkipped: number;
  readonly sizeOnlyVerified: number;
  readonly finalFound: boolean;
  readonly lastRevision: number;
  readonly readyToRestore: boolean;
  readonly readyReason: string;
  /** When not ready yet: epoch ms and ISO time at which the fence bound has passed. */
  readonly readyAt: number | null;
  readonly readyAtIso: string | null;
  readonly waitedMs: number;
}

/**
 * Adds up the batches and decides whether the destination may restore (the fence bound of docs/design.md
 * section 4). A pre-copy is never ready: nothing may serve from it, so it passes no gate and waits for none.
 */
export function summariseCopy(options: {
  config: CopyConfig;
  plan: CopyBatchesPlan;
  batches: readonly CopyBatchResult[];
  now: number;
}): CopySummary {
  const { config, plan, now } = options;
  const total = options.batches.reduce(
    (sum, b) => ({
      copied: sum.copied + b.copied,
      skipped: sum.skipped + b.skipped,
      bytes: sum.bytes + b.bytesCopied,
      bytesSkipped: sum.bytesSkipped + b.bytesSkipped,
      sizeOnlyVerified: sum.sizeOnlyVerified + b.sizeOnlyVerified,
    }),
    { copied: 0, skipped: 0, bytes: 0, bytesSkipped: 0, sizeOnlyVerified: 0 },
  );
  const ready = config.precopy
    ? ({ ready: false, reason: 'pre-copy' } as const)
    : readyToRestore({
        finalFound: plan.finalFound,
        ownerChangedAt: config.ownerChangedAt ?? undefined,
        now,
        fenceBound: config.fenceBoundMs,
        sourceHibernated: config.sourceHibernated,
      });
  const readyAt = !ready.ready && ready.reason === 'waiting-for-fence-bound' ? ready.readyAt : null;
  return {
    technicalID: config.technicalID,
    sourceBucket: config.sourceBucket,
    destinationBucket: config.destinationBucket,
    ...total,
    finalFound: plan.finalFound,
    lastRevision: plan.lastRevision,
    readyToRestore: ready.ready,
    readyReason: ready.reason,
    readyAt,
    readyAtIso: readyAt === null ? null : new Date(readyAt).toISOString(),
    waitedMs: now - config.startedAt,
  };
}
