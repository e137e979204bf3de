import { planRestore, restorePlanSnapshots, type RestorePlan } from './restore-plan.js';
import { compareSnapshots } from './name.js';
import type { ObjectHead, StoredSnapshot } from './store.js';

export type CopyReason = 'missing' | 'size-differs' | 'checksum-differs' | 'checksum-unknown';

export interface CopyItem {
  readonly snapshot: StoredSnapshot;
  readonly reason: CopyReason;
}

export interface CopyPlan {
  /** Objects to copy, in revision order. */
  readonly copy: readonly CopyItem[];
  /** Objects already in the destination with the same size and checksum. */
  readonly skip: readonly StoredSnapshot[];
  /** What the destination restores from once the copy is done. */
  readonly restore: RestorePlan<StoredSnapshot>;
  /** The restore starts from a final snapshot. */
  readonly final: boolean;
  readonly lastRevision: number;
  readonly bytesToCopy: number;
  readonly bytesSkipped: number;
}

export interface PlanCopyOptions {
  /** The source store's listing for one etcd. */
  readonly source: Iterable<StoredSnapshot>;
  /** What the destination already holds under the same keys (a listing or heads). */
  readonly destination: Iterable<ObjectHead>;
  /** Copy every snapshot, not only what the restore needs. */
  readonly all?: boolean;
  /** Fails the plan when the source ends before this revision. */
  readonly expectedLastRevision?: number;
  readonly technicalID?: string;
}

/**
 * Decides what a copy moves. The restore plan is computed in every case, so a source that cannot be
 * restored (empty, only deltas, a revision gap) fails here, before any byte moves, with the restore
 * plan's error. Re-running a copy is idempotent: what already arrived intact is skipped.
 */
export function planCopy(options: PlanCopyOptions): CopyPlan {
  const source = [...options.source];
  const restore = planRestore(source, {
    expectedLastRevision: options.expectedLastRevision,
    technicalID: options.technicalID,
  });
  const wanted = options.all ? [...source].sort(compareSnapshots) : restorePlanSnapshots(restore);
  const present = new Map<string, ObjectHead>();
  for (const head of options.destination) present.set(head.key, head);

  const copy: CopyItem[] = [];
  const skip: StoredSnapshot[] = [];
  let bytesToCopy = 0;
  let bytesSkipped = 0;
  for (const snapshot of wanted) {
    const reason = copyReason(snapshot, present.get(snapshot.key));
    if (reason === undefined) {
      skip.push(snapshot);
      bytesSkipped += snapshot.size;
    } else {
      copy.push({ snapshot, reason });
      bytesToCopy += snapshot.size;
    }
  }
  return { copy, skip, restore, final: restore.final, lastRevision: restore.lastRevision, bytesToCopy, bytesSkipped };
}

function copyReason(source: ObjectHead, target: ObjectHead | undefined): CopyReason | undefined {
  if (target === undefined) return 'missing';
  if (target.size !== source.size) return 'size-differs';
  if (source.checksum === undefined || target.checksum === undefined) return 'checksum-unknown';
  if (source.checksum !== target.checksum) return 'checksum-differs';
  return undefined;
}
