/**
 * Fencing a multi-member etcd as a unit (docs/ha-etcd.md). A member whose sidecar fenced it (etcd back on
 * its private address only) still takes part in raft: the other members can go on committing client
 * writes through it. So the final snapshot of a cluster may only be taken once no member can acknowledge
 * a client write any more: every voting or learning member has written its fence acknowledgement
 * (after its own fence), or has been removed from the cluster, which makes its proposals refused by the
 * others. This is the pure part: which members are still in the way, and when to vote them out.
 */

export interface ClusterMemberRef {
  /** etcd's member ID (decimal, as the API reports it). */
  readonly id: string;
  /** Empty for a member that was added but never started. */
  readonly name: string;
  readonly isLearner: boolean;
}

export interface ClusterFenceInput {
  readonly members: readonly ClusterMemberRef[];
  /** IDs of the members whose fence acknowledgement for this cluster is committed. */
  readonly acknowledged: ReadonlySet<string>;
  /** Monotonic ms: when this sidecar began waiting for the acknowledgements. */
  readonly waitingSince: number;
  readonly now: number;
  /** How long a member may take to fence and acknowledge before it is removed from the cluster. */
  readonly memberFenceTimeout: number;
}

export type ClusterFenceStep =
  /** Every member refuses client writes: a barrier write and the final snapshot may follow. */
  | { readonly kind: 'ready' }
  /** Some members have not acknowledged yet; ask again later. */
  | { readonly kind: 'wait'; readonly unacknowledged: readonly ClusterMemberRef[]; readonly removeAfter: number }
  /** These members did not acknowledge in time: remove them (one at a time), then ask again. */
  | { readonly kind: 'remove'; readonly members: readonly ClusterMemberRef[] };

export function clusterFenceStep(input: ClusterFenceInput): ClusterFenceStep {
  if (!(input.memberFenceTimeout >= 0))
    throw new RangeError(`memberFenceTimeout must be a non-negative number of ms, got ${input.memberFenceTimeout}`);
  const unacknowledged = input.members.filter((m) => !input.acknowledged.has(m.id));
  if (unacknowledged.length === 0) return { kind: 'ready' };
  const removeAfter = input.waitingSince + input.memberFenceTimeout;
  if (input.now < removeAfter) return { kind: 'wait', unacknowledged, removeAfter };
  // Learners first: removing one never needs the quorum check that a voting member's removal does.
  return { kind: 'remove', members: [...unacknowledged].sort((a, b) => Number(b.isLearner) - Number(a.isLearner)) };
}
