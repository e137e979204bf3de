import { rm } from 'node:fs/promises';
import { ClusterMemberError } from '../errors.js';
import { memberAdd, memberList, memberPromote, memberRemove, type ClusterMember } from '../etcd-gateway.js';
import type { EtcdSupervisor } from '../etcd-supervisor.js';
import type { ClusterMemberSpec } from './spec.js';

/** The first of `endpoints` that answers `call`, in order; every failure when none does. */
export async function anyMember<T>(
  endpoints: readonly string[],
  call: (endpoint: string) => Promise<T>,
): Promise<{ endpoint: string; value: T }> {
  const failures: string[] = [];
  for (const endpoint of endpoints) {
    try {
      return { endpoint, value: await call(endpoint) };
    } catch (error) {
      failures.push(error instanceof Error ? error.message : String(error));
    }
  }
  throw new ClusterMemberError(`no member answered: ${failures.join('; ')}`, '');
}

/**
 * A member that comes back without its data (a lost or broken data dir) cannot simply start again: etcd
 * would rejoin with an empty log under its old identity. As etcd's runtime reconfiguration guide says, it
 * is removed and added again, here as a learner (it catches up without counting for the quorum, so a slow
 * catch-up never costs the cluster its majority) and promoted once it is in sync (`promoteLearner`).
 * Prepares the supervisor for that join: an `existing` cluster of the members etcd reports, and an empty
 * data dir.
 */
export async function joinAsLearner(input: {
  self: ClusterMemberSpec;
  peers: readonly string[];
  supervisor: EtcdSupervisor;
  token: string;
  log?: (entry: Record<string, unknown>) => void;
}): Promise<void> {
  const { self, supervisor } = input;
  const { endpoint, value } = await anyMember(input.peers, (e) => memberList(e, 1_500));
  const stale = value.members.find((m) => m.peerUrls.includes(self.peerUrl));
  if (stale !== undefined) {
    await memberRemove(endpoint, stale.id, 5_000);
    input.log?.({ event: 'member-removed', member: self.name, reason: 'rejoining without data' });
  }
  const { added, members } = await memberAdd(endpoint, { peerUrl: self.peerUrl, learner: true }, 5_000);
  await rm(supervisor.dataDir, { recursive: true, force: true });
  supervisor.setCluster({
    state: 'existing',
    token: input.token,
    initialCluster: members.map((m) => ({ name: nameOf(m, added, self.name), peerUrl: m.peerUrls[0] ?? '' })),
  });
  input.log?.({ event: 'member-added-as-learner', member: self.name, id: added.id, members: members.length });
}

/** Promotes this member if it is a learner; etcd refuses until it is in sync with the leader, so callers repeat. */
export async function promoteLearner(input: { memberId: string; peers: readonly string[] }): Promise<void> {
  await anyMember(input.peers, (e) => memberPromote(e, input.memberId, 2_000));
}

function nameOf(member: ClusterMember, added: ClusterMember, selfName: string): string {
  if (member.id === added.id) return selfName;
  // A member added but never started has no name yet; etcd only compares peer URLs and the count.
  return member.name || `member-${member.id}`;
}
