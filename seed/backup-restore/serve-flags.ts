import { Option, type Command } from 'commander';
import { DEFAULT_OWNER_CHECK_INTERVAL_MS, DEFAULT_UNKNOWN_GRACE_MS } from '../../core/ownership/index.js';
import { withoutUndefined } from '../../core/objects.js';
import { formatMemberFlag, parseMemberFlag, type ClusterMemberSpec } from './cluster/spec.js';
import { durationFlag, parseDuration } from './duration.js';
import { peerScheme, type EtcdPeerTls } from './etcd-process.js';
import { portNumber } from '../ports.js';
import { SidecarConfigError } from './errors.js';
import {
  DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS,
  DEFAULT_FULL_SNAPSHOT_INTERVAL_MS,
  type Compression,
} from './snapshotter.js';

/**
 * What `gardenless backup-restore serve` runs with, as values: every hosting builds its sidecars' command
 * lines from it (`serveArgv`) and the CLI parses them back into it (`serveOptions`, `serveFlagsFrom`), so
 * that a flag exists once. Absent fields are the sidecar's defaults; durations are in ms.
 */
export interface ServeFlags {
  /** `shoot--<project>--<name>`: the etcd's folder in the bucket. */
  technicalID: string;
  /** A folder in the bucket above `<technicalID>/v2/`. */
  prefix?: string;
  ownerRecord: string;
  /** This seed's identity: the owner record's value while it owns the shoot. */
  identity: string;
  bucket: string;
  region?: string;
  s3Endpoint?: string;
  owner: { mode: 'api'; hostedZoneId: string; route53Endpoint?: string } | { mode: 'dns'; servers?: readonly string[] };
  dataDir: string;
  etcdLog?: string;
  /** The address etcd listens on (in a pod: 0.0.0.0). */
  host?: string;
  clientPort?: number;
  peerPort?: number;
  /** etcd's own client port, the sidecar's alone (the fence). */
  privatePort?: number;
  /** A single member's client port for the shoot's kube-apiserver: the sidecar's second gate. */
  apiServerPort?: number;
  /**
   * etcd's peer traffic is mutual TLS with these files (a certificate from the shoot's etcd peer CA):
   * every peer URL is then `https://`. Absent: plain peers (`http://`), as for shoots whose secrets
   * predate the peer CA. Client traffic is the same either way.
   */
  peerTls?: EtcdPeerTls;
  statusHost?: string;
  statusPort?: number;
  /** A member of a cluster: every member (this one included) and which one this is. */
  cluster?: {
    members: readonly ClusterMemberSpec[];
    self: string;
    token: string;
    state: 'new' | 'existing';
    leaderCheckInterval?: number;
    handoverDelay?: number;
    memberFenceTimeout?: number;
  };
  /**
   * A single member that joins a running cluster (a live walk's destination): its member name and every
   * member of the cluster (`name=peerURL`, this one included) for its first start; kept for its restarts.
   */
  join?: { name: string; members: readonly { name: string; peerUrl: string }[] };
  /** A single member's first start makes it a cluster of its own, keeping its data (a live walk's way out). */
  forceNewCluster?: boolean;
  ownerCheckInterval?: number;
  unknownGrace?: number;
  checkTimeout?: number;
  fullSnapshotInterval?: number;
  deltaSnapshotInterval?: number;
  /** The write guard's limit (docs/design.md section 4). */
  backupLagLimit?: number;
  compression?: Compression;
  /** Restore the data dir from the bucket before serving; `ahead`: and wait unserved for the catch-up. */
  restore?: { ahead?: boolean; expectedLastRevision?: number; file?: string; acceptDigestMismatch?: boolean };
}

