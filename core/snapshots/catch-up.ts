import type { RestorePlan } from './restore-plan.js';
import type { Snapshot } from './name.js';

/**
 * What a destination that restored etcd ahead (before the source was fenced) does once the copy after
 * the fence is in: replay only the deltas past the revision it holds, or restore from scratch where the
 * data says it must.
 */
export type CatchUpPlan<S extends Snapshot = Snapshot> =
  | { readonly kind: 'replay'; readonly fromRevision: number; readonly deltas: readonly S[] }
  | { readonly kind: 'restore'; readonly reason: string };

export interface PlanCatchUpInput<S extends Snapshot> {
  /** The restore plan of the store now (after the copy that followed the fence). */
  readonly plan: RestorePlan<S>;
  /** The full snapshot the restore ahead started from. */
  readonly aheadFullKey: string;
  /** The revision etcd reports now (the restore ahead's end). */
  readonly revision: number;
}

/**
 * Replaying is right only when the etcd restored ahead is a prefix of what the plan restores: the plan
 * starts from the same full snapshot (a source that took a new full snapshot since may no longer have
 * the deltas in between copied), and its deltas reach from the revision etcd holds to the plan's end
 * without a gap. Anything else (a new full snapshot, etcd past the snapshots' end, a gap) restores from
 * scratch, as a destination without a restore ahead does: slower, never wrong.
 */
export function planCatchUp<S extends Snapshot>(input: PlanCatchUpInput<S>): CatchUpPlan<S> {
  const { plan, revision } = input;
  if (plan.full.key !== input.aheadFullKey)
    return {
      kind: 'restore',
      reason: `the snapshots now start from ${plan.full.key}, the restore ahead from ${input.aheadFullKey}`,
    };
  if (revision > plan.lastRevision)
    return {
      kind: 'restore',
      reason: `etcd restored ahead is at revision ${revision}, past the snapshots' end at ${plan.lastRevision}`,
    };
  const deltas = plan.deltas.filter((d) => d.lastRevision > revision);
  const first = deltas[0];
  if (first !== undefined && first.startRevision > revision + 1) {
    return {
      kind: 'restore',
      reason: `etcd restored ahead ends at revision ${revision}, the next delta ${first.key} starts at ${first.startRevision}`,
    };
  }
  return { kind: 'replay', fromRevision: revision, deltas };
}
