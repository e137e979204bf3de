import { ConflictError, ValidationError } from '../errors.js';
import type { OwnerValue } from '../ownership/owner-value.js';

/**
 * The live path of a migration (docs/design.md section 5, "The live path"): the shoot's etcd cluster walks
 * from the source seed to the destination under raft, one membership change at a time, and the owner
 * record follows it. Pure: each step is chosen from what the garden observes now (etcd's member list,
 * its leader, the owner record), never from what it remembers, so a retried or resumed migration, or one
 * whose Step Functions execution was lost, picks the walk up wherever it stands.
 */

export type WalkSide = 'source' | 'destination';

export interface LiveWalkSpec {
  readonly source: { readonly identity: string; readonly members: readonly string[] };
  readonly destination: { readonly identity: string; readonly members: readonly string[] };
  /** etcd's cluster ID of the shoot's cluster when the walk began. */
  readonly cluster: string;
}

export interface WalkMember {
  /** etcd's member ID. */
  readonly id: string;
  /** The member's planned name; a member etcd knows that neither seed plans is a `stranger`. */
  readonly name: string;
  readonly side: WalkSide | 'stranger';
  readonly learner: boolean;
  /** Added to the member list and its process runs (etcd reports a name only once the member started). */
  readonly started: boolean;
  /**
   * The member's raft position as its status reports it (term, then index), when it answers; `applied`:
   * the last entry its store applied (etcd 3.4's `raftAppliedIndex`).
   */
  readonly raft?: { readonly term: number; readonly index: number; readonly applied?: number };
  /** Where etcd says the member serves (its advertised client URL), once it started. */
  readonly clientUrl?: string;
}

export interface LiveWalkObservation {
  readonly owner: OwnerValue | undefined;
  /** etcd's cluster ID (hex) as the members report it. */
  readonly cluster: string;
  readonly members: readonly WalkMember[];
  /** The leader's member ID, when the cluster has one. */
  readonly leader?: string;
  /** The source seed's control plane is deleted (its removed members stopped, its objects gone). */
  readonly sourceRetired: boolean;
}

export type LiveWalkStep =
  /** The owner record goes from the source to `source+destination@cluster`: destination members may serve. */
  | { readonly kind: 'own-both' }
  /** `member add --learner` for this planned destination member, then the destination starts it. */
  | { readonly kind: 'add-learner'; readonly member: string }
  /** A member added to the cluster whose process does not run yet: the destination starts it. */
  | { readonly kind: 'start'; readonly member: string }
  /** The learner is promoted to a voter (etcd refuses until it caught up: repeat). */
  | { readonly kind: 'promote'; readonly member: string }
  /** Leadership moves to this destination voter before the leader leaves (a transfer, not an election). */
  | { readonly kind: 'move-leader'; readonly to: string }
  /** A member leaves the cluster (a source voter, or a stranger). */
  | { readonly kind: 'remove'; readonly member: string; readonly id: string }
  /** The owner record goes to the destination alone: the walk is complete. */
  | { readonly kind: 'own-destination' }
  /** The source seed deletes what is left of the control plane (its backups stay). */
  | { readonly kind: 'retire-source' }
  /**
   * The owner record names the destination alone while source voters remain: the garden took the way out
   * `force` (the source was lost with the voters split across the seeds), and the destination's latest
   * voter starts again as a cluster of its own with its data.
   */
  | { readonly kind: 'force'; readonly member: string }
  | { readonly kind: 'done' };

/** A step as logs and answers name it: `add-learner d0`, `move-leader d0`, `own-both`. */
export function describeLiveStep(step: LiveWalkStep): string {
  switch (step.kind) {
    case 'add-learner':
    case 'start':
    case 'promote':
    case 'remove':
    case 'force':
      return `${step.kind} ${step.member}`;
    case 'move-leader':
      return `${step.kind} ${step.to}`;
    default:
      return step.kind;
  }
}

/** The owner record or the member list is in a state no walk of this spec leads to. */
export class LiveWalkConflictError extends ConflictError<LiveWalkObservation> {
  constructor(message: string, observation: LiveWalkObservation) {
    super(message, { code: 'LiveWalkConflict', current: observation });
  }
}

export function quorum(voters: number): number {
  return Math.floor(voters / 2) + 1;
}

export function validateLiveWalkSpec(spec: LiveWalkSpec): void {
  if (spec.source.identity === spec.destination.identity)
    throw new ValidationError('a live walk needs two different seeds', { field: 'destination' });
  for (const side of [spec.source, spec.destination]) {
    if (side.members.length === 0)
      throw new ValidationError('each seed plans at least one member', { field: 'members' });
    if (new Set(side.members).size !== side.members.length)
      throw new ValidationError('member names repeat', { field: 'members' });
  }
  if (spec.source.members.some((m) => spec.destination.members.includes(m)))
    throw new ValidationError('a member name is planned on both seeds', { field: 'members' });
}