/** The command line of one sidecar, `backup-restore serve ...`, after the program's own name. */
export function serveArgv(f: ServeFlags): string[] {
  const c = f.cluster;
  return [
    'backup-restore',
    'serve',
    '--technical-id',
    f.technicalID,
    ...text('--prefix', f.prefix),
    '--owner-record',
    f.ownerRecord,
    '--identity',
    f.identity,
    '--bucket',
    f.bucket,
    ...text('--region', f.region),
    ...text('--s3-endpoint', f.s3Endpoint),
    ...(f.owner.mode === 'api'
      ? [
          '--owner-mode',
          'api',
          '--hosted-zone-id',
          f.owner.hostedZoneId,
          ...text('--route53-endpoint', f.owner.route53Endpoint),
        ]
      : ['--owner-mode', 'dns', ...(f.owner.servers?.length ? ['--dns-server', ...f.owner.servers] : [])]),
    '--data-dir',
    f.dataDir,
    ...text('--etcd-log', f.etcdLog),
    ...text('--host', f.host),
    ...count('--client-port', f.clientPort),
    ...count('--peer-port', f.peerPort),
    ...count('--private-port', f.privatePort),
    ...count('--api-server-port', f.apiServerPort),
    ...(f.peerTls
      ? [
          '--peer-cert-file',
          f.peerTls.certFile,
          '--peer-key-file',
          f.peerTls.keyFile,
          '--peer-trusted-ca-file',
          f.peerTls.trustedCaFile,
        ]
      : []),
    ...text('--status-host', f.statusHost),
    ...count('--status-port', f.statusPort),
    ...(c
      ? [
          ...c.members.flatMap((m) => ['--member', formatMemberFlag(m)]),
          '--member-name',
          c.self,
          '--cluster-token',
          c.token,
          '--cluster-state',
          c.state,
          ...duration('--leader-check-interval', c.leaderCheckInterval),
          ...duration('--handover-delay', c.handoverDelay),
          ...duration('--member-fence-timeout', c.memberFenceTimeout),
        ]
      : []),
    ...(f.join
      ? ['--join-name', f.join.name, ...f.join.members.flatMap((m) => ['--join-member', `${m.name}=${m.peerUrl}`])]
      : []),
    ...(f.forceNewCluster ? ['--force-new-cluster'] : []),
    ...duration('--owner-check-interval', f.ownerCheckInterval),
    ...duration('--unknown-grace', f.unknownGrace),
    ...duration('--check-timeout', f.checkTimeout),
    ...duration('--delta-snapshot-interval', f.deltaSnapshotInterval),
    ...duration('--full-snapshot-interval', f.fullSnapshotInterval),
    ...duration('--backup-lag-limit', f.backupLagLimit),
    ...text('--compression', f.compression),
    ...(f.restore
      ? [
          '--restore',
          ...(f.restore.ahead ? ['--restore-ahead'] : []),
          ...count('--expected-revision', f.restore.expectedLastRevision),
          ...text('--restore-file', f.restore.file),
          ...(f.restore.acceptDigestMismatch ? ['--accept-digest-mismatch'] : []),
        ]
      : []),
  ];
}

const text = (flag: string, value: string | undefined) => (value === undefined ? [] : [flag, value]);
const count = (flag: string, value: number | undefined) => (value === undefined ? [] : [flag, String(value)]);
const duration = (flag: string, ms: number | undefined) => (ms === undefined ? [] : [flag, durationFlag(ms)]);

/** Where a single etcd listens unless its flags say otherwise. */
export const ETCD_DEFAULTS = { host: '127.0.0.1', clientPort: 2379, peerPort: 2380 } as const;

/** The options of a store: `serve` and `restore` share them. */
export function storeOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--bucket <name>', "the seed's backup bucket")
    .option('--prefix <path>', 'folder in the bucket above <technical-id>/v2/')
    .option('--s3-endpoint <url>', 'S3 endpoint (the emulator); default AWS or AWS_ENDPOINT_URL')
    .option('--region <region>', 'AWS region');
}

/** The options of a single etcd's data dir and ports: `serve` and `restore` share them. */
export function etcdOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--data-dir <dir>', "etcd's data dir")
    .option('--host <host>', `loopback address etcd listens on (default ${ETCD_DEFAULTS.host})`)
    .option('--client-port <port>', `public client port (default ${ETCD_DEFAULTS.clientPort})`)
    .option(
      '--private-port <port>',
      "etcd's own client port, the sidecar's alone; the public one forwards to it while etcd serves (default: a free one)",
    )
    .option('--peer-port <port>', `peer port of the single member (default ${ETCD_DEFAULTS.peerPort})`)
    .option(
      '--api-server-port <port>',
      "the shoot's kube-apiserver's client port to a single member: held until etcd serves, read-only while restored ahead",
    )
    .option('--etcd-log <file>', "append etcd's output here")
    .option(
      '--peer-cert-file <file>',
      "etcd's peer certificate (server and client) from the shoot's etcd peer CA; with it every peer URL is https://",
    )
    .option('--peer-key-file <file>', 'with --peer-cert-file: its private key')
    .option(
      '--peer-trusted-ca-file <file>',
      "with --peer-cert-file: the shoot's etcd peer CA; a peer is trusted only with a certificate from it",
    );
}

