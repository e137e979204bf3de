import {
  NoFullSnapshotError,
  planRestore,
  RestorePlanGapError,
  RestorePlanIncompleteError,
  type Snapshot,
} from '../../core/snapshots/index.js';
import type { Fidelity } from '../backup-restore/fidelity.js';
import { AgentCommandError } from './errors.js';

export interface RestoreSummary {
  restoredRevision: number;
  snapshots: number;
  final: boolean;
  /** Answering a restore ahead: whether etcd waits restored ahead. */
  ahead?: boolean;
  /** Answering the restore: the revision of the restore ahead it caught up from. */
  aheadRevision?: number;
  /** The fidelity check of the restored etcd (docs/design.md section 4). */
  fidelity?: Fidelity;
}

/**
 * What restoring etcd from these snapshots would give, checked as the real restorer checks it (latest
 * full snapshot plus every later delta, no gap, up to the expected revision). The agent runs it before it
 * starts a restoring sidecar, so that a copy that cannot restore is answered EtcdRestoreFailed (not
 * retryable) instead of a process that exits. A hibernated shoot with no snapshots restores to nothing.
 */
export function summarizeRestore(options: {
  technicalID: string;
  snapshots: readonly Snapshot[];
  expectedLastRevision?: number;
  hibernated?: boolean;
}): RestoreSummary {
  const { snapshots } = options;
  if (snapshots.length === 0 && options.hibernated === true && (options.expectedLastRevision ?? 0) === 0) {
    return { restoredRevision: 0, snapshots: 0, final: false };
  }
  try {
    const plan = planRestore(snapshots, {
      technicalID: options.technicalID,
      ...(options.expectedLastRevision === undefined ? {} : { expectedLastRevision: options.expectedLastRevision }),
    });
    return { restoredRevision: plan.lastRevision, snapshots: snapshots.length, final: plan.final };
  } catch (cause) {
    if (
      cause instanceof NoFullSnapshotError ||
      cause instanceof RestorePlanGapError ||
      cause instanceof RestorePlanIncompleteError
    ) {
      throw new AgentCommandError(
        'EtcdRestoreFailed',
        `etcd of ${options.technicalID} does not restore: ${cause.message}`,
        { reason: cause.name },
        { cause },
      );
    }
    throw cause;
  }
}
