import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OwnerLookup, OwnerLookupOutcome } from '../../core/ownership/index.js';
import type { SnapshotStore } from '../../core/snapshots/index.js';
import type { ClusterMemberSpec, ClusterSpec } from '../../seed/backup-restore/cluster/spec.js';
import { portOf } from '../../seed/backup-restore/cluster/spec.js';
import { memberStatus } from '../../seed/backup-restore/etcd-gateway.js';
import { BackupRestoreSidecar, type SidecarOptions } from '../../seed/backup-restore/index.js';
import { newEtcdPeerCA } from '../../core/pki/shoot-secrets.js';
import { writeEtcdPeerFiles } from '../../seed/agent/secret-files.js';
import { plannedPorts } from '../../seed/ports.js';

/**
 * A three-member etcd cluster with one real backup-restore sidecar per member, in this process (each
 * sidecar supervises its own real etcd process): for tests and benchmarks of the cluster's behaviour
 * without seed agents. The owner record is a value the test sets (`owner`), or cut (`unknown`).
 */

/** An owner lookup a test controls: the record's value, or no answer at all. */
export class ControlledOwnerLookup implements OwnerLookup {
  value: string | undefined;
  cut = false;
  constructor(value: string | undefined) {
    this.value = value;
  }
  async lookup(): Promise<OwnerLookupOutcome> {
    if (this.cut) return { kind: 'failed', failure: 'network', message: 'cut by the test' };
    return this.value === undefined ? { kind: 'absent', reason: 'nxdomain' } : { kind: 'found', values: [this.value] };
  }
}

export interface InProcessMember {
  readonly spec: ClusterMemberSpec;
  /** The member's sidecar now: `revive` replaces it. */
  readonly sidecar: BackupRestoreSidecar;
  readonly log: Record<string, unknown>[];
}

export interface InProcessClusterOptions {
  readonly technicalID: string;
  readonly store: SnapshotStore;
  readonly identity: string;
  /** One per member; default the same lookup for all. */
  readonly lookups: readonly OwnerLookup[];
  readonly zones?: readonly string[];
  readonly sidecar?: Partial<
    Pick<
      SidecarOptions,
      | 'ownerCheckInterval'
      | 'unknownGrace'
      | 'checkTimeout'
      | 'deltaSnapshotInterval'
      | 'fullSnapshotInterval'
      | 'compression'
    >
  >;
  readonly cluster?: { leaderCheckInterval?: number; handoverDelay?: number; memberFenceTimeout?: number };
  /** Restore every member from the store (the first one replays the deltas). */
  readonly restore?: { expectedLastRevision?: number; file?: string };
  /** Peer traffic as on a seed whose shoot has an etcd peer CA (default), or plain as before it. */
  readonly peers?: 'tls' | 'plain';
}

export interface InProcessCluster {
  readonly members: readonly InProcessMember[];
  readonly clientUrls: readonly string[];
  /** The member whose etcd leads now, by asking each. */
  leader(): Promise<InProcessMember | undefined>;
  /** The machine of a member dies: its etcd gets SIGKILL and its sidecar stops without a word (no fence, no snapshot). */
  crash(member: InProcessMember): Promise<void>;
  /** A crashed member's pod comes back: a new sidecar on the same data dir joins the running cluster. */
  revive(member: InProcessMember): Promise<void>;
  stop(): Promise<void>;
}

export async function memberSpecs(
  count: number,
  zones: readonly string[] = [],
  peers: 'tls' | 'plain' = 'plain',
): Promise<ClusterMemberSpec[]> {
  // One call for all ports: two calls could hand out one port twice.
  const ports = await plannedPorts(3 * count);
  const url = (i: number, scheme = 'http') => `${scheme}://127.0.0.1:${ports[i]!}`;
  return Array.from({ length: count }, (_, i) => {
    const zone = zones[i % Math.max(1, zones.length)];
    return {
      name: `etcd-main-${i}`,
      ...(zone ? { zone } : {}),
      peerUrl: url(3 * i, peers === 'tls' ? 'https' : 'http'),
      clientUrl: url(3 * i + 1),
      privateUrl: url(3 * i + 2),
    };
  });
}