/** Every option of `serve` on `cmd`; commander fills no default, so that what was given is what parses. */
export function serveOptions(cmd: Command): Command {
  return etcdOptions(storeOptions(cmd))
    .requiredOption('--technical-id <id>', 'shoot--<project>--<name>: the etcd folder in the bucket')
    .requiredOption('--owner-record <name>', 'owner.<shoot>.<project>.<internal-domain>')
    .requiredOption('--identity <identity>', "this seed's identity (the owner record's value while it owns the shoot)")
    .addOption(
      new Option('--owner-mode <mode>', 'how the owner record is looked up (default dns)').choices(['dns', 'api']),
    )
    .option('--hosted-zone-id <id>', 'API mode: the Route 53 zone of the owner records')
    .option('--route53-endpoint <url>', 'API mode: Route 53 endpoint (default: --s3-endpoint)')
    .option('--dns-server <server...>', 'DNS mode: name servers as host or host:port (default: the system resolvers)')
    .option(
      '--owner-check-interval <duration>',
      `how often the owner record is checked (default ${durationFlag(DEFAULT_OWNER_CHECK_INTERVAL_MS)})`,
    )
    .option(
      '--unknown-grace <duration>',
      `how long an unanswered check keeps etcd serving (default ${durationFlag(DEFAULT_UNKNOWN_GRACE_MS)})`,
    )
    .option(
      '--check-timeout <duration>',
      'how long one owner check may take before it counts as unknown (default: the check interval)',
    )
    .option(
      '--full-snapshot-interval <duration>',
      `full snapshot period (default ${durationFlag(DEFAULT_FULL_SNAPSHOT_INTERVAL_MS)})`,
    )
    .option(
      '--delta-snapshot-interval <duration>',
      `delta snapshot period (default ${durationFlag(DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS)})`,
    )
    .option(
      '--backup-lag-limit <duration>',
      'refuse writes while the oldest write not yet uploaded is older than this (default: the delta interval + 30s)',
    )
    .addOption(new Option('--compression <kind>', 'snapshot compression (default gzip)').choices(['gzip', 'none']))
    .option('--restore', 'restore the data dir from the bucket (latest full + deltas) before serving')
    .option(
      '--restore-ahead',
      'restore ahead of a migration (implies --restore) and wait unserved (no owner check, no snapshots) until POST /restore/catch-up',
    )
    .option('--expected-revision <revision>', 'with --restore: fail unless the snapshots reach this revision')
    .option(
      '--accept-digest-mismatch',
      "with --restore: serve even where the restored key space differs from the digest the source's snapshot names (the operator's override)",
    )
    .option(
      '--restore-file <file>',
      'with --restore: the full snapshot, already downloaded (it must be the one the restore plans)',
    )
    .option('--status-port <port>', 'readiness/status port (default 0: a free one)')
    .option(
      '--status-host <host>',
      'address of the status endpoint (in a pod: 0.0.0.0, so that the kubelet probes it; default 127.0.0.1)',
    )
    .option(
      '--member <spec...>',
      'a member of the etcd cluster: name=<n>[,zone=<z>],peer=<url>,client=<url>,private=<url>; one per member, this one included',
    )
    .option('--member-name <name>', "with --member: this sidecar's member")
    .option('--cluster-token <token>', 'with --member: the initial cluster token (new for every cluster built)')
    .addOption(
      new Option(
        '--cluster-state <state>',
        'with --member: new (bootstrap together, the default) or existing (join; without data as a learner)',
      ).choices(['new', 'existing']),
    )
    .option(
      '--join-name <name>',
      'without --member: the single member joins a running cluster under this name (a live migration); with --join-member',
    )
    .option(
      '--join-member <name=url...>',
      "with --join-name: each member of the cluster it joins as name=peer-url, this one included (etcd's --initial-cluster)",
    )
    .option(
      '--force-new-cluster',
      "without --member: the first start makes this member a cluster of its own that keeps its data, the other members removed (etcd's --force-new-cluster; a live walk's way out when the other seed is lost)",
    )
    .option(
      '--leader-check-interval <duration>',
      "with --member: how often the member's role and the fence marker are read (default 1s)",
    )
    .option(
      '--handover-delay <duration>',
      'with --member: how long a new leader waits before it continues the snapshots (default 3s)',
    )
    .option(
      '--member-fence-timeout <duration>',
      'with --member: how long a member may take to acknowledge its fence before it is removed (default 10s)',
    );
}

