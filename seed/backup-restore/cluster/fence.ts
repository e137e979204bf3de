import { clusterFenceStep } from '../../../core/ownership/index.js';
import { currentFinalSnapshot, type SnapshotStore } from '../../../core/snapshots/index.js';
import { ClusterMemberError } from '../errors.js';
import {
  clearNoSpace,
  memberList,
  memberRemove,
  memberStatus,
  put,
  putIfAbsent,
  range,
  type ResponseHeader,
} from '../etcd-gateway.js';
import type { EtcdSupervisor } from '../etcd-supervisor.js';
import type { Snapshotter } from '../snapshotter.js';
import { anyMember } from './join.js';

/**
 * The keys of the fence protocol, in the cluster's own etcd (outside Kubernetes' `/registry`). Each value
 * names the cluster (etcd's cluster ID): a restore builds a new cluster, so keys that came along in the
 * data of an earlier one are not this cluster's and are ignored.
 */
export const FENCE_PREFIX = '/gardenless.io/fence/';
export const MARKER_KEY = `${FENCE_PREFIX}marker`;
export const CLAIM_KEY = `${FENCE_PREFIX}final-claim`;
export const BARRIER_KEY = `${FENCE_PREFIX}barrier`;
export const ACK_PREFIX = `${FENCE_PREFIX}ack/`;

export interface FenceMarker {
  readonly clusterId: string;
  /** The member whose sidecar saw that this seed lost the shoot. */
  readonly by: string;
  readonly identity: string;
  readonly reason: string;
  readonly at: string;
}

export interface ClusterFenceOptions {
  readonly self: string;
  readonly identity: string;
  readonly technicalID: string;
  readonly supervisor: EtcdSupervisor;
  readonly snapshotter: Snapshotter;
  readonly store: SnapshotStore;
  /** The other members' addresses (public and private): the protocol goes on through them while this member cannot answer. */
  readonly peers: readonly string[];
  /** How long the members get to fence and acknowledge before the ones that did not are removed. */
  readonly memberFenceTimeout: number;
  readonly now?: () => number;
  readonly log?: (entry: Record<string, unknown>) => void;
}

export type FinalOutcome =
  | { readonly kind: 'taken'; readonly key: string; readonly barrier: number }
  | { readonly kind: 'taken-by-peer'; readonly key: string; readonly by: string };

/**
 * The cluster's side of losing ownership (docs/ha-etcd.md):
 * - the first sidecar to see `not-owner` fences its member, then writes the marker; every other sidecar
 *   sees the marker (`marker`, polled) and fences its member too;
 * - each sidecar acknowledges once its member is fenced (`acknowledge`), through any member that answers:
 *   its own may be busy rejoining after the restart;
 * - the final snapshot (`final`) is taken by one sidecar, the one that claims it first (another takes over
 *   when no final appears within twice the member fence timeout): once every member has acknowledged or
 *   has been removed from the cluster, it writes a barrier through its fenced member and snapshots that
 *   member. Everything any member acknowledged to a client was committed before the barrier;
 * - a sidecar never unfences its member while this cluster's marker exists (`assertMayServe`).
 */
export class ClusterFence {
  private waitingSince: number | undefined;
  private claimSeen: { by: string; since: number } | undefined;

  constructor(private readonly options: ClusterFenceOptions) {}

  private now(): number {
    return this.options.now?.() ?? performance.now();
  }

  /** This member's address first (whichever it serves on now), then the others'. */
  private endpoints(): string[] {
    const own = this.options.supervisor.address === undefined ? [] : [this.options.supervisor.endpoint()];
    return [...own, ...this.options.peers];
  }

  /** This cluster's marker as this member has it (serializable: answers without a quorum), or undefined. */
  async marker(timeoutMs = 1_000): Promise<FenceMarker | undefined> {
    const { header, kvs } = await range(
      this.options.supervisor.endpoint(),
      { key: MARKER_KEY, serializable: true },
      timeoutMs,
    );
    return ofCluster<FenceMarker>(kvs[0]?.value, header);
  }

