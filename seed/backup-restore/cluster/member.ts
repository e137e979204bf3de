import { checkOwner, needsCluster, type OwnerLookup } from '../../../core/ownership/index.js';
import type { SnapshotStore } from '../../../core/snapshots/index.js';
import { sleep } from '../etcd-process.js';
import { memberList, memberStatus, type ClusterMember as EtcdMember, type MemberStatus } from '../etcd-gateway.js';
import type { EtcdSupervisor } from '../etcd-supervisor.js';
import type { Snapshotter } from '../snapshotter.js';
import { ClusterFence, type FenceMarker } from './fence.js';
import { joinAsLearner, promoteLearner } from './join.js';
import { SnapshotLeadership } from './leadership.js';
import { lookUpWithin } from '../owner-watchdog-loop.js';
import { peerEndpoints, validateClusterSpec, type ClusterMemberSpec, type ClusterSpec } from './spec.js';

export interface ClusterMemberOptions {
  readonly spec: ClusterSpec;
  readonly supervisor: EtcdSupervisor;
  readonly snapshotter: Snapshotter;
  readonly store: SnapshotStore;
  readonly technicalID: string;
  readonly identity: string;
  /** How often the member's role and the fence marker are read. Default 1 s. */
  readonly leaderCheckInterval?: number;
  /** Default: two election timeouts plus one second (see `SnapshotLeadership`). */
  readonly handoverDelay?: number;
  /** Default 10 s (see `ClusterFence`). */
  readonly memberFenceTimeout?: number;
  /** A peer saw this seed lose the shoot: the owner watchdog must act as on `not-owner`. */
  readonly onMarker: (marker: FenceMarker) => void;
  readonly log?: (entry: Record<string, unknown>) => void;
}

export type MemberRole = 'leader' | 'follower' | 'learner' | 'unknown';

export interface ClusterMemberStatus {
  readonly member: string;
  readonly zone: string | null;
  readonly memberId: string | null;
  readonly clusterId: string | null;
  readonly role: MemberRole;
  /** The leader's member name as this member sees it, or null without one. */
  readonly leader: string | null;
  /** This sidecar takes the cluster's snapshots now. */
  readonly snapshotLeader: boolean;
  readonly fenceMarker: FenceMarker | null;
  readonly members: readonly { readonly name: string; readonly id: string; readonly isLearner: boolean }[];
  readonly lastCheckAt: string | null;
}

export const DEFAULT_LEADER_CHECK_INTERVAL_MS = 1_000;
export const DEFAULT_MEMBER_FENCE_TIMEOUT_MS = 10_000;

/**
 * The cluster side of one member's sidecar: reads its member's role and the fence marker every
 * `leaderCheckInterval`, hands the snapshots to the leader's sidecar (`leadership`), promotes the member
 * when it joined as a learner, rejoins it as a learner when it lost its data (`beforeStart`), and runs
 * the cluster's fence protocol (`fence`).
 */
export class ClusterMember {
  readonly self: ClusterMemberSpec;
  readonly leadership: SnapshotLeadership;
  readonly fence: ClusterFence;
  private readonly peers: string[];
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private tickInFlight: Promise<void> | undefined;
  private lastStatus: MemberStatus | undefined;
  private lastCheckAt: number | undefined;
  private members: EtcdMember[] = [];
  private ticks = 0;
  private marker: FenceMarker | undefined;
  private started = false;

  constructor(private readonly options: ClusterMemberOptions) {
    this.self = validateClusterSpec(options.spec);
    this.peers = peerEndpoints(options.spec);
    const interval = options.leaderCheckInterval ?? DEFAULT_LEADER_CHECK_INTERVAL_MS;
    if (!(interval > 0)) throw new RangeError(`leaderCheckInterval must be positive, got ${interval}`);
    this.leadership = new SnapshotLeadership({
      snapshotter: options.snapshotter,
      handoverDelay: options.handoverDelay ?? 2 * 1_000 + 1_000,
      isLeaderNow: async () => isLeader(await memberStatus(options.supervisor.endpoint(), 1_000)),
      onEvent: (e) =>
        options.log?.({
          event: `snapshot-leadership-${e.type}`,
          ...(e.error === undefined ? {} : { error: String(e.error) }),
        }),
    });
    this.fence = new ClusterFence({
      self: this.self.name,
      identity: options.identity,
      technicalID: options.technicalID,
      supervisor: options.supervisor,
      snapshotter: options.snapshotter,
      store: options.store,
      peers: this.peers,
      memberFenceTimeout: options.memberFenceTimeout ?? DEFAULT_MEMBER_FENCE_TIMEOUT_MS,
      ...(options.log ? { log: options.log } : {}),
    });
  }

  /**
   * Before each start of etcd: a member without data rejoins as a learner unless the cluster is being
   * bootstrapped right now (state `new`, first start of this sidecar).
   */
  async beforeStart(): Promise<void> {
    const { supervisor, spec } = this.options;
    const first = !this.started;
    this.started = true;
    if (supervisor.hasMemberData()) return;
    if (first && spec.state === 'new' && supervisor.clusterLaunch?.state === 'new') return;
    await joinAsLearner({
      self: this.self,
      peers: this.peers,
      supervisor,
      token: spec.token,
      ...(this.options.log ? { log: this.options.log } : {}),
    });
  }