/** The store options as commander hands them over. */
export interface StoreOptionValues {
  bucket: string;
  prefix?: string;
  s3Endpoint?: string;
  region?: string;
}

/** The etcd options as commander hands them over. */
export interface EtcdOptionValues {
  dataDir: string;
  host?: string;
  clientPort?: string;
  privatePort?: string;
  peerPort?: string;
  apiServerPort?: string;
  etcdLog?: string;
  peerCertFile?: string;
  peerKeyFile?: string;
  peerTrustedCaFile?: string;
}

/** Every `serve` option as commander hands it over: strings, as given. */
export interface ServeOptionValues extends StoreOptionValues, EtcdOptionValues {
  technicalId: string;
  ownerRecord: string;
  identity: string;
  ownerMode?: 'api' | 'dns';
  hostedZoneId?: string;
  route53Endpoint?: string;
  dnsServer?: string[];
  ownerCheckInterval?: string;
  unknownGrace?: string;
  checkTimeout?: string;
  fullSnapshotInterval?: string;
  deltaSnapshotInterval?: string;
  backupLagLimit?: string;
  compression?: Compression;
  restore?: boolean;
  restoreAhead?: boolean;
  acceptDigestMismatch?: boolean;
  expectedRevision?: string;
  restoreFile?: string;
  statusPort?: string;
  statusHost?: string;
  member?: string[];
  memberName?: string;
  joinName?: string;
  joinMember?: string[];
  forceNewCluster?: boolean;
  clusterToken?: string;
  clusterState?: 'new' | 'existing';
  leaderCheckInterval?: string;
  handoverDelay?: string;
  memberFenceTimeout?: string;
}

/** `serve`'s options as values, each checked; a flag that cannot work is a `SidecarConfigError`. */
export function serveFlagsFrom(o: ServeOptionValues): ServeFlags {
  const restore =
    o.restore || o.restoreAhead
      ? withoutUndefined({
          ahead: o.restoreAhead ? true : undefined,
          expectedLastRevision: revision(o.expectedRevision),
          file: o.restoreFile,
          acceptDigestMismatch: o.acceptDigestMismatch ? true : undefined,
        })
      : undefined;
  const flags: ServeFlags = withoutUndefined({
    technicalID: o.technicalId,
    prefix: o.prefix,
    ownerRecord: o.ownerRecord,
    identity: o.identity,
    bucket: o.bucket,
    region: o.region,
    s3Endpoint: o.s3Endpoint,
    owner:
      o.ownerMode === 'api'
        ? withoutUndefined({
            mode: 'api' as const,
            hostedZoneId: o.hostedZoneId ?? '',
            route53Endpoint: o.route53Endpoint,
          })
        : withoutUndefined({ mode: 'dns' as const, servers: o.dnsServer }),
    ...etcdFlagsFrom(o),
    statusHost: o.statusHost,
    statusPort: portFlag(o.statusPort, '--status-port'),
    cluster: clusterFrom(o),
    join: joinFrom(o),
    forceNewCluster: forceFrom(o),
    ownerCheckInterval: ms(o.ownerCheckInterval, '--owner-check-interval'),
    unknownGrace: ms(o.unknownGrace, '--unknown-grace'),
    checkTimeout: ms(o.checkTimeout, '--check-timeout'),
    fullSnapshotInterval: ms(o.fullSnapshotInterval, '--full-snapshot-interval'),
    deltaSnapshotInterval: ms(o.deltaSnapshotInterval, '--delta-snapshot-interval'),
    backupLagLimit: ms(o.backupLagLimit, '--backup-lag-limit'),
    compression: o.compression,
    restore,
  });
  checkPeerSchemes(flags);
  return flags;
}