  /** Refuses (throws) while this cluster's marker exists: a linearizable read of any member, so without a quorum it fails too. */
  async assertMayServe(): Promise<void> {
    const { value } = await anyMember(this.endpoints(), (e) => range(e, { key: MARKER_KEY }, 2_000));
    const marker = ofCluster<FenceMarker>(value.kvs[0]?.value, value.header);
    if (marker !== undefined)
      throw new ClusterMemberError(
        `the cluster is fenced: member ${marker.by} saw seed ${marker.identity} lose the shoot at ${marker.at} (${marker.reason})`,
        this.options.self,
      );
  }

  /** After this member's fence, in lost mode: the marker (if nobody wrote this cluster's yet) and this member's acknowledgement. */
  async acknowledge(reason: string): Promise<void> {
    const o = this.options;
    if (o.supervisor.address !== 'private')
      throw new ClusterMemberError(`member ${o.self} is not fenced: it cannot acknowledge`, o.self);
    await anyMember(this.endpoints(), async (endpoint) => {
      // The write guard's alarm would refuse the marker and every write of the final snapshot's protocol. In
      // lost mode the final snapshot is taken after every member fenced or acknowledged, so whatever a
      // member still serving acknowledges once the alarm is gone is in it.
      await clearNoSpace(endpoint, 2_000);
      const { header, kvs } = await range(endpoint, { key: MARKER_KEY }, 2_000);
      const clusterId = header.cluster_id ?? '0';
      const at = new Date().toISOString();
      if (ofCluster(kvs[0]?.value, header) === undefined) {
        const marker: FenceMarker = { clusterId, by: o.self, identity: o.identity, reason, at };
        // A marker of an earlier cluster (restored data) is replaced; put-if-absent keeps a concurrent writer's.
        const wrote =
          kvs[0] === undefined
            ? await putIfAbsent(endpoint, { key: MARKER_KEY, value: JSON.stringify(marker) })
            : false;
        if (!wrote && kvs[0] !== undefined) await put(endpoint, { key: MARKER_KEY, value: JSON.stringify(marker) });
      }
      await put(endpoint, { key: `${ACK_PREFIX}${o.self}`, value: JSON.stringify({ clusterId, member: o.self, at }) });
    });
  }

  /**
   * Takes (or finds) the cluster's final snapshot; throws `ClusterMemberError` while it cannot yet, and the
   * owner watchdog calls again at its next check.
   */
  async final(reason: string): Promise<FinalOutcome> {
    const o = this.options;
    await o.supervisor.fence();
    await this.acknowledge(reason);
    this.waitingSince ??= this.now();
    const { endpoint, value: clusterId } = await anyMember(
      this.endpoints(),
      async (e) => (await memberStatus(e, 1_500)).clusterId,
    );
    await this.fenceMembers(endpoint, clusterId);

    // Only a sidecar whose own member answers can write the barrier through it and snapshot it.
    const own = o.supervisor.endpoint();
    await memberStatus(own, 1_500).catch((cause: unknown) => {
      throw new ClusterMemberError(
        `member ${o.self} does not answer yet; another member's sidecar may take the final snapshot`,
        o.self,
        { cause },
      );
    });
    const claim = JSON.stringify({ clusterId, member: o.self });
    if (!(await putIfAbsent(own, { key: CLAIM_KEY, value: claim }))) {
      const { header, kvs } = await range(own, { key: CLAIM_KEY });
      const current = ofCluster<{ member: string }>(kvs[0]?.value, header);
      if (current !== undefined && current.member !== o.self) {
        const found = await this.finalOfBarrier(own);
        if (found !== undefined) return { kind: 'taken-by-peer', key: found, by: current.member };
        if (this.claimSeen?.by !== current.member) this.claimSeen = { by: current.member, since: this.now() };
        if (this.now() - this.claimSeen.since < 2 * o.memberFenceTimeout)
          throw new ClusterMemberError(`member ${current.member} takes the final snapshot`, o.self);
        o.log?.({ event: 'final-claim-taken-over', from: current.member });
      }
      await put(own, { key: CLAIM_KEY, value: claim });
    }
    // Everything any member committed before its acknowledgement or removal is before this write.
    const barrier = await put(own, {
      key: BARRIER_KEY,
      value: JSON.stringify({ clusterId, member: o.self, at: new Date().toISOString() }),
    });
    const taken = await o.snapshotter.takeFinal({ endpoint: own });
    if (taken.lastRevision < barrier)
      throw new ClusterMemberError(
        `the final snapshot ends at revision ${taken.lastRevision}, before the barrier at ${barrier}`,
        o.self,
      );
    o.log?.({ event: 'cluster-final-snapshot', key: taken.key, barrier });
    return { kind: 'taken', key: taken.key, barrier };
  }