/**
 * The next step of the walk. Its order keeps the cluster as available as its size allows: one learner at a
 * time (etcd allows one), a learner votes only once promoted (it never counts for a quorum while it
 * catches up), the voters stay within one of the larger side's count (a source voter leaves as soon as a
 * destination voter joined beyond it), and no leader is ever removed: leadership is transferred first, so
 * the walk costs writes one leader transfer, not an election timeout.
 */
export function nextLiveStep(spec: LiveWalkSpec, observed: LiveWalkObservation): LiveWalkStep {
  const owner = observed.owner;
  const ownsSource = owner?.kind === 'seed' && owner.seed === spec.source.identity;
  const ownsDestination = owner?.kind === 'seed' && owner.seed === spec.destination.identity;
  const live =
    owner?.kind === 'live' &&
    owner.origin === spec.source.identity &&
    owner.destination === spec.destination.identity &&
    owner.cluster === spec.cluster;
  if (ownsDestination) {
    if (observed.members.some((m) => m.side !== 'destination')) {
      // Only the way out `force` names the destination while others are members; it holds every acknowledged
      // write only as long as each quorum of the voters has an answering destination voter in it.
      const voters = observed.members.filter((m) => !m.learner);
      if (!mayForce(voters, 'destination'))
        throw new LiveWalkConflictError('the destination owns the shoot while other seeds are members', observed);
      return { kind: 'force', member: mostUpToDate(answeringVoters(voters, 'destination'))!.name };
    }
    // After a force the destination's other planned members join the cluster it became, one at a time.
    const joining = observed.members.find((m) => m.learner || !m.started);
    if (joining)
      return joining.started ? { kind: 'promote', member: joining.name } : { kind: 'start', member: joining.name };
    const missing = spec.destination.members.find((name) => !observed.members.some((m) => m.name === name));
    if (missing !== undefined) return { kind: 'add-learner', member: missing };
    return observed.sourceRetired ? { kind: 'done' } : { kind: 'retire-source' };
  }
  if (observed.cluster !== spec.cluster)
    // A live value naming another cluster would fence every member of this one.
    throw new LiveWalkConflictError(
      `etcd reports cluster ${observed.cluster}, the walk is for ${spec.cluster}`,
      observed,
    );
  if (ownsSource) return { kind: 'own-both' };
  if (!live) throw new LiveWalkConflictError('the owner record names neither this walk nor its source', observed);

  const stranger = observed.members.find((m) => m.side === 'stranger');
  if (stranger) return removal(stranger, observed);
  const learner = observed.members.find((m) => m.learner);
  if (learner) {
    if (learner.side !== 'destination')
      throw new LiveWalkConflictError(`${learner.name} on the source is a learner`, observed);
    return learner.started ? { kind: 'promote', member: learner.name } : { kind: 'start', member: learner.name };
  }
  const voters = observed.members;
  const sourceVoters = voters.filter((m) => m.side === 'source');
  const unstarted = voters.find((m) => !m.started);
  if (unstarted) return { kind: 'start', member: unstarted.name };
  const pending = spec.destination.members.filter((name) => !voters.some((m) => m.name === name));
  const wanted = Math.max(spec.source.members.length, spec.destination.members.length);
  if (sourceVoters.length > 0 && (voters.length > wanted || pending.length === 0)) {
    // Followers leave before the leader, so that leadership moves once, at the end.
    const leaving = sourceVoters.find((m) => m.id !== observed.leader) ?? sourceVoters[0]!;
    return removal(leaving, observed);
  }
  if (pending.length > 0) return { kind: 'add-learner', member: pending[0]! };
  return { kind: 'own-destination' };
}

function removal(member: WalkMember, observed: LiveWalkObservation): LiveWalkStep {
  if (member.id !== observed.leader) return { kind: 'remove', member: member.name, id: member.id };
  const to = mostUpToDate(observed.members.filter((m) => m.side === 'destination' && !m.learner));
  if (!to) throw new LiveWalkConflictError(`${member.name} leads and no destination voter can take over`, observed);
  return { kind: 'move-leader', to: to.name };
}

/**
 * How many entries a learner's store may still have to apply when it is promoted. etcd refuses a promotion
 * only until the learner's raft log holds 90% of the leader's, but a learner that caught up from a snapshot
 * (one joining a large database always does) then rebuilds its store from it, and once a membership change
 * commits a follower applies every pending entry before it answers again (etcdserver's raft loop): promoted
 * before that, it holds back every write of a cluster that needs its vote for as long as the restore takes.
 * Ordinary entries apply in microseconds, so a thousand of them is no wait.
 */
export const PROMOTE_APPLY_LAG = 1_000;

/**
 * Whether the learner may be promoted now: it answers, and its store applied the leader's committed log
 * to within `PROMOTE_APPLY_LAG` entries (without an applied index, its raft log is what is compared).
 */