/** Every peer URL a member is told speaks as it does: TLS to TLS, plain to plain; a mix cannot form a cluster. */
function checkPeerSchemes(f: ServeFlags): void {
  const scheme = `${peerScheme(f.peerTls)}:`;
  // By its prefix: the URL parser refuses host names the flags take (a numeric last label).
  const peers = [
    ...(f.cluster?.members ?? []).map((m) => ({ name: m.name, url: m.peerUrl })),
    ...(f.join?.members ?? []).map((m) => ({ name: m.name, url: m.peerUrl })),
  ];
  const other = peers.find((p) => !p.url.startsWith(`${scheme}//`));
  if (other)
    throw new SidecarConfigError(
      `peer ${other.name} is at ${other.url}, but this member's peers are ${scheme}// (${f.peerTls ? 'with' : 'without'} --peer-cert-file)`,
      f.peerTls ? 'peer-cert-file' : 'member',
    );
}

/** The etcd options as values (`restore` takes them as `serve` does). */
export function etcdFlagsFrom(
  o: EtcdOptionValues,
): Pick<
  ServeFlags,
  'dataDir' | 'etcdLog' | 'host' | 'clientPort' | 'peerPort' | 'privatePort' | 'apiServerPort' | 'peerTls'
> {
  return withoutUndefined({
    dataDir: o.dataDir,
    etcdLog: o.etcdLog,
    host: o.host,
    clientPort: portFlag(o.clientPort, '--client-port'),
    peerPort: portFlag(o.peerPort, '--peer-port'),
    privatePort: portFlag(o.privatePort, '--private-port'),
    apiServerPort: portFlag(o.apiServerPort, '--api-server-port'),
    peerTls: peerTlsFrom(o),
  });
}

function peerTlsFrom(o: EtcdOptionValues): EtcdPeerTls | undefined {
  const given = [o.peerCertFile, o.peerKeyFile, o.peerTrustedCaFile].filter((f) => f !== undefined);
  if (given.length === 0) return undefined;
  if (given.length < 3)
    throw new SidecarConfigError(
      '--peer-cert-file, --peer-key-file and --peer-trusted-ca-file go together: peer TLS is mutual',
      'peer-cert-file',
    );
  return { certFile: o.peerCertFile!, keyFile: o.peerKeyFile!, trustedCaFile: o.peerTrustedCaFile! };
}

function clusterFrom(o: ServeOptionValues): ServeFlags['cluster'] {
  if (o.member === undefined || o.member.length === 0) return undefined;
  if (!o.memberName || !o.clusterToken)
    throw new SidecarConfigError('--member needs --member-name and --cluster-token', 'member');
  return withoutUndefined({
    members: o.member.map(parseMemberFlag),
    self: o.memberName,
    token: o.clusterToken,
    state: o.clusterState ?? 'new',
    leaderCheckInterval: ms(o.leaderCheckInterval, '--leader-check-interval'),
    handoverDelay: ms(o.handoverDelay, '--handover-delay'),
    memberFenceTimeout: ms(o.memberFenceTimeout, '--member-fence-timeout'),
  });
}

function forceFrom(o: ServeOptionValues): true | undefined {
  if (!o.forceNewCluster) return undefined;
  if (o.member !== undefined)
    throw new SidecarConfigError('--force-new-cluster is for a single member, not with --member', 'force-new-cluster');
  return true;
}

function joinFrom(o: ServeOptionValues): ServeFlags['join'] {
  if (o.joinName === undefined && o.joinMember === undefined) return undefined;
  if (o.member !== undefined)
    throw new SidecarConfigError('--join-name is for a single member, not with --member', 'join-name');
  const members = (o.joinMember ?? []).map((text) => {
    const at = text.indexOf('=');
    const peerUrl = text.slice(at + 1);
    if (at <= 0 || !/^https?:\/\/[^/]+:\d+$/.test(peerUrl))
      throw new SidecarConfigError(`--join-member "${text}" is not name=http(s)://host:port`, 'join-member');
    return { name: text.slice(0, at), peerUrl };
  });
  if (!o.joinName || !members.some((m) => m.name === o.joinName))
    throw new SidecarConfigError('--join-name must name one of the --join-member entries', 'join-name');
  return { name: o.joinName, members };
}

function ms(v: string | undefined, flag: string): number | undefined {
  return v === undefined ? undefined : parseDuration(v, flag);
}

function portFlag(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = portNumber(v);
  if (n === undefined) throw new SidecarConfigError(`${flag}: "${v}" is not a port`, flag.slice(2));
  return n;
}

function revision(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isSafeInteger(n) || n < 0)
    throw new SidecarConfigError(`--expected-revision: "${v}" is not a revision`, 'expected-revision');
  return n;
}
