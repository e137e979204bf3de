import { ownerRecordName, type OwnershipTimings } from '../../core/ownership/index.js';
import { formatMemberFlag, type ClusterMemberSpec } from '../backup-restore/cluster/spec.js';
import { durationFlag } from '../backup-restore/duration.js';
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

/** The `gardenless backup-restore serve` arguments of one sidecar (a single etcd or one member of a cluster). */
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
}): string[] {
  const { defaults: o, spec } = input;
  const s = o.sidecar ?? {};
  const record = ownerRecordName({
    shoot: spec.shoot.name,
    project: spec.shoot.project,
    internalDomain: o.owner.internalDomain,
  });
  const m = input.member;
  return [
    'backup-restore',
    'serve',
    '--technical-id',
    spec.shoot.technicalID,
    '--owner-record',
    record,
    '--identity',
    o.identity,
    '--bucket',
    spec.bucket,
    '--region',
    o.aws.region,
    ...(o.aws.endpoint ? ['--s3-endpoint', o.aws.endpoint] : []),
    ...(o.owner.mode === 'api'
      ? [
          '--owner-mode',
          'api',
          '--hosted-zone-id',
          o.owner.hostedZoneId,
          ...(o.aws.route53Endpoint ? ['--route53-endpoint', o.aws.route53Endpoint] : []),
        ]
      : ['--owner-mode', 'dns', ...(o.owner.servers?.length ? ['--dns-server', ...o.owner.servers] : [])]),
    '--data-dir',
    input.dataDir,
    '--etcd-log',
    input.etcdLog,
    ...(input.ports ? ['--client-port', String(input.ports.client), '--peer-port', String(input.ports.peer)] : []),
    ...(input.ports?.apiServerEtcd === undefined ? [] : ['--api-server-port', String(input.ports.apiServerEtcd)]),
    ...(m
      ? [
          ...m.members.flatMap((x) => ['--member', formatMemberFlag(x)]),
          '--member-name',
          m.self,
          '--cluster-token',
          m.token,
          '--cluster-state',
          m.state,
          ...durationArg('--leader-check-interval', s.cluster?.leaderCheckInterval),
          ...durationArg('--handover-delay', s.cluster?.handoverDelay),
          ...durationArg('--member-fence-timeout', s.cluster?.memberFenceTimeout),
        ]
      : []),
    ...durationArg('--owner-check-interval', s.ownership?.ownerCheckInterval),
    ...durationArg('--unknown-grace', s.ownership?.unknownGrace),
    ...durationArg('--check-timeout', s.ownership?.checkTimeout),
    ...durationArg('--delta-snapshot-interval', s.deltaSnapshotInterval),
    ...durationArg('--full-snapshot-interval', s.fullSnapshotInterval),
    ...durationArg('--backup-lag-limit', s.backupLagLimit),
    ...(s.compression ? ['--compression', s.compression] : []),
    ...(spec.restore
      ? [
          '--restore',
          ...(spec.restore.ahead ? ['--restore-ahead'] : []),
          ...(spec.restore.expectedLastRevision === undefined
            ? []
            : ['--expected-revision', String(spec.restore.expectedLastRevision)]),
          ...(input.restoreFile ? ['--restore-file', input.restoreFile] : []),
          ...(spec.restore.acceptDigestMismatch ? ['--accept-digest-mismatch'] : []),
        ]
      : []),
  ];
}

function durationArg(flag: string, ms: number | undefined): string[] {
  return ms === undefined ? [] : [flag, durationFlag(ms)];
}
