import { Command, Option } from 'commander';
import { DEFAULT_OWNER_CHECK_INTERVAL_MS, DEFAULT_UNKNOWN_GRACE_MS } from '../core/ownership/index.js';
import { mkdirSync } from 'node:fs';
import { plannedPorts } from '../seed/ports.js';
import { ownerLookup, s3Backup, s3SnapshotStore, type OwnerLookupConfig } from '../seed/backup-restore/aws.js';
import { copySnapshots } from '../seed/backup-restore/copy.js';
import { durationFlag, parseDuration } from '../seed/backup-restore/duration.js';
import { EtcdSupervisor } from '../seed/backup-restore/etcd-supervisor.js';
import { restoreFromStore } from '../seed/backup-restore/restorer.js';
import { BackupRestoreSidecar, type SidecarOptions } from '../seed/backup-restore/sidecar.js';
import { RESTORE_REFUSALS } from '../seed/backup-restore/status-server.js';
import { parseMemberFlag, portOf, validateClusterSpec } from '../seed/backup-restore/cluster/spec.js';
import {
  DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS,
  DEFAULT_FULL_SNAPSHOT_INTERVAL_MS,
  type Compression,
} from '../seed/backup-restore/snapshotter.js';
import { logLine, untilSignalled } from './daemon.js';

/**
 * `gardenless backup-restore`: the backup-restore sidecar of one shoot etcd (`serve`, the default), a
 * one-off `restore` of a data dir from the bucket, and the stand-alone `copy` between two buckets.
 * Everything it logs is one JSON object per line on stderr; `serve` prints its addresses on stdout.
 */

interface StoreFlags {
  bucket: string;
  prefix?: string;
  s3Endpoint?: string;
  region?: string;
}

interface EtcdFlags {
  dataDir: string;
  host: string;
  clientPort: string;
  privatePort?: string;
  peerPort: string;
  apiServerPort?: string;
  etcdLog?: string;
}

interface ServeFlags extends StoreFlags, EtcdFlags {
  technicalId: string;
  ownerRecord: string;
  identity: string;
  ownerMode: 'api' | 'dns';
  hostedZoneId?: string;
  route53Endpoint?: string;
  dnsServer?: string[];
  ownerCheckInterval: string;
  unknownGrace: string;
  checkTimeout?: string;
  fullSnapshotInterval: string;
  deltaSnapshotInterval: string;
  backupLagLimit?: string;
  compression: Compression;
  restore?: boolean;
  restoreAhead?: boolean;
  acceptDigestMismatch?: boolean;
  expectedRevision?: string;
  restoreFile?: string;
  statusPort: string;
  statusHost?: string;
  member?: string[];
  memberName?: string;
  clusterToken?: string;
  clusterState: 'new' | 'existing';
  leaderCheckInterval?: string;
  handoverDelay?: string;
  memberFenceTimeout?: string;
}

function storeOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--bucket <name>', "the seed's backup bucket")
    .option('--prefix <path>', 'folder in the bucket above <technical-id>/v2/')
    .option('--s3-endpoint <url>', 'S3 endpoint (the emulator); default AWS or AWS_ENDPOINT_URL')
    .option('--region <region>', 'AWS region');
}

function etcdOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--data-dir <dir>', "etcd's data dir")
    .option('--host <host>', 'loopback address etcd listens on', '127.0.0.1')
    .option('--client-port <port>', 'public client port', '2379')
    .option(
      '--private-port <port>',
      "etcd's own client port, the sidecar's alone; the public one forwards to it while etcd serves (default: a free one)",
    )
    .option('--peer-port <port>', 'peer port of the single member', '2380')
    .option(
      '--api-server-port <port>',
      "the shoot's kube-apiserver's client port to a single member: held until etcd serves, read-only while restored ahead",
    )
    .option('--etcd-log <file>', "append etcd's output here");
}

/** The folder of this etcd in the bucket: `[<prefix>/]<technicalID>`. */
function folder(technicalID: string, prefix: string | undefined): string {
  const p = prefix?.replace(/^\/+|\/+$/g, '');
  return p ? `${p}/${technicalID}` : technicalID;
}

