import { ownerRecordName, type OwnershipTimings } from '../../core/ownership/index.js';
import { withoutUndefined } from '../../core/objects.js';
import type { ClusterMemberSpec } from '../backup-restore/cluster/spec.js';
import type { EtcdPeerTls } from '../backup-restore/etcd-process.js';
import { serveArgv, type ServeFlags } from '../backup-restore/serve-flags.js';
import type { OwnerConfig } from './aws-agent.js';
import type { EtcdSpec } from './hosting.js';

/** What every sidecar of a seed shares: the seed, its AWS access, its owner records, its timings. */
export interface SidecarDefaults {
  identity: string;
  aws: { endpoint?: string; route53Endpoint?: string; region: string };
  owner: OwnerConfig;
  sidecar?: {
    ownership?: Partial<OwnershipTimings>;
    deltaSnapshotInterval?: number;
    fullSnapshotInterval?: number;
    /** The write guard's limit (docs/design.md section 4); default one delta interval + 30 s. */
    backupLagLimit?: number;
    compression?: 'gzip' | 'none';
    /** Members of a cluster: how often a sidecar reads its member's role, how long a new leader waits, how long a member may take to fence. */
    cluster?: { leaderCheckInterval?: number; handoverDelay?: number; memberFenceTimeout?: number };
  };
}

/** The member a sidecar serves, within its cluster. */
export interface MemberArgs {
  self: string;
  members: readonly ClusterMemberSpec[];
  token: string;
  state: 'new' | 'existing';
}

/**
 * What every sidecar of a shoot on this seed is told, whatever hosts it: the shoot's folder and owner
 * record, the seed's identity, bucket, AWS access and timings, and a restore. Each hosting adds where etcd
 * keeps its data and listens.
 */
export function seedServeFlags(
  defaults: SidecarDefaults,
  spec: Pick<EtcdSpec, 'shoot' | 'bucket' | 'restore'>,
): Omit<ServeFlags, 'dataDir'> {
  const { aws, owner } = defaults;
  const s = defaults.sidecar ?? {};
  return withoutUndefined({
    technicalID: spec.shoot.technicalID,
    ownerRecord: ownerRecordName({
      shoot: spec.shoot.name,
      project: spec.shoot.project,
      internalDomain: owner.internalDomain,
    }),
    identity: defaults.identity,
    bucket: spec.bucket,
    region: aws.region,
    s3Endpoint: aws.endpoint || undefined,
    owner:
      owner.mode === 'api'
        ? withoutUndefined({
            mode: 'api' as const,
            hostedZoneId: owner.hostedZoneId,
            route53Endpoint: aws.route53Endpoint || undefined,
          })
        : withoutUndefined({ mode: 'dns' as const, servers: owner.servers?.length ? owner.servers : undefined }),
    ownerCheckInterval: s.ownership?.ownerCheckInterval,
    unknownGrace: s.ownership?.unknownGrace,
    checkTimeout: s.ownership?.checkTimeout,
    deltaSnapshotInterval: s.deltaSnapshotInterval,
    fullSnapshotInterval: s.fullSnapshotInterval,
    backupLagLimit: s.backupLagLimit,
    compression: s.compression,
    restore: spec.restore
      ? withoutUndefined({
          ahead: spec.restore.ahead || undefined,
          expectedLastRevision: spec.restore.expectedLastRevision,
          acceptDigestMismatch: spec.restore.acceptDigestMismatch || undefined,
        })
      : undefined,
  });
}

/** The `gardenless backup-restore serve` arguments of one sidecar on this machine (a single etcd or one member of a cluster). */
export function sidecarArgs(input: {
  defaults: SidecarDefaults;
  spec: EtcdSpec;
  dataDir: string;
  etcdLog: string;
  /** A single etcd's ports; `apiServerEtcd`: its client port for the shoot's kube-apiserver (the sidecar's second gate). */
  ports?: { client: number; peer: number; apiServerEtcd?: number };
  member?: MemberArgs;
  /** With `spec.restore`: the full snapshot, already downloaded. */
  restoreFile?: string;
  /** The member's peer TLS files (`writeEtcdPeerFiles`); absent: plain peers. */
  peerTls?: EtcdPeerTls;
}): string[] {
  const seed = seedServeFlags(input.defaults, input.spec);
  const s = input.defaults.sidecar?.cluster ?? {};
  const m = input.member;
  return serveArgv(
    withoutUndefined({
      ...seed,
      dataDir: input.dataDir,
      etcdLog: input.etcdLog,
      clientPort: input.ports?.client,
      peerPort: input.ports?.peer,
      apiServerPort: input.ports?.apiServerEtcd,
      peerTls: input.peerTls,
      cluster: m
        ? withoutUndefined({
            members: m.members,
            self: m.self,
            token: m.token,
            state: m.state,
            leaderCheckInterval: s.leaderCheckInterval,
            handoverDelay: s.handoverDelay,
            memberFenceTimeout: s.memberFenceTimeout,
          })
        : undefined,
      join: m ? undefined : input.spec.join,
      forceNewCluster: m ? undefined : input.spec.forceNewCluster,
      restore: seed.restore && input.restoreFile ? { ...seed.restore, file: input.restoreFile } : seed.restore,
    }),
  );
}