export function learnerCaughtUp(observed: LiveWalkObservation, name: string): boolean {
  const learner = observed.members.find((m) => m.name === name);
  const leader = observed.members.find((m) => m.id === observed.leader);
  if (learner?.raft === undefined || leader?.raft === undefined) return false;
  return (learner.raft.applied ?? learner.raft.index) + PROMOTE_APPLY_LAG >= leader.raft.index;
}

/** The voter with the latest raft position (term, then index); members that do not answer come last. */
export function mostUpToDate(members: readonly WalkMember[]): WalkMember | undefined {
  let best: WalkMember | undefined;
  for (const m of members) {
    if (best === undefined || later(m.raft, best.raft)) best = m;
  }
  return best;
}

function later(a: WalkMember['raft'], b: WalkMember['raft']): boolean {
  if (a === undefined) return false;
  if (b === undefined) return true;
  return a.term !== b.term ? a.term > b.term : a.index > b.index;
}

/** Which seeds the garden can reach now (their agents answer, their heartbeats are fresh). */
export interface WalkReach {
  readonly source: boolean;
  readonly destination: boolean;
}

export type LiveWayOut =
  /** The walk goes on (both seeds answer, or the reachable side's voters hold a quorum to remove the other's). */
  | { readonly kind: 'continue' }
  /**
   * The owner record goes to `side` alone (conditionally, from the live value), then `member`, the most
   * up-to-date voter there, is forced into a cluster of its own and the side's other members join it.
   * Only offered when every quorum of the current voters contains a voter of `side` that answers: each
   * acknowledged write is then on one of them, and the latest of them holds it (docs/design.md section 5).
   */
  | { readonly kind: 'force'; readonly side: WalkSide; readonly member: string }
  /** The source's voters hold a quorum: the destination's members are removed through it, the owner record goes back. */
  | { readonly kind: 'abort-to-source'; readonly remove: readonly string[] }
  /**
   * No side holds every acknowledged write (the destination only learnt, or the source's voters alone are
   * a quorum and the source is gone): the destination wipes its members of the walk, then today's bad path
   * (the owner record to the destination, the snapshots restored into a new cluster).
   */
  | { readonly kind: 'bad-path' }
  /** Nothing safe to do from here: the side that would hold the writes cannot be reached. */
  | { readonly kind: 'hold'; readonly reason: string };

/**
 * What the migration does when a seed of a live walk is lost. Raft decides inside the one cluster; the
 * owner record decides between clusters, and it is written by the garden alone, conditionally: only one
 * of two ways out that would each form a cluster (forcing the source, forcing the destination, the bad
 * path's restore) can ever win it.
 */
export function liveWayOut(spec: LiveWalkSpec, observed: LiveWalkObservation, reach: WalkReach): LiveWayOut {
  const owner = observed.owner;
  if (owner?.kind === 'seed' && owner.seed === spec.destination.identity) return { kind: 'continue' };
  if (reach.source && reach.destination) return { kind: 'continue' };
  const voters = observed.members.filter((m) => !m.learner && m.side !== 'stranger');
  const answering = (side: WalkSide) => answeringVoters(voters, side);
  if (reach.destination && !reach.source) {
    if (owner?.kind === 'seed') return { kind: 'bad-path' };
    if (answering('destination').length >= quorum(voters.length)) return { kind: 'continue' };
    if (mayForce(voters, 'destination')) return force('destination', voters);
    return { kind: 'bad-path' };
  }
  if (reach.source && !reach.destination) {
    const destinationMembers = observed.members.filter((m) => m.side === 'destination').map((m) => m.name);
    const sourceVoters = answering('source').length;
    if (sourceVoters >= quorum(voters.length)) return { kind: 'abort-to-source', remove: destinationMembers };
    if (mayForce(voters, 'source')) return force('source', voters);
    return { kind: 'hold', reason: 'the destination holds the quorum of the walking cluster and cannot be reached' };
  }
  return { kind: 'hold', reason: 'neither seed can be reached' };
}

/**
 * Whether a voter of `side` may be forced into a cluster of its own without losing an acknowledged write:
 * etcd acknowledges a write once a quorum of voters holds it, so when every quorum contains an answering
 * voter of `side` (the voters that are not such are fewer than a quorum), one of them holds it, and so does
 * the latest of them (Raft's log matching: a log at least as up to date as one holding a committed entry
 * holds it too).
 */
export function mayForce(voters: readonly WalkMember[], side: WalkSide): boolean {
  const answering = answeringVoters(voters, side).length;
  return answering > 0 && voters.length - answering < quorum(voters.length);
}

function answeringVoters(voters: readonly WalkMember[], side: WalkSide): WalkMember[] {
  return voters.filter((m) => m.side === side && m.raft !== undefined);
}

function force(side: WalkSide, voters: readonly WalkMember[]): LiveWayOut {
  return { kind: 'force', side, member: mostUpToDate(answeringVoters(voters, side))!.name };
}
