import { NoFullSnapshotError, RestorePlanGapError } from './errors.js';
import { compareSnapshots, type Snapshot } from './name.js';
import { planRestore } from './restore-plan.js';

/**
 * Where the snapshots in a store end, for a sidecar that takes over the snapshots of a cluster (a new
 * etcd leader's): `resume` at `lastRevision + 1` with deltas, or `full` when the store holds no full
 * snapshot or a gap that only a new full snapshot closes.
 */
export type ResumePoint =
  | { readonly kind: 'resume'; readonly lastRevision: number; readonly fullKey: string }
  | { readonly kind: 'full'; readonly reason: string };

export function resumePoint(snapshots: Iterable<Snapshot>): ResumePoint {
  try {
    const plan = planRestore(snapshots);
    return { kind: 'resume', lastRevision: plan.lastRevision, fullKey: plan.full.key };
  } catch (error) {
    if (error instanceof NoFullSnapshotError || error instanceof RestorePlanGapError)
      return { kind: 'full', reason: error.message };
    throw error;
  }
}

export interface ChainFault {
  readonly key: string;
  /** The revision the snapshots before it reach. */
  readonly covered: number;
  readonly startRevision: number;
}

export interface SnapshotChain {
  /** Deltas that start after `covered + 1`: revisions in no snapshot. */
  readonly gaps: readonly ChainFault[];
  /** Deltas that start at or below what earlier snapshots cover: revisions snapshotted twice. */
  readonly overlaps: readonly ChainFault[];
  /** The highest revision the chain reaches. */
  readonly lastRevision: number;
}

/**
 * The whole history of a store as one chain: each delta must start exactly one revision after what the
 * snapshots before it (in revision order) cover. A snapshotter that hands over to another (a new leader)
 * and continues without a gap and without a duplicate leaves a chain with neither.
 */
export function snapshotChain(snapshots: Iterable<Snapshot>): SnapshotChain {
  const sorted = [...snapshots].sort(compareSnapshots);
  const gaps: ChainFault[] = [];
  const overlaps: ChainFault[] = [];
  let covered: number | undefined;
  for (const s of sorted) {
    if (s.kind === 'Incr' && covered !== undefined) {
      const fault = { key: s.key, covered, startRevision: s.startRevision };
      if (s.startRevision > covered + 1) gaps.push(fault);
      else if (s.startRevision <= covered) overlaps.push(fault);
    }
    if (s.kind === 'Full' || covered !== undefined) covered = Math.max(covered ?? 0, s.lastRevision);
  }
  return { gaps, overlaps, lastRevision: covered ?? 0 };
}