function port(value: string, field: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new Error(`${field}: "${value}" is not a port`);
  return n;
}

async function supervisorFlags(flags: EtcdFlags) {
  const clientPort = port(flags.clientPort, '--client-port');
  const peerPort = port(flags.peerPort, '--peer-port');
  const apiServerPort = flags.apiServerPort === undefined ? undefined : port(flags.apiServerPort, '--api-server-port');
  return {
    dataDir: flags.dataDir,
    host: flags.host,
    clientPort,
    // Planned, as the client and peer ports are: etcd binds it again on every fence.
    privatePort:
      flags.privatePort === undefined
        ? (
            await plannedPorts(1, { avoid: new Set([clientPort, peerPort, ...(apiServerPort ? [apiServerPort] : [])]) })
          )[0]!
        : port(flags.privatePort, '--private-port'),
    peerPort,
    ...(apiServerPort === undefined ? {} : { apiServerPort }),
    ...(flags.etcdLog ? { logFile: flags.etcdLog } : {}),
  };
}

async function serve(flags: ServeFlags): Promise<void> {
  const ownerCheckInterval = parseDuration(flags.ownerCheckInterval, '--owner-check-interval');
  const lookupConfig: OwnerLookupConfig =
    flags.ownerMode === 'api'
      ? {
          mode: 'api',
          hostedZoneId: flags.hostedZoneId ?? '',
          ...awsTarget(flags.route53Endpoint ?? flags.s3Endpoint, flags.region),
        }
      : { mode: 'dns', ownerCheckInterval, ...(flags.dnsServer ? { servers: flags.dnsServer } : {}) };
  mkdirSync(flags.dataDir, { recursive: true });
  const { store, rangedReader } = s3Backup({ bucket: flags.bucket, ...awsTarget(flags.s3Endpoint, flags.region) });
  const cluster = clusterFlags(flags);
  const self = cluster?.members.find((m) => m.name === cluster.self);
  const sidecar = await BackupRestoreSidecar.start({
    technicalID: folder(flags.technicalId, flags.prefix),
    // A member's ports are those of its --member entry.
    etcd: self
      ? {
          dataDir: flags.dataDir,
          host: new URL(self.clientUrl).hostname,
          clientPort: portOf(self.clientUrl),
          privatePort: portOf(self.privateUrl),
          peerPort: portOf(self.peerUrl),
          ...(flags.etcdLog ? { logFile: flags.etcdLog } : {}),
        }
      : await supervisorFlags(flags),
    ...(cluster ? { cluster } : {}),
    store,
    rangedReader,
    owner: { lookup: ownerLookup(lookupConfig), recordName: flags.ownerRecord, identity: flags.identity },
    ownerCheckInterval,
    unknownGrace: parseDuration(flags.unknownGrace, '--unknown-grace'),
    ...(flags.checkTimeout ? { checkTimeout: parseDuration(flags.checkTimeout, '--check-timeout') } : {}),
    fullSnapshotInterval: parseDuration(flags.fullSnapshotInterval, '--full-snapshot-interval'),
    deltaSnapshotInterval: parseDuration(flags.deltaSnapshotInterval, '--delta-snapshot-interval'),
    ...(flags.backupLagLimit ? { backupLagLimit: parseDuration(flags.backupLagLimit, '--backup-lag-limit') } : {}),
    compression: flags.compression,
    ...(flags.restore || flags.restoreAhead
      ? {
          restore: {
            ...(flags.expectedRevision === undefined ? {} : { expectedLastRevision: Number(flags.expectedRevision) }),
            ...(flags.restoreFile ? { file: flags.restoreFile } : {}),
            ...(flags.restoreAhead ? { ahead: true } : {}),
            ...(flags.acceptDigestMismatch ? { acceptDigestMismatch: true } : {}),
          },
        }
      : {}),
    statusPort: port(flags.statusPort, '--status-port'),
    ...(flags.statusHost ? { statusHost: flags.statusHost } : {}),
    log: logLine,
  }).catch((error: unknown) => {
    // The agent reads this line: snapshots that do not restore are no runtime fault (EtcdRestoreFailed).
    if (error instanceof Error && RESTORE_REFUSALS.has(error.name))
      console.log(
        JSON.stringify({
          event: 'restore-refused',
          name: error.name,
          error: error.message,
          ...('digests' in error ? { digests: error.digests } : {}),
        }),
      );
    throw error;
  });
  console.log(
    JSON.stringify({ event: 'started', statusUrl: sidecar.statusUrl, clientUrl: sidecar.clientUrl, pid: process.pid }),
  );
  await untilSignalled(() => sidecar.stop());
}

