import {
  copyBatch,
  currentFinalSnapshot,
  planCopy,
  storeCopier,
  type CopyBatchResult,
  type ObjectCopier,
  type SnapshotStore,
  type StoredSnapshot,
} from '../../core/snapshots/index.js';
import { sleep } from './etcd-process.js';

export interface CopySnapshotsOptions {
  readonly source: SnapshotStore;
  readonly destination: SnapshotStore;
  readonly technicalID: string;
  /** Server-side copier between the two buckets; default: read from one store, write to the other. */
  readonly copier?: ObjectCopier;
  /** Copy every snapshot, not only what the restore needs. */
  readonly all?: boolean;
  readonly expectedLastRevision?: number;
  /** Objects in flight. Default 4. */
  readonly concurrency?: number;
  /** Wait up to this long for a final snapshot in the source before copying (ms). Default: no wait. */
  readonly waitForFinalMs?: number;
  /** Default 1 s. */
  readonly pollIntervalMs?: number;
  /** Unix seconds: an older final snapshot belongs to an earlier migration. */
  readonly finalNotBefore?: number;
}

export interface CopySnapshotsResult extends CopyBatchResult {
  readonly technicalID: string;
  readonly fullKey: string;
  readonly deltaKeys: readonly string[];
  readonly lastRevision: number;
  /** The copy starts from a final snapshot with nothing after it. */
  readonly final: boolean;
  readonly waitedMs: number;
}

/**
 * The stand-alone copy: optionally waits for the final snapshot, plans with the core's copy plan (what
 * the restore needs, or everything), and copies idempotently with a check of every object afterwards.
 * The orchestrator's copy workflow does the same in Step Functions; this is for operators and seed agents.
 */
export async function copySnapshots(options: CopySnapshotsOptions): Promise<CopySnapshotsResult> {
  const started = performance.now();
  let listing: StoredSnapshot[] = await options.source.list(options.technicalID);
  if (options.waitForFinalMs !== undefined) {
    const deadline = started + options.waitForFinalMs;
    const notBefore = options.finalNotBefore === undefined ? {} : { notBefore: options.finalNotBefore };
    while (currentFinalSnapshot(listing, notBefore) === undefined && performance.now() < deadline) {
      await sleep(Math.min(options.pollIntervalMs ?? 1_000, Math.max(0, deadline - performance.now())));
      listing = await options.source.list(options.technicalID);
    }
  }
  const plan = planCopy({
    source: listing,
    // Listings carry no checksums; the batch reads heads and skips what already arrived intact.
    destination: [],
    technicalID: options.technicalID,
    ...(options.all === undefined ? {} : { all: options.all }),
    ...(options.expectedLastRevision === undefined ? {} : { expectedLastRevision: options.expectedLastRevision }),
  });
  const result = await copyBatch({
    source: options.source,
    destination: options.destination,
    copier: options.copier ?? storeCopier(options.source, options.destination),
    items: plan.copy.map(({ snapshot }) => ({ key: snapshot.key, size: snapshot.size })),
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
  });
  return {
    ...result,
    technicalID: options.technicalID,
    fullKey: plan.restore.full.key,
    deltaKeys: plan.restore.deltas.map((d) => d.key),
    lastRevision: plan.lastRevision,
    final: plan.final,
    waitedMs: Math.round(performance.now() - started),
  };
}