  /** Returns once every member acknowledged its fence, removing the members that did not in time; else throws. */
  private async fenceMembers(endpoint: string, clusterId: string): Promise<void> {
    const o = this.options;
    for (let round = 0; round < 3; round++) {
      const { members } = await memberList(endpoint);
      const acks = await range(endpoint, { key: ACK_PREFIX, prefix: true });
      const acknowledged = new Set(
        acks.kvs
          .filter((kv) => parse<{ clusterId?: string }>(kv.value)?.clusterId === clusterId)
          .map((kv) => kv.key.slice(ACK_PREFIX.length)),
      );
      // Acknowledgements are by member name; a member that never started has none (and no name).
      const byName = members.map((m) => ({ ...m, id: m.id, ackedAs: m.name }));
      const step = clusterFenceStep({
        members: byName,
        acknowledged: new Set(byName.filter((m) => m.ackedAs !== '' && acknowledged.has(m.ackedAs)).map((m) => m.id)),
        waitingSince: this.waitingSince!,
        now: this.now(),
        memberFenceTimeout: o.memberFenceTimeout,
      });
      if (step.kind === 'ready') return;
      if (step.kind === 'wait') {
        throw new ClusterMemberError(
          `waiting for ${step.unacknowledged.map((m) => m.name || m.id).join(', ')} to fence (removed in ${Math.round(step.removeAfter - this.now())} ms)`,
          o.self,
        );
      }
      for (const m of step.members) {
        // A removed member's proposals are refused by the others: it cannot commit a client write any more.
        await memberRemove(endpoint, m.id, 5_000);
        o.log?.({ event: 'member-removed', member: m.name || m.id, reason: 'no fence acknowledgement in time' });
      }
    }
    throw new ClusterMemberError('the membership kept changing while the cluster was being fenced', o.self);
  }

  /** The key of a final snapshot in the store that covers this cluster's barrier, if one was taken. */
  private async finalOfBarrier(endpoint: string): Promise<string | undefined> {
    const { header, kvs } = await range(endpoint, { key: BARRIER_KEY });
    const barrier = kvs[0];
    if (barrier === undefined || ofCluster(barrier.value, header) === undefined) return undefined;
    const final = currentFinalSnapshot(await this.options.store.list(this.options.technicalID));
    return final !== undefined && final.lastRevision >= barrier.modRevision ? final.key : undefined;
  }
}

/** The value if it is a JSON object of the cluster the header names. */
function ofCluster<T>(value: string | undefined, header: ResponseHeader): (T & { clusterId: string }) | undefined {
  const parsed = value === undefined ? undefined : parse<T & { clusterId?: string }>(value);
  return parsed !== undefined && parsed.clusterId === header.cluster_id
    ? (parsed as T & { clusterId: string })
    : undefined;
}

function parse<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    // Not ours (a hand-written key): ignored.
    return undefined;
  }
}