/** The cluster this sidecar's etcd is a member of, from `--member` (every member) and `--member-name` (this one). */
function clusterFlags(flags: ServeFlags): SidecarOptions['cluster'] {
  if (flags.member === undefined || flags.member.length === 0) return undefined;
  if (!flags.memberName || !flags.clusterToken) throw new Error('--member needs --member-name and --cluster-token');
  const cluster = {
    self: flags.memberName,
    members: flags.member.map(parseMemberFlag),
    token: flags.clusterToken,
    state: flags.clusterState,
  };
  validateClusterSpec(cluster);
  return {
    ...cluster,
    ...(flags.leaderCheckInterval
      ? { leaderCheckInterval: parseDuration(flags.leaderCheckInterval, '--leader-check-interval') }
      : {}),
    ...(flags.handoverDelay ? { handoverDelay: parseDuration(flags.handoverDelay, '--handover-delay') } : {}),
    ...(flags.memberFenceTimeout
      ? { memberFenceTimeout: parseDuration(flags.memberFenceTimeout, '--member-fence-timeout') }
      : {}),
  };
}

function awsTarget(endpoint: string | undefined, region: string | undefined) {
  return { ...(endpoint ? { endpoint } : {}), ...(region ? { region } : {}) };
}

/** Registers `backup-restore` (with `serve`, `restore` and `copy`) on a commander program. */
export function registerBackupRestoreCommand(program: Command): Command {
  const group = program
    .command('backup-restore')
    .description('the backup-restore sidecar of one shoot etcd: snapshots, owner watchdog, restore, copy');
  // `--region` is also the program's own option (SigV4 signing of garden calls), and commander gives the
  // value to the program wherever it stands on the command line: the subcommands take it from there.
  // Without it a sidecar where AWS_REGION is not set (a pod) has no region for S3 and Route 53.
  group.hook('preAction', (_group, action) => {
    const region = action.optsWithGlobals<{ region?: string }>().region;
    if (region !== undefined && action.opts<{ region?: string }>().region === undefined)
      action.setOptionValue('region', region);
  });

  const serveCmd = group
    .command('serve', { isDefault: true })
    .description('supervise etcd, snapshot it to the bucket, fence it when the owner record says so, serve readiness')
    .requiredOption('--technical-id <id>', 'shoot--<project>--<name>: the etcd folder in the bucket')
    .requiredOption('--owner-record <name>', 'owner.<shoot>.<project>.<internal-domain>')
    .requiredOption('--identity <identity>', "this seed's identity (the owner record's value while it owns the shoot)")
    .addOption(
      new Option('--owner-mode <mode>', 'how the owner record is looked up').choices(['dns', 'api']).default('dns'),
    )
    .option('--hosted-zone-id <id>', 'API mode: the Route 53 zone of the owner records')
    .option('--route53-endpoint <url>', 'API mode: Route 53 endpoint (default: --s3-endpoint)')
    .option('--dns-server <server...>', 'DNS mode: name servers as host or host:port (default: the system resolvers)')
    .option(
      '--owner-check-interval <duration>',
      'how often the owner record is checked',
      durationFlag(DEFAULT_OWNER_CHECK_INTERVAL_MS),
    )
    .option(
      '--unknown-grace <duration>',
      'how long an unanswered check keeps etcd serving',
      durationFlag(DEFAULT_UNKNOWN_GRACE_MS),
    )
    .option(
      '--check-timeout <duration>',
      'how long one owner check may take before it counts as unknown (default: the check interval)',
    )
    .option(
      '--full-snapshot-interval <duration>',
      'full snapshot period',
      durationFlag(DEFAULT_FULL_SNAPSHOT_INTERVAL_MS),
    )
    .option(
      '--delta-snapshot-interval <duration>',
      'delta snapshot period',
      durationFlag(DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS),
    )
    .option(
      '--backup-lag-limit <duration>',
      'refuse writes while the oldest write not yet uploaded is older than this (default: the delta interval + 30s)',
    )
    .addOption(new Option('--compression <kind>', 'snapshot compression').choices(['gzip', 'none']).default('gzip'))
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
    .option('--status-port <port>', 'readiness/status port (0: a free one)', '0')
    .option(
      '--status-host <host>',
      'address of the status endpoint (in a pod: 0.0.0.0, so that the kubelet probes it)',
      '127.0.0.1',
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
        'with --member: new (bootstrap together) or existing (join; without data as a learner)',
      )
        .choices(['new', 'existing'])
        .default('new'),
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
  etcdOptions(storeOptions(serveCmd)).action((flags: ServeFlags) => serve(flags));

  const restoreCmd = group
    .command('restore')
    .description('restore the data dir from the bucket (latest full + later deltas, revisions verified), then stop')
    .requiredOption('--technical-id <id>', 'the etcd folder in the bucket')
    .option('--expected-revision <revision>', 'fail unless the snapshots reach this revision');
  etcdOptions(storeOptions(restoreCmd)).action(
    async (flags: StoreFlags & EtcdFlags & { technicalId: string; expectedRevision?: string }) => {
      const supervisor = new EtcdSupervisor(await supervisorFlags(flags));
      const { store, rangedReader } = s3Backup({ bucket: flags.bucket, ...awsTarget(flags.s3Endpoint, flags.region) });
      try {
        const result = await restoreFromStore({
          store,
          rangedReader,
          technicalID: folder(flags.technicalId, flags.prefix),
          supervisor,
          stagingDir: `${flags.dataDir}.staging`,
          ...(flags.expectedRevision === undefined ? {} : { expectedLastRevision: Number(flags.expectedRevision) }),
        });
        console.log(JSON.stringify(result));
      } finally {
        await supervisor.stop();
      }
    },
  );

  group
    .command('copy')
    .description('copy the snapshots a restore needs (or all) from one bucket to another, server-side, idempotently')
    .requiredOption('--technical-id <id>', 'the etcd folder in both buckets')
    .requiredOption('--source-bucket <name>', 'bucket to copy from')
    .requiredOption('--destination-bucket <name>', 'bucket to copy to')
    .option('--prefix <path>', 'folder in the buckets above <technical-id>/v2/')
    .option('--all', 'copy every snapshot, not only what the restore needs')
    .option('--wait-for-final <duration>', 'wait this long for a final snapshot in the source first')
    .option('--s3-endpoint <url>', 'S3 endpoint (the emulator)')
    .option('--region <region>', 'AWS region')
    .action(
      async (flags: {
        technicalId: string;
        sourceBucket: string;
        destinationBucket: string;
        prefix?: string;
        all?: boolean;
        waitForFinal?: string;
        s3Endpoint?: string;
        region?: string;
      }) => {
        const target = awsTarget(flags.s3Endpoint, flags.region);
        const source = s3SnapshotStore({ bucket: flags.sourceBucket, ...target });
        const destination = s3SnapshotStore({ bucket: flags.destinationBucket, ...target });
        const result = await copySnapshots({
          source,
          destination,
          copier: destination.copierFrom(source),
          technicalID: folder(flags.technicalId, flags.prefix),
          all: flags.all ?? false,
          ...(flags.waitForFinal === undefined
            ? {}
            : { waitForFinalMs: parseDuration(flags.waitForFinal, '--wait-for-final') }),
        });
        console.log(JSON.stringify(result));
      },
    );
  return group;
}