export async function startInProcessCluster(options: InProcessClusterOptions): Promise<InProcessCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-cluster-'));
  const peers = options.peers ?? 'tls';
  const specs = await memberSpecs(3, options.zones, peers);
  const peerCA = peers === 'tls' ? await newEtcdPeerCA(new Date()) : undefined;
  // Each member's certificate from the one peer CA, as each pod's sidecar gets its own.
  const peerTls = new Map(
    await Promise.all(
      specs.map(
        async (spec) =>
          [
            spec.name,
            await writeEtcdPeerFiles({
              dir: join(dir, 'pki', spec.name),
              secrets: peerCA && { etcdPeerCA: peerCA },
              member: spec.name,
              peerUrls: [spec.peerUrl],
            }),
          ] as const,
      ),
    ),
  );
  const token = `${options.technicalID}-${Date.now().toString(36)}`;
  const startMember = async (
    spec: ClusterMemberSpec,
    i: number,
    state: 'new' | 'existing',
    log: Record<string, unknown>[],
  ) => {
    const cluster: ClusterSpec = { self: spec.name, members: specs, token, state };
    return BackupRestoreSidecar.start({
      technicalID: options.technicalID,
      store: options.store,
      owner: {
        lookup: options.lookups[i] ?? options.lookups[0]!,
        recordName: 'owner.test',
        identity: options.identity,
      },
      etcd: {
        dataDir: join(dir, spec.name),
        clientPort: portOf(spec.clientUrl),
        privatePort: portOf(spec.privateUrl),
        peerPort: portOf(spec.peerUrl),
        logFile: join(dir, `${spec.name}.log`),
        ...(peerTls.get(spec.name) ? { peerTls: peerTls.get(spec.name)! } : {}),
      },
      stagingDir: join(dir, `${spec.name}.staging`),
      cluster: { ...cluster, ...options.cluster },
      ...options.sidecar,
      ...(options.restore && state === 'new' ? { restore: options.restore } : {}),
      log: (entry) => log.push({ at: Math.round(performance.now()), ...entry }),
    });
  };
  const members: { spec: ClusterMemberSpec; sidecar: BackupRestoreSidecar; log: Record<string, unknown>[] }[] = [];
  try {
    const started = await Promise.allSettled(
      specs.map(async (spec, i) => {
        const log: Record<string, unknown>[] = [];
        return { spec, sidecar: await startMember(spec, i, 'new', log), log };
      }),
    );
    for (const s of started) if (s.status === 'fulfilled') members.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (error) {
    await Promise.all(members.map((m) => m.sidecar.stop()));
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const crashed = new Set<InProcessMember>();
  return {
    members,
    clientUrls: specs.map((s) => s.clientUrl),
    async leader() {
      for (const m of members) {
        if (crashed.has(m)) continue;
        const endpoint = m.sidecar.supervisor.address === undefined ? undefined : m.sidecar.supervisor.endpoint();
        if (endpoint === undefined) continue;
        const status = await memberStatus(endpoint, 1_000).catch(() => undefined);
        if (status && status.leader === status.memberId) return m;
      }
      return undefined;
    },
    async crash(member) {
      const pid = member.sidecar.supervisor.pid;
      crashed.add(member);
      if (pid !== undefined) process.kill(pid, 'SIGKILL');
      await member.sidecar.stop();
    },
    async revive(member) {
      const i = members.indexOf(member as (typeof members)[number]);
      members[i]!.sidecar = await startMember(member.spec, i, 'existing', member.log);
      crashed.delete(member);
    },
    async stop() {
      await Promise.all(members.map((m) => m.sidecar.stop().catch(() => undefined)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