  /**
   * Whether the member may start on its public address: the owner record names this seed, and the cluster
   * is not fenced (a cluster being bootstrapped cannot be; otherwise another member must say so, with a
   * linearizable read). Any doubt is no: it starts fenced and the owner watchdog decides.
   */
  async mayStartServing(input: {
    lookup: OwnerLookup;
    recordName: string;
    identity: string;
    timeoutMs: number;
  }): Promise<boolean> {
    const outcome = await lookUpWithin(input.lookup.lookup(input.recordName), input.timeoutMs);
    const { supervisor, spec } = this.options;
    // A live walk's value admits members of one cluster: is this member's that one?
    const cluster = needsCluster(outcome) ? await supervisor.clusterId(input.timeoutMs) : undefined;
    if (checkOwner({ outcome, identity: input.identity, ...(cluster ? { cluster } : {}) }).result !== 'owner')
      return false;
    if (!supervisor.hasMemberData() && spec.state === 'new') return true;
    return this.fence.assertMayServe().then(
      () => true,
      () => false,
    );
  }

  /**
   * Before this member's fence: a leader lets the other members fence first (up to `maxWaitMs`). Its own
   * restart costs an election; if every member restarts at once, the cluster loses its quorum and a
   * restarted member may wait seconds before it serves again (its announcement to the cluster was lost
   * with the old leader), which delays the acknowledgements and the final snapshot.
   */
  async letPeersFenceFirst(maxWaitMs: number): Promise<void> {
    const { supervisor } = this.options;
    if (supervisor.address !== 'public') return;
    const deadline = performance.now() + maxWaitMs;
    const endpoint = supervisor.endpoint();
    const status = await memberStatus(endpoint, 500).catch(() => undefined);
    if (status === undefined || !isLeader(status)) return;
    const privateOf = new Map(this.options.spec.members.map((m) => [m.name, m.privateUrl]));
    while (performance.now() < deadline) {
      const listed = await memberList(endpoint, 500).catch(() => undefined);
      const others = listed?.members.filter((m) => m.id !== status.memberId) ?? [];
      if (
        listed !== undefined &&
        others.every((m) => m.clientUrls.length > 0 && m.clientUrls.every((u) => u === privateOf.get(m.name)))
      )
        return;
      await sleep(100);
    }
  }

  /** Restored by this sidecar: the data dir is there, a later start is a restart. */
  markStarted(): void {
    this.started = true;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.tickInFlight;
    this.leadership.disable();
  }

  status(): ClusterMemberStatus {
    const s = this.lastStatus;
    const leaderName = s && s.leader !== '0' ? (this.members.find((m) => m.id === s.leader)?.name ?? s.leader) : null;
    return {
      member: this.self.name,
      zone: this.self.zone ?? null,
      memberId: s?.memberId ?? null,
      clusterId: s?.clusterId ?? null,
      role:
        s === undefined
          ? 'unknown'
          : s.isLearner
            ? 'learner'
            : s.leader === '0'
              ? 'unknown'
              : isLeader(s)
                ? 'leader'
                : 'follower',
      leader: leaderName,
      snapshotLeader: this.leadership.leading && this.options.snapshotter.running,
      fenceMarker: this.marker ?? null,
      members: this.members.map((m) => ({ name: m.name, id: m.id, isLearner: m.isLearner })),
      lastCheckAt: this.lastCheckAt === undefined ? null : new Date(this.lastCheckAt).toISOString(),
    };
  }

  private schedule(delay: number): void {
    clearTimeout(this.timer);
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.tickInFlight = this.tick().finally(() => {
        this.tickInFlight = undefined;
        this.schedule(this.options.leaderCheckInterval ?? DEFAULT_LEADER_CHECK_INTERVAL_MS);
      });
    }, delay);
  }

  private async tick(): Promise<void> {
    const { supervisor } = this.options;
    if (supervisor.address === undefined) {
      this.lastStatus = undefined;
      this.leadership.update(false);
      return;
    }
    const endpoint = supervisor.endpoint();
    const status = await memberStatus(endpoint, 1_000).catch(() => undefined);
    this.lastStatus = status;
    this.lastCheckAt = Date.now();
    this.leadership.update(status !== undefined && isLeader(status));
    if (status === undefined) return;
    if (status.isLearner) {
      await promoteLearner({ memberId: status.memberId, peers: [endpoint, ...this.peers] }).then(
        () => this.options.log?.({ event: 'learner-promoted', member: this.self.name }),
        () => undefined, // Not in sync yet: next tick.
      );
    }
    if (this.ticks++ % 5 === 0 || this.members.length === 0)
      this.members = (await memberList(endpoint, 1_000).catch(() => undefined))?.members ?? this.members;
    if (this.marker === undefined) {
      const marker = await this.fence.marker().catch(() => undefined);
      if (marker !== undefined) {
        this.marker = marker;
        this.options.log?.({ event: 'fence-marker-seen', by: marker.by, reason: marker.reason });
        this.options.onMarker(marker);
      }
    }
  }
}

function isLeader(status: MemberStatus): boolean {
  return !status.isLearner && status.leader !== '0' && status.leader === status.memberId;
}
