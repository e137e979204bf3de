import type { Command } from 'commander';
import { DEFAULT_OWNER_CHECK_INTERVAL_MS, DEFAULT_UNKNOWN_GRACE_MS } from '../core/ownership/index.js';
import { mkdirSync } from 'node:fs';
import { plannedPorts } from '../seed/ports.js';
import { ownerLookup, s3Backup, s3SnapshotStore, type OwnerLookupConfig } from '../seed/backup-restore/aws.js';
import { copySnapshots } from '../seed/backup-restore/copy.js';
import { parseDuration } from '../seed/backup-restore/duration.js';
import { EtcdSupervisor } from '../seed/backup-restore/etcd-supervisor.js';
import { restoreFromStore } from '../seed/backup-restore/restorer.js';
import { BackupRestoreSidecar } from '../seed/backup-restore/sidecar.js';
import { RESTORE_REFUSALS } from '../seed/backup-restore/status-server.js';
import { portOf, validateClusterSpec } from '../seed/backup-restore/cluster/spec.js';
import {
  ETCD_DEFAULTS,
  etcdFlagsFrom,
  etcdOptions,
  serveFlagsFrom,
  serveOptions,
  storeOptions,
  type EtcdOptionValues,
  type ServeFlags,
  type ServeOptionValues,
  type StoreOptionValues,
} from '../seed/backup-restore/serve-flags.js';
import {
  DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS,
  DEFAULT_FULL_SNAPSHOT_INTERVAL_MS,
} from '../seed/backup-restore/snapshotter.js';
import { logLine, untilSignalled } from './daemon.js';

/**
 * `gardenless backup-restore`: the backup-restore sidecar of one shoot etcd (`serve`, the default), a
 * one-off `restore` of a data dir from the bucket, and the stand-alone `copy` between two buckets.
 * Everything it logs is one JSON object per line on stderr; `serve` prints its addresses on stdout.
 */

/** The folder of this etcd in the bucket: `[<prefix>/]<technicalID>`. */
function folder(technicalID: string, prefix: string | undefined): string {
  const p = prefix?.replace(/^\/+|\/+$/g, '');
  return p ? `${p}/${technicalID}` : technicalID;
}

/** A single etcd's supervisor from its flags, the defaults filled in. */
async function supervisorFlags(flags: ReturnType<typeof etcdFlagsFrom>) {
  const clientPort = flags.clientPort ?? ETCD_DEFAULTS.clientPort;
  const peerPort = flags.peerPort ?? ETCD_DEFAULTS.peerPort;
  const apiServerPort = flags.apiServerPort;
  return {
    dataDir: flags.dataDir,
    host: flags.host ?? ETCD_DEFAULTS.host,
    clientPort,
    // Planned, as the client and peer ports are: etcd binds it again on every fence.
    privatePort:
      flags.privatePort ??
      (
        await plannedPorts(1, { avoid: new Set([clientPort, peerPort, ...(apiServerPort ? [apiServerPort] : [])]) })
      )[0]!,
    peerPort,
    ...(apiServerPort === undefined ? {} : { apiServerPort }),
    ...(flags.etcdLog ? { logFile: flags.etcdLog } : {}),
    ...(flags.peerTls ? { peerTls: flags.peerTls } : {}),
  };
}

/** A single member joining a running cluster: its name, and how its first start joins (etcd ignores it once it holds data). */
function joinOf(join: ServeFlags['join']) {
  if (join === undefined) return {};
  return {
    name: join.name,
    // etcd reads the token only when it bootstraps a cluster, which a joining member never does.
    join: { state: 'existing' as const, token: 'live-join', initialCluster: join.members },
  };
}

async function serve(flags: ServeFlags): Promise<void> {
  const ownerCheckInterval = flags.ownerCheckInterval ?? DEFAULT_OWNER_CHECK_INTERVAL_MS;
  const lookupConfig: OwnerLookupConfig =
    flags.owner.mode === 'api'
      ? {
          mode: 'api',
          hostedZoneId: flags.owner.hostedZoneId,
          ...awsTarget(flags.owner.route53Endpoint ?? flags.s3Endpoint, flags.region),
        }
      : { mode: 'dns', ownerCheckInterval, ...(flags.owner.servers ? { servers: flags.owner.servers } : {}) };
  mkdirSync(flags.dataDir, { recursive: true });
  const { store, rangedReader } = s3Backup({ bucket: flags.bucket, ...awsTarget(flags.s3Endpoint, flags.region) });
  const { cluster } = flags;
  if (cluster) validateClusterSpec(cluster);
  const self = cluster?.members.find((m) => m.name === cluster.self);
  const sidecar = await BackupRestoreSidecar.start({
    technicalID: folder(flags.technicalID, flags.prefix),
    // A member's ports are those of its --member entry.
    etcd: self
      ? {
          dataDir: flags.dataDir,
          host: new URL(self.clientUrl).hostname,
          clientPort: portOf(self.clientUrl),
          privatePort: portOf(self.privateUrl),
          peerPort: portOf(self.peerUrl),
          ...(flags.etcdLog ? { logFile: flags.etcdLog } : {}),
          ...(flags.peerTls ? { peerTls: flags.peerTls } : {}),
        }
      : {
          ...(await supervisorFlags(flags)),
          ...joinOf(flags.join),
          ...(flags.forceNewCluster ? { forceNewCluster: true } : {}),
        },
    ...(cluster ? { cluster } : {}),
    store,
    rangedReader,
    owner: { lookup: ownerLookup(lookupConfig), recordName: flags.ownerRecord, identity: flags.identity },
    ownerCheckInterval,
    unknownGrace: flags.unknownGrace ?? DEFAULT_UNKNOWN_GRACE_MS,
    ...(flags.checkTimeout === undefined ? {} : { checkTimeout: flags.checkTimeout }),
    fullSnapshotInterval: flags.fullSnapshotInterval ?? DEFAULT_FULL_SNAPSHOT_INTERVAL_MS,
    deltaSnapshotInterval: flags.deltaSnapshotInterval ?? DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS,
    ...(flags.backupLagLimit === undefined ? {} : { backupLagLimit: flags.backupLagLimit }),
    compression: flags.compression ?? 'gzip',
    ...(flags.restore ? { restore: flags.restore } : {}),
    statusPort: flags.statusPort ?? 0,
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

  serveOptions(
    group
      .command('serve', { isDefault: true })
      .description(
        'supervise etcd, snapshot it to the bucket, fence it when the owner record says so, serve readiness',
      ),
  ).action((options: ServeOptionValues) => serve(serveFlagsFrom(options)));

  const restoreCmd = group
    .command('restore')
    .description('restore the data dir from the bucket (latest full + later deltas, revisions verified), then stop')
    .requiredOption('--technical-id <id>', 'the etcd folder in the bucket')
    .option('--expected-revision <revision>', 'fail unless the snapshots reach this revision');
  etcdOptions(storeOptions(restoreCmd)).action(
    async (flags: StoreOptionValues & EtcdOptionValues & { technicalId: string; expectedRevision?: string }) => {
      const supervisor = new EtcdSupervisor(await supervisorFlags(etcdFlagsFrom(flags)));
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
