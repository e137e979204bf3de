/**
 * Migration downtime: how long a shoot's etcd takes no write while its control plane moves, for etcds
 * of about 10, 100 and 500 MB, on the good path, on the bad path with a live source (mode `bad` while
 * the source's agent and sidecar run: the source fences on the owner change, scenario S2 without the cut),
 * and on the live path (mode `live`: the etcd cluster walks to the destination under raft).
 *
 * The landscape: the local landscape's configuration (local/fleet.ts: the stack context `npm start`
 * deploys, its agents' heartbeat, delta interval and ownership timings). A running `npm start` landscape
 * is used as it is; without one, a private emulator with the stack deployed the same way (stopped at the
 * end). Two seeds of the bench's own, each with the real seed agent (in this process, as the scenario
 * tests run it; `localSeedAgent`) starting real sidecar processes with real etcd, and one shoot, filled
 * to each size in turn and migrated back and forth between them: the paths alternate, so that load
 * on the machine falls on each alike.
 *
 * Before each run the current source is brought to the size: the previous run's writer keys deleted,
 * etcd compacted and defragmented, values of 256 KB of random bytes put until its database (`dbSize`) is
 * at least the size, then a full snapshot by its sidecar, so each migration starts as a real seed's: a
 * full snapshot in the bucket and deltas after it. Then the scenario writer (harness/scenario,
 * its default six main loops, >= 50 acknowledged writes/s) writes to the source's and the destination's etcd for a
 * while, and the migration is requested.
 *
 * Beside it a kube-level writer creates ConfigMaps through the shoot's admin kubeconfig as the garden issues
 * it (the API domain through the landscape's proxy, the seed's load balancer, the shoot's real
 * kube-apiserver; @kubernetes/client-node with its own reconnects, >= 20 acknowledged writes/s).
 *
 * Each run prints the write-unavailability window (the source's last acknowledged write to the
 * destination's first, from the writer's record) and its division into phases (see DEFINITIONS), and the
 * kube-level window (the kube writer's longest time without an acknowledgement after the request) and its
 * parts (KUBE_DEFINITIONS); then
 * per size and path the median and maximum, each phase's share, the record's steps inside the window,
 * the 500 MB / 10 MB ratio and the issue's aims.
 *
 *   npm run bench:downtime
 *   BENCH_DOWNTIME_SIZES_MB=10 BENCH_DOWNTIME_RUNS=1 BENCH_DOWNTIME_PATHS=good npm run bench:downtime   (a short debug run)
 *   BENCH_DOWNTIME_TRACE=<dir> ...   (per run, both writers' acknowledgements and failures and the record's steps as JSON in <dir>; each agent's log)
 */
import { startBenchRun, type BenchAim, type Cell } from './bench-results.js';
import { S3Client } from '@aws-sdk/client-s3';
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3 } from 'etcd3';
import { GardenClient } from '../adapters/http/garden-client.js';
import { MIGRATION_STEP_IDS, MIGRATION_STEPS } from '../core/migration/steps.js';
import type { MigrationRecord } from '../core/migration/record.js';
import type { HostedControlPlane } from '../core/model/seed.js';
import type { LastOperation } from '../core/model/common.js';
import { technicalID } from '../core/model/names.js';
import { fenceBound, ownershipTimings } from '../core/ownership/index.js';
import { LANDSCAPE_AGENT_SETTINGS, LANDSCAPE_OWNERSHIP_TIMINGS, LANDSCAPE_STACK_CONTEXT } from '../local/fleet.js';
import { localSeedAgent } from '../seed/agent/local-agent.js';
import { s3Backup } from '../seed/backup-restore/aws.js';
import { parseDuration } from '../seed/backup-restore/duration.js';
import { fixture } from '../harness/fixtures/index.js';
import {
  acknowledgedRate,
  checkNoAcknowledgedWriteLost,
  epochNow,
  gatewayPut,
  readEtcdContent,
  resolving,
  startWriter,
} from '../harness/scenario/index.js';
import { until } from '../harness/until.js';
import { benchLandscape, etcdDbSize, fillEtcdTo, landscapeSeedAgent } from './bench-support.js';
import {
  destinationRecord,
  downtimeAims,
  firstEventAfter,
  formatAim,
  ISSUE_AIMS,
  KUBE_SHARES,
  kubeAims,
  kubeWindow,
  kubeWindowShares,
  type KubeShare,
  parseSidecarLog,
  phaseIntervals,
  phaseShares,
  SHARES,
  shareFractions,
  sourceRecord,
  stepsInWindow,
  summarize,
  supersededSnapshots,
  writeWindow,
  liveWriteWindow,
  type MigrationPathName,
  pathLabel,
  type Share,
  type SidecarLogEvent,
} from './downtime-figures.js';
import { emulatorCredentials } from '../local/aws-env.js';
import { realKubeBinDir } from '../harness/kube/binaries.js';
import { portFreeOn } from '../harness/local-seed.js';
import { missingKubeWrites, startKubeWriter, type KubeWriter } from '../harness/scenario/kube-writer.js';
import { kubeconfigOf } from '../cli/kubeconfig-command.js';
import type { KubeconfigResponse } from '../core/kubeconfig/request.js';

const env = process.env;
if (env.BENCH_DOWNTIME_TRACE) mkdirSync(env.BENCH_DOWNTIME_TRACE, { recursive: true });
const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
// Smallest first: the fill only adds to etcd (its values stay from one size to the next), so a smaller
// size after a larger one would measure the larger one's database again.
const SIZES_MB = list(env.BENCH_DOWNTIME_SIZES_MB ?? '10,100,500')
  .map(Number)
  .sort((a, b) => a - b);
const RUNS = Number(env.BENCH_DOWNTIME_RUNS ?? 5);
const PATHS = list(env.BENCH_DOWNTIME_PATHS ?? 'good,bad,live') as MigrationPathName[];
/** How long the writer writes to the source before the migration is requested. */
const WRITE_BEFORE_MS = Number(env.BENCH_DOWNTIME_WRITE_BEFORE_MS ?? 5_000);
/** How often a migration that ended in Error is resumed before the bench gives up. */
const MAX_RESUMES = 2;
if (
  SIZES_MB.some((s) => !(s > 0)) ||
  !(Number.isInteger(RUNS) && RUNS > 0) ||
  PATHS.some((p) => p !== 'good' && p !== 'bad' && p !== 'live') ||
  !(WRITE_BEFORE_MS >= 0)
) {
  console.error(
    'BENCH_DOWNTIME_SIZES_MB: positive numbers; BENCH_DOWNTIME_RUNS: a positive integer; BENCH_DOWNTIME_PATHS: good, bad and/or live; BENCH_DOWNTIME_WRITE_BEFORE_MS: >= 0',
  );
  process.exit(2);
}
const MB = 1e6;
const COPY_STEPS = MIGRATION_STEP_IDS.filter((id) => id.includes('copy'));
/** The steps whose command has the destination's agent restore (core/migration/steps.ts); the one that started in the window is the activation's. */
const RESTORE_STEPS: readonly string[] = MIGRATION_STEPS.filter(
  (s) => s.actor === 'destination' && s.command === 'restore',
).map((s) => s.id);
const DELTA_INTERVAL_MS = parseDuration(LANDSCAPE_AGENT_SETTINGS.deltaSnapshotInterval, 'deltaSnapshotInterval');
const TIMINGS = ownershipTimings(LANDSCAPE_OWNERSHIP_TIMINGS);
const FENCE_BOUND_MS = fenceBound(LANDSCAPE_OWNERSHIP_TIMINGS);

const DEFINITIONS = [
  "window: from the source's last acknowledged write to the destination's first, both as the writer received etcd's answer (its own record)",
  "live window: on the live path both seeds' members are one cluster while it walks and either may answer: the longest time without any acknowledged write from the last one before the request to the first one after the migration ended (scripts/downtime-figures.ts liveWriteWindow); none of the snapshot paths' phases is in it, so all of it counts as between",
  "fence: from the fence's start (etcd's alarm asked for) until the source's etcd is gone from the public address (its sidecar's gate closed), the final delta read in between (the source sidecar's `fenced` log line: its time, less stoppedAfterMs); etcd goes on running on its private address",
  "final snapshot: the source sidecar's final snapshot: save, compress and upload (its `snapshot` log line with final: true: its time, less its ms)",
  `copy: the migration record's ${COPY_STEPS.join(', ')} step${COPY_STEPS.length === 1 ? '' : 's'} (startedAt to endedAt of GET .../migration; the ids containing "copy" in core/migration/steps.ts)`,
  "restore: the destination sidecar's restore: download, etcdctl snapshot restore, start on the private address, delta replay (its `restored` log line, or `caught-up` for the catch-up of a restore ahead: its time, less timings.total)",
  "activation: from the end of the last of the four above to the destination's first acknowledged write (what its sidecar does before it serves: its first owner check, the unfence (the fence's alarm cleared, the gate opened), and where it takes one first a full snapshot of the restored etcd; the writer's next attempt)",
  "between: the rest of the window, in none of the phases (Step Functions transitions, the waits' polling, commands to the agents and their answers, the sidecar's process start, the steps in between)",
  "each moment of the window counts once: where two phases overlap, for the earlier one in this order (each waits for the one before: a copy waiting for the final snapshot is held up by the snapshot); a share is the phase's time over all windows of the size and path together",
];

const KUBE_DEFINITIONS = [
  "kube window: the kube writer's longest time without an acknowledged ConfigMap create, among those ending after the migration's request, once one was acknowledged after the destination's first etcd write (the writer cannot tell which seed answered: the API domain hides it)",
  'etcd window: the etcd-level window inside it',
  "kube-apiserver: from the etcd window's end until the destination's kube-apiserver answered ready (started on the standby during the pre-copy, it reconnects once its etcd serves and reads the replayed events; started cold where there was no standby; polled every 100 ms through the agent's hosting)",
  "record switch: from then until the API record named the destination (the migration record's switch-api-record step's end), where the kube window ended only after it (a client the source's load balancer handed over waits for no switch)",
  "reconnect: from then until the kube writer's next acknowledgement (the client's new connection, through the source's load balancer while it hands the shoot over, or through the destination's once the proxy's cached answer ran out)",
  'between: the rest (kube writes failing before etcd writes did)',
];
/** The seeds' load balancer addresses: the kubeconfig's port on each seed's own loopback address. */
const LB_HOSTS = ['127.0.0.61', '127.0.0.62'] as const;

const ms = (v: number) => `${Math.round(v).toLocaleString('en-US')} ms`;
const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

function machineFacts(): string[] {
  const cpu = cpus();
  const fsType = (() => {
    try {
      return execFileSync('df', ['--output=fstype', tmpdir()], { encoding: 'utf8' }).trim().split('\n').at(-1);
    } catch {
      return 'unknown';
    }
  })();
  const etcdVersion = (() => {
    try {
      return execFileSync('etcd', ['--version'], { encoding: 'utf8' }).split('\n')[0]!.replace('etcd Version: ', '');
    } catch {
      return 'unknown';
    }
  })();
  const ministack = (
    JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      config: { ministackVersion: string };
    }
  ).config.ministackVersion;
  return [
    `${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory (${(freemem() / 2 ** 30).toFixed(1)} GiB free), work dirs on ${fsType} (${tmpdir()})`,
    `node ${process.version}, etcd ${etcdVersion}, emulator MiniStack ${ministack} (S3 straight to it: no latency model; it serves S3 one request at a time)`,
  ];
}

interface BenchSeed {
  name: string;
  workDir: string;
  agent: ReturnType<typeof localSeedAgent>;
  /** The commands the agent took (its `command` log lines), with their times. */
  events: SidecarLogEvent[];
}

interface RunResult {
  sizeMb: number;
  path: MigrationPathName;
  run: number;
  window: number;
  shares: Record<Share, number>;
  steps: { id: string; ms: number }[];
  /** The writer's acknowledged writes a second on the source before the window. */
  rate: number;
  /** Acknowledged writes missing from the destination afterwards. */
  lost: number;
  /** Why the migration ended in Error before it was resumed; a run with any is left out of the figures. */
  failures: string[];
  kubeWindow: number;
  kubeShares: Record<KubeShare, number>;
  /** The kube writer's acknowledged writes a second before the request. */
  kubeRate: number;
  /** Acknowledged ConfigMaps missing afterwards. */
  kubeLost: number;
}

console.log(
  `bench:downtime  sizes ${SIZES_MB.join(', ')} MB (10^6 bytes), ${RUNS} run(s) per size and path, paths ${PATHS.join(' and ')}; load average at start ${load()} (1 / 5 / 15 min)`,
);
for (const fact of machineFacts()) console.log(`  ${fact}`);
console.log(
  `  fence bound ${ms(FENCE_BOUND_MS)} (core/ownership/fence.ts from the local landscape's ownership timings, local/fleet.ts LANDSCAPE_OWNERSHIP_TIMINGS: ` +
    `dnsCacheTTL ${TIMINGS.dnsCacheTTL} + ownerCheckInterval ${TIMINGS.ownerCheckInterval} + checkTimeout ${TIMINGS.checkTimeout} + unknownGrace ${TIMINGS.unknownGrace} + fenceTime ${TIMINGS.fenceTime} ms)`,
);
console.log(
  `  agents as the landscape runs them: heartbeat every ${LANDSCAPE_AGENT_SETTINGS.heartbeatIntervalSeconds} s, delta snapshot every ${LANDSCAPE_AGENT_SETTINGS.deltaSnapshotInterval}, snapshot compression the sidecar's default`,
);
console.log('definitions:');
for (const d of [...DEFINITIONS, ...KUBE_DEFINITIONS]) console.log(`  ${d}`);

const record = startBenchRun({
  bench: 'downtime',
  title: 'Migration downtime',
  command: 'npm run bench:downtime',
  about:
    "What a user of migration feels: how long the shoot's etcd takes no write, from the source's last acknowledged " +
    "write to the destination's first, as a writer of about 100 writes/s sees them. Two seeds with the real agent " +
    "and the landscape's settings, real sidecars and etcd 3.4; one non-HA shoot filled to each size and migrated " +
    'back and forth, the paths alternating (good; bad with a live source; live: the etcd cluster walks under raft), its real kube-apiserver, ' +
    "kube-controller-manager and kube-scheduler behind each seed's load balancer. Beside it a kube-level writer " +
    "creates ConfigMaps through the shoot's admin kubeconfig (API domain, the landscape's proxy, client-go's own " +
    'reconnects): its window is its longest time without an acknowledgement after the request. The phases and ' +
    "parts are defined in the script's DEFINITIONS and KUBE_DEFINITIONS (printed by every run).",
});
const started = performance.now();
const { deployment, running, close } = await benchLandscape({
  context: { ...LANDSCAPE_STACK_CONTEXT },
  landscapeContext: true,
  apiProxyDomain: LANDSCAPE_STACK_CONTEXT.externalDomain,
});
const kubeBinDir = await realKubeBinDir();
const lbPort = await portFreeOn(LB_HOSTS);
console.log(
  `${running ? 'the running local landscape' : 'a private emulator with the GardenStack deployed as `npm start` deploys it'}: ${deployment.awsEndpoint}, ready after ${ms(performance.now() - started)}`,
);
const aws = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() };
const api = new GardenClient({
  apiUrl: deployment.apiUrl,
  region: deployment.region,
  credentials: emulatorCredentials(),
  timeoutMs: 120_000,
  gatewayRetries: 5,
});
const s3 = new S3Client({ ...aws, forcePathStyle: true });
const workRoot = mkdtempSync(join(tmpdir(), 'gl-bench-downtime-'));
const seeds: BenchSeed[] = [];
const tag = Date.now().toString(36);
const project = `dt${tag}`;
const shootName = 'etcd';
const id = technicalID(project, shootName);

async function startSeed(name: string, index: number, lbHost: string): Promise<BenchSeed> {
  const workDir = join(workRoot, name);
  const events: SidecarLogEvent[] = [];
  const agent = await landscapeSeedAgent({
    deployment,
    name,
    networkIndex: index,
    workDir,
    // The shoot's real kube-apiserver, kube-controller-manager and kube-scheduler, behind the seed's load balancer.
    kubeBinDir,
    loadBalancer: { host: lbHost, port: lbPort },
    sidecar: { deltaSnapshotInterval: DELTA_INTERVAL_MS },
    log: (entry) => {
      if (entry.event === 'command') events.push({ ...entry, time: Date.now(), event: 'command' });
      if (env.BENCH_DOWNTIME_TRACE)
        appendFileSync(
          join(env.BENCH_DOWNTIME_TRACE, `agent-${name}.jsonl`),
          `${JSON.stringify({ at: Date.now(), ...entry })}\n`,
        );
    },
  });
  const seed = { name, workDir, agent, events };
  seeds.push(seed);
  await agent.agent.start();
  return seed;
}

/** The shoot's etcd client URL on a seed, from the port its agent keeps in the plane's directory (known before the sidecar starts); undefined when it hosts none. */
function etcdUrl(seed: BenchSeed): string | undefined {
  try {
    const ports = JSON.parse(readFileSync(join(seed.workDir, id, 'ports.json'), 'utf8')) as { client?: number };
    return ports.client ? `http://127.0.0.1:${ports.client}` : undefined;
  } catch {
    return undefined;
  }
}

function sidecarOf(seed: BenchSeed) {
  const sidecar = seed.agent.hosting().sidecar(id);
  if (!sidecar) throw new Error(`seed ${seed.name} runs no sidecar for ${id}`);
  return sidecar;
}

async function controlPlane(seed: BenchSeed): Promise<HostedControlPlane | undefined> {
  const res = await api.request<{ status: { controlPlanes?: HostedControlPlane[] } }>('GET', `/seeds/${seed.name}`);
  return res.body.status.controlPlanes?.find((p) => p.technicalID === id);
}

async function serving(seed: BenchSeed): Promise<void> {
  await until(
    `${id} to serve on ${seed.name}`,
    async () =>
      (await controlPlane(seed))?.active &&
      (await sidecarOf(seed).status())?.ready &&
      (await seed.agent.hosting().apiServer(id)).internalProbe === 'Success',
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}

/** Until the sidecar has uploaded everything etcd holds (no pending events: the last delta is in the bucket). */
async function backedUp(seed: BenchSeed, revision?: number): Promise<void> {
  await until(
    `${seed.name}'s sidecar to upload its deltas`,
    async () => {
      const s = (await sidecarOf(seed).status(5_000))?.snapshots;
      return s && s.pendingEvents === 0 && (revision === undefined || (s.lastRevision ?? 0) >= revision);
    },
    { timeoutMs: 300_000, intervalMs: 250 },
  );
}

let fills = 0;
/**
 * The source at `sizeMb`: the previous writer's keys deleted, etcd compacted (once its sidecar has seen the
 * deletion, so its watch never needs a compacted revision) and defragmented, filled up to the size, its
 * deltas uploaded, then a full snapshot by its sidecar. Returns etcd's database size.
 */
async function prepare(
  seed: BenchSeed,
  sizeMb: number,
  previousPrefix: string | undefined,
): Promise<{ dbSize: number; dbSizeInUse: number; fillMs: number; fullMs: number }> {
  const url = etcdUrl(seed)!;
  const t0 = performance.now();
  if (previousPrefix) {
    const client = new Etcd3({ hosts: url });
    try {
      await client.delete().prefix(`${previousPrefix}/`).exec();
      // The kube writer's ConfigMaps, behind kube-apiserver's back (its watch cache follows the deletes).
      const deleted = await client
        .delete()
        .prefix(`/registry/configmaps/${namespaceOf(previousPrefix)}/`)
        .exec();
      const revision = Number(deleted.header.revision);
      await backedUp(seed, revision);
      await client.kv.compact({ revision: String(revision), physical: true });
      await client.maintenance.defragment();
    } finally {
      client.close();
    }
  }
  fills += 1;
  await fillEtcdTo({
    clientUrl: url,
    bytes: sizeMb * MB,
    // Outside /registry: the shoot's real kube-apiserver would try to decrypt random bytes as Secrets.
    keyPrefix: `/bench/downtime/fill-${fills}/`,
    between: () => backedUp(seed),
  });
  await backedUp(seed);
  const fillMs = performance.now() - t0;
  const t1 = performance.now();
  if ((await sidecarOf(seed).fullSnapshot(600_000)) !== 'taken')
    throw new Error(`${seed.name}'s sidecar took no full snapshot: it does not serve`);
  const fullMs = performance.now() - t1;
  await pruneSnapshots(seed);
  const status = await etcdDbSize(url);
  return { dbSize: status.dbSize, dbSizeInUse: status.dbSizeInUse, fillMs, fullMs };
}

/**
 * The emulator keeps S3 in memory, and every run adds a few copies of the etcd to it (30 runs would hold
 * some 20 GB): before each run the source's bucket keeps only what a restore reads (its latest full
 * snapshot and the deltas after it), and the other seed's bucket, which the run copies into, nothing of
 * this shoot, as for a seed that never hosted it. Deleting superseded snapshots is what a retention
 * policy does; the copy and the restore read the latest history only.
 */
async function pruneSnapshots(source: BenchSeed): Promise<void> {
  for (const seed of seeds) {
    const { store } = s3Backup({ bucket: `gl-backup-${seed.name}`, client: s3 });
    const listing = await store.list(id);
    for (const snapshot of seed === source ? supersededSnapshots(listing) : listing) await store.delete(snapshot.key);
  }
}

/** The last `lines` lines of a log, indented, or why there are none. */
function tail(path: string, lines: number): string {
  try {
    return readFileSync(path, 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .map((l) => `        ${l.slice(0, 400)}`)
      .join('\n');
  } catch (error) {
    return `        (${String(error)})`;
  }
}

/** A log file read through a descriptor opened now: the source's plane directory goes with its control plane mid-migration. */
function openLog(path: string): { read: () => string; close: () => void } {
  const fd = openSync(path, 'r');
  return { read: () => readFileSync(fd, 'utf8'), close: () => closeSync(fd) };
}

async function migration(): Promise<MigrationRecord> {
  return (await api.request<MigrationRecord>('GET', `/projects/${project}/shoots/${shootName}/migration`)).body;
}

/** One migration from `source` to `destination` on `path` under the writer; prints its line and returns its figures. */
/** The kube writer's namespace of a run, from the etcd writer's prefix (`downtime/10-good-1`: `dt-10-good-1`). */
const namespaceOf = (prefix: string) => `dt-${prefix.slice(prefix.indexOf('/') + 1)}`;

/** The admin kubeconfig as `gardenless shoot kubeconfig` prints it, valid for the whole bench (Gardener's maximum, 24 h). */
async function adminKubeconfig(): Promise<string> {
  const res = await api.request<KubeconfigResponse>(
    'POST',
    `/projects/${project}/shoots/${shootName}/adminkubeconfig`,
    {
      body: { spec: { expirationSeconds: 86_400 } },
    },
  );
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`adminkubeconfig: ${res.status} ${JSON.stringify(res.body)}`);
  return kubeconfigOf(res.body);
}

/** The first moment (epoch ms, polled every 100 ms) the seed's kube-apiserver answers ready; stopped by the signal. */
async function apiServerReady(seed: BenchSeed, stop: AbortSignal): Promise<number | undefined> {
  while (!stop.aborted) {
    const probe = await seed.agent
      .hosting()
      .apiServer(id)
      .catch(() => undefined);
    if (probe?.internalProbe === 'Success') return epochNow();
    await sleep(100, undefined, { signal: stop }).catch(() => undefined);
  }
  return undefined;
}

async function measure(input: {
  source: BenchSeed;
  destination: BenchSeed;
  path: MigrationPathName;
  sizeMb: number;
  run: number;
  prefix: string;
  db: Awaited<ReturnType<typeof prepare>>;
  kubeconfig: string;
}): Promise<RunResult> {
  const { source, destination, path, sizeMb, run, prefix, db, kubeconfig } = input;
  const seedOf = { source, destination };
  const kubeWriter: KubeWriter = await startKubeWriter({ kubeconfig, namespace: namespaceOf(prefix) });
  const readyPoll = new AbortController();
  const writer = startWriter({
    endpoints: { source: 'source', destination: 'destination' },
    prefix,
    put: resolving(gatewayPut, (role) => etcdUrl(seedOf[role as 'source' | 'destination'])),
    timeoutMs: 500,
  });
  const sourceLog = openLog(join(source.workDir, id, 'sidecar.log'));
  try {
    await sleep(WRITE_BEFORE_MS);
    const requestedAt = performance.now();
    const requestedAtEpoch = epochNow();
    const destinationReady = apiServerReady(destination, readyPoll.signal);
    // A migration that ends in Error is resumed (migrate again continues at the failed step), as an
    // operator would; the run counts as failed and stays out of the figures.
    const failures: string[] = [];
    let record: MigrationRecord;
    for (;;) {
      const started = await api.request<{ migrationId: string }>(
        'POST',
        `/projects/${project}/shoots/${shootName}/migrate`,
        { body: { destinationSeed: destination.name, mode: path } },
      );
      if (started.status !== 202) throw new Error(`migrate: ${started.status} ${JSON.stringify(started.body)}`);
      record = await until(
        'the migration to settle',
        async () => {
          const m = await migration();
          return m.state !== 'Running' ? m : undefined;
        },
        { timeoutMs: 1_800_000, intervalMs: 500 },
      );
      if (record.state === 'Succeeded' || failures.length >= MAX_RESUMES) break;
      failures.push(`${record.error?.step}: ${record.error?.message}`);
      console.log(
        `      ${sizeMb} MB ${path} run ${run}: migration ${record.id} ended ${record.state} (${failures.at(-1)}), ${((performance.now() - requestedAt) / 1000).toFixed(1)} s after the request; resuming it`,
      );
      console.log(
        `      the destination sidecar's last log lines:\n${tail(join(destination.workDir, id, 'sidecar.log'), 15)}`,
      );
    }
    const migrationMs = performance.now() - requestedAt;
    const settledAtEpoch = epochNow();
    if (record.state !== 'Succeeded')
      throw new Error(
        `migration ${record.id} ended ${record.state} after ${MAX_RESUMES} resumes: ${JSON.stringify(record.error)}`,
      );
    if (record.path !== path) throw new Error(`migration ${record.id} took the ${record.path} path, not ${path}`);
    await until(
      'the destination to acknowledge a write',
      async () => writer.record().acknowledged.some((w) => w.seed === 'destination'),
      { timeoutMs: 120_000, intervalMs: 100 },
    );
    // The destination's first etcd write ends the etcd window; a ConfigMap after it was created there.
    const servedAt = Math.min(
      ...writer
        .record()
        .acknowledged.filter((w) => w.seed === 'destination')
        .map((w) => w.at),
    );
    await until(
      'the kube writer to create a ConfigMap after the destination served',
      async () => kubeWriter.record().acknowledged.some((w) => w.at > servedAt),
      { timeoutMs: 120_000, intervalMs: 100, explain: () => `last error: ${kubeWriter.record().lastError}` },
    );
    await sleep(1_500);
    const written = await writer.stop();
    const kubeWritten = await kubeWriter.stop();
    readyPoll.abort();
    const readyAt = await destinationReady;

    const window =
      path === 'live'
        ? liveWriteWindow(written.acknowledged, requestedAtEpoch, settledAtEpoch)
        : writeWindow(written.acknowledged);
    if (!window.ok) throw new Error(`${sizeMb} MB ${path} run ${run}: no window: ${window.reason}`);
    const content = await readEtcdContent({ clientUrl: etcdUrl(destination)!, prefix: `${prefix}/` });
    const loss = checkNoAcknowledgedWriteLost(written.acknowledged, content);
    const since = Date.parse(record.createdAt);
    const src = sourceRecord(parseSidecarLog(sourceLog.read()), since);
    const dst = destinationRecord(
      parseSidecarLog(readFileSync(join(destination.workDir, id, 'sidecar.log'), 'utf8')),
      since,
    );
    // The live path has none of the snapshot paths' phases: all of its window is between them.
    const shares = phaseShares(
      window,
      path === 'live'
        ? []
        : phaseIntervals({ window, source: src, destination: dst, steps: record.steps, copySteps: COPY_STEPS }),
    );
    const steps = stepsInWindow(window, record.steps);
    const kube = kubeWindow(
      kubeWritten.acknowledged.map((a) => a.at),
      { after: requestedAtEpoch, servedAt: window.to },
    );
    if (!kube.ok) throw new Error(`${sizeMb} MB ${path} run ${run}: no kube window: ${kube.reason}`);
    const switchStep = record.steps.find((s) => s.id === 'switch-api-record');
    const kubeShares = kubeWindowShares(kube, {
      etcd: window,
      ...(readyAt !== undefined ? { apiServerReadyAt: readyAt } : {}),
      ...(switchStep?.endedAt ? { switchedAt: Date.parse(switchStep.endedAt) } : {}),
    });
    const kubeLost = await missingKubeWrites(kubeconfig, kubeWritten);
    const kubeRate = acknowledgedRate(kubeWritten.acknowledged, kubeWritten.startedAt, requestedAtEpoch);
    const rate = acknowledgedRate(
      written.acknowledged.filter((w) => w.seed === 'source'),
      written.startedAt,
      window.from,
    );

    const pct = (v: number) => `${Math.round((100 * v) / window.ms)} %`;
    console.log(
      `${String(sizeMb).padStart(4)} MB ${path.padEnd(4)} run ${run}/${RUNS}${failures.length ? ` (FAILED ${failures.length}x, resumed: not in the figures)` : ''}: window ${ms(window.ms)} | ${SHARES.map((s) => `${s} ${ms(shares[s])} (${pct(shares[s])})`).join(', ')} | ` +
        `etcd ${mb(db.dbSize)} (${mb(db.dbSizeInUse)} in use), ${rate.toFixed(0)} writes/s acknowledged before, ${loss.lost.length} lost; ${seedOf.source.name} -> ${seedOf.destination.name}, request to Succeeded ${(migrationMs / 1000).toFixed(1)} s; load ${load()}`,
    );
    const t = dst.restore?.timings ?? {};
    // The restore command's way to the sidecar: the step starts, the agent takes the command, the new sidecar process begins restoring.
    const restoreStep = record.steps.find(
      (s) => RESTORE_STEPS.includes(s.id) && s.startedAt !== undefined && Date.parse(s.startedAt) >= window.from,
    );
    const stepStart = restoreStep?.startedAt ? Date.parse(restoreStep.startedAt) : undefined;
    const taken =
      stepStart === undefined
        ? undefined
        : firstEventAfter(
            destination.events,
            stepStart,
            (e) => e.event === 'command' && e.type === 'restore' && e.shoot === id,
          );
    const delivery =
      stepStart !== undefined && taken && dst.restore
        ? `${restoreStep!.id} start -> agent took it ${ms(taken.time - stepStart)} -> sidecar ${dst.restore.event === 'restored' ? 'restoring' : 'catching up'} ${ms(dst.restore.from - taken.time)} later -> `
        : '';
    console.log(
      `      fence: by ${src.fence?.by ?? '-'}, writes refused ${src.fence ? `${src.fence.refusingAfterMs} ms` : '-'} after its start, etcd gone ${src.fence ? ms(src.fence.to - src.fence.from) : '-'}; ` +
        `final snapshot: ${src.finalSnapshot ? `${src.finalSnapshot.kind}${src.finalSnapshot.key.endsWith('.gz') ? ' gzip' : ''} ${mb(src.finalSnapshot.bytes)} in ${ms(src.finalSnapshot.to - src.finalSnapshot.from)}` : '-'}; ` +
        `restore: ${dst.restore ? `${delivery}download ${t.download} + etcdctl restore ${t.restore} + start ${t.start} + replay ${t.replay} = ${ms(dst.restore.to - dst.restore.from)}` : '-'}; ` +
        `activation: post-restore full snapshot ${dst.postRestoreSnapshot ? `${mb(dst.postRestoreSnapshot.bytes)} in ${ms(dst.postRestoreSnapshot.ms)}` : '-'}, unfence ${dst.unfence ? ms(dst.unfence.ms) : '-'}`,
    );
    console.log(`      record steps in the window: ${steps.map((s) => `${s.id} ${ms(s.ms)}`).join(', ') || 'none'}`);
    // The pre-copy's rounds (restore-etcd-ahead says where the refresh left the standby) and the copy after the fence.
    for (const step of record.steps.filter(
      (s) => (COPY_STEPS.includes(s.id) || s.id === 'restore-etcd-ahead') && s.message,
    ))
      console.log(`      ${step.id}: ${step.message}`);
    const kubePct = (v: number) => `${Math.round((100 * v) / kube.ms)} %`;
    console.log(
      `      kube window ${ms(kube.ms)} (etcd window + ${ms(kube.ms - window.ms)}) | ${KUBE_SHARES.map((s) => `${s} ${ms(kubeShares[s])} (${kubePct(kubeShares[s])})`).join(', ')} | ` +
        `${kubeRate.toFixed(0)} ConfigMap creates/s acknowledged before, ${kubeWritten.failed} failed, ${kubeLost.length} lost`,
    );
    if (env.BENCH_DOWNTIME_TRACE)
      writeFileSync(
        join(env.BENCH_DOWNTIME_TRACE, `${sizeMb}mb-${path}-${run}.json`),
        JSON.stringify({
          window,
          kube,
          requestedAtEpoch,
          readyAt,
          steps: record.steps,
          etcd: written.acknowledged.map(({ at, seed, revision }) => ({ at, seed, revision })),
          kubeAcks: kubeWritten.acknowledged,
          kubeFailures: kubeWritten.failures,
        }),
      );
    if (!loss.ok) console.log(`      LOST: ${loss.summary}`);
    if (kubeLost.length > 0) console.log(`      LOST ConfigMaps: ${kubeLost.slice(0, 10).join(', ')}`);
    return {
      sizeMb,
      path,
      run,
      window: window.ms,
      shares,
      steps,
      rate,
      lost: loss.lost.length,
      failures,
      kubeWindow: kube.ms,
      kubeShares,
      kubeRate,
      kubeLost: kubeLost.length,
    };
  } finally {
    sourceLog.close();
    readyPoll.abort();
    await writer.stop();
    await kubeWriter.stop();
  }
}

/** Per path at one size: the window's median and maximum, each phase's median and share, the record's steps in the window. */
function printSummary(sizeMb: number): void {
  console.log('');
  console.log(
    `${sizeMb} MB, per path: the window's median and maximum, each phase's median and its share of all windows (${SHARES.join(', ')})`,
  );
  for (const path of PATHS) {
    const runs = results.filter((r) => r.sizeMb === sizeMb && r.path === path && r.failures.length === 0);
    const w = summarize(runs.map((r) => r.window));
    const fractions = shareFractions(runs.map((r) => r.shares));
    const phases = SHARES.map(
      (s) => `${s} ${ms(summarize(runs.map((r) => r.shares[s])).median)} (${Math.round(100 * fractions[s])} %)`,
    ).join(', ');
    console.log(
      `${String(sizeMb).padStart(4)} MB ${path.padEnd(4)} (${w.runs} runs): window median ${ms(w.median)}, max ${ms(w.max)} | ${phases}`,
    );
    const ids = [...new Set(runs.flatMap((r) => r.steps.map((s) => s.id)))];
    const steps = ids.map(
      (stepId) => `${stepId} ${ms(summarize(runs.map((r) => r.steps.find((s) => s.id === stepId)?.ms ?? 0)).median)}`,
    );
    console.log(`      record steps in the window (medians): ${steps.join(', ') || 'none'}`);
    const k = summarize(runs.map((r) => r.kubeWindow));
    console.log(
      `      kube window median ${ms(k.median)}, max ${ms(k.max)} | ${KUBE_SHARES.map((p) => `${p} ${ms(summarize(runs.map((r) => r.kubeShares[p])).median)}`).join(', ')}`,
    );
  }
  console.log('');
}

/** Per size and path: the kube-level windows and each part's median (ms). */
function kubeRows(counted: readonly RunResult[]): Cell[][] {
  const rows: Cell[][] = [];
  for (const sizeMb of SIZES_MB)
    for (const path of PATHS) {
      const runs = counted.filter((r) => r.sizeMb === sizeMb && r.path === path);
      if (runs.length === 0) continue;
      const k = summarize(runs.map((r) => r.kubeWindow));
      rows.push([
        `${sizeMb} MB`,
        pathLabel(path),
        runs.map((r) => Math.round(r.kubeWindow).toLocaleString('en-US')).join(', '),
        k.median,
        k.max,
        summarize(runs.map((r) => r.window)).median,
        ...KUBE_SHARES.map((part) => Math.round(summarize(runs.map((r) => r.kubeShares[part])).median)),
      ]);
    }
  return rows;
}

const results: RunResult[] = [];
let completed = false;
try {
  const a = await startSeed(`dt-a-${tag}`, 61, LB_HOSTS[0]);
  const b = await startSeed(`dt-b-${tag}`, 62, LB_HOSTS[1]);
  const shoot = fixture('shoot-dev-api1');
  shoot.metadata = { name: shootName };
  shoot.spec.seedName = a.name;
  delete shoot.spec.tolerations;
  delete shoot.spec.controlPlane;
  const created = await api.request('PUT', `/projects/${project}/shoots/${shootName}`, { body: shoot });
  if (created.status !== 201) throw new Error(`shoot: ${created.status} ${JSON.stringify(created.body)}`);
  let [source, destination] = [a, b];
  await serving(source);
  // The kubeconfig names the address the shoot advertises, which its Create records once it served.
  await until(
    "the shoot's Create to succeed",
    async () =>
      (
        await api.request<{ status: { lastOperation?: LastOperation } }>(
          'GET',
          `/projects/${project}/shoots/${shootName}`,
        )
      ).body.status.lastOperation?.state === 'Succeeded',
    { timeoutMs: 300_000, intervalMs: 500 },
  );
  const kubeconfig = await adminKubeconfig();
  let previousPrefix: string | undefined;
  for (const sizeMb of SIZES_MB) {
    for (let run = 1; run <= RUNS; run++) {
      for (const path of PATHS) {
        const db = await prepare(source, sizeMb, previousPrefix);
        console.log(
          `      prepared ${source.name}: etcd ${mb(db.dbSize)} (${mb(db.dbSizeInUse)} in use) after ${ms(db.fillMs)} of clean-up and fill, full snapshot ${ms(db.fullMs)}`,
        );
        const prefix = `downtime/${sizeMb}-${path}-${run}`;
        results.push(await measure({ source, destination, path, sizeMb, run, prefix, db, kubeconfig }));
        previousPrefix = prefix;
        // The old source releases its leftover once the migration succeeded; the next run migrates back to it.
        await until(
          `${source.name} to release its leftover of ${id}`,
          async () => !(await controlPlane(source)) && !etcdUrl(source),
          { timeoutMs: 300_000, intervalMs: 500 },
        );
        [source, destination] = [destination, source];
        await serving(source);
      }
    }
    printSummary(sizeMb);
  }
  const counted = results.filter((r) => r.failures.length === 0);
  const failed = results.filter((r) => r.failures.length > 0);
  console.log(
    `writer: at least ${Math.min(...results.map((r) => r.rate)).toFixed(0)} acknowledged writes/s before the window in every run; acknowledged writes missing from the destination: ${results.reduce((n, r) => n + r.lost, 0)} over all ${results.length} runs`,
  );
  console.log(
    `kube writer: at least ${Math.min(...results.map((r) => r.kubeRate)).toFixed(0)} acknowledged ConfigMap creates/s before the request in every run; acknowledged ConfigMaps missing afterwards: ${results.reduce((n, r) => n + r.kubeLost, 0)}`,
  );
  console.log(
    `failed migrations (resumed, left out of the figures): ${failed.length === 0 ? 'none' : failed.map((r) => `${r.sizeMb} MB ${r.path} run ${r.run}: ${r.failures.join('; ')}`).join(' | ')}`,
  );
  console.log('');
  console.log(
    `aims (issues 12 and 33; fence bound ${ms(FENCE_BOUND_MS)}, so the bad path's aim is ${ms(FENCE_BOUND_MS + ISSUE_AIMS.badMarginMs)}):`,
  );
  const aims = downtimeAims(
    counted.map((r) => ({ sizeMb: r.sizeMb, path: r.path, ms: r.window })),
    { ...ISSUE_AIMS, fenceBoundMs: FENCE_BOUND_MS },
  );
  const kubeAimList = kubeAims(
    counted.map((r) => ({ sizeMb: r.sizeMb, path: r.path, etcdMs: r.window, kubeMs: r.kubeWindow })),
  );
  for (const aim of [...aims, ...kubeAimList]) console.log(`  ${formatAim(aim)}`);
  const rows: Cell[][] = [];
  for (const sizeMb of SIZES_MB)
    for (const path of PATHS) {
      const runs = counted.filter((r) => r.sizeMb === sizeMb && r.path === path);
      if (runs.length === 0) continue;
      const w = summarize(runs.map((r) => r.window));
      const fractions = shareFractions(runs.map((r) => r.shares));
      rows.push([
        `${sizeMb} MB`,
        pathLabel(path),
        runs.map((r) => Math.round(r.window).toLocaleString('en-US')).join(', '),
        w.median,
        w.max,
        ...SHARES.map(
          (share) =>
            `${Math.round(summarize(runs.map((r) => r.shares[share])).median)} (${Math.round(100 * fractions[share])} %)`,
        ),
      ]);
    }
  record.save({
    settings: {
      sizesMb: SIZES_MB.join(', '),
      runsPerSizeAndPath: RUNS,
      paths: PATHS.join(', '),
      fenceBoundMs: FENCE_BOUND_MS,
      minWriterRatePerSecond: Math.round(Math.min(...results.map((r) => r.rate))),
      acknowledgedWritesLost: results.reduce((n, r) => n + r.lost, 0),
      minKubeWriterRatePerSecond: Math.round(Math.min(...results.map((r) => r.kubeRate))),
      acknowledgedConfigMapsLost: results.reduce((n, r) => n + r.kubeLost, 0),
      failedMigrations: failed.length,
    },
    tables: [
      {
        title: "Write-unavailability window (ms) and each phase's median (ms, its share of the windows)",
        columns: ['size', 'path', 'windows, in run order', 'median', 'max', ...SHARES],
        rows,
        decimals: [undefined, undefined, undefined, 0, 0],
      },
      {
        title:
          "Kube-level window (ms): the kube writer's, beside the etcd-level median, and each part's median (ms; script's KUBE_DEFINITIONS)",
        columns: ['size', 'path', 'kube windows, in run order', 'median', 'max', 'etcd-level median', ...KUBE_SHARES],
        rows: kubeRows(counted),
        decimals: [undefined, undefined, undefined, 0, 0, 0],
      },
    ],
    aims: [...aims, ...kubeAimList]
      .filter((a): a is typeof a & { value: number } => a.value !== undefined)
      .map((a): BenchAim => ({
        what: a.label,
        value: a.unit === 'x' ? Math.round(a.value * 100) / 100 : Math.round(a.value),
        aim: a.limit,
        unit: a.unit,
        comparison: '<=',
        met: a.met === true,
      })),
  });
  console.log(
    `load average at the end ${load()} (1 / 5 / 15 min); the whole run took ${((performance.now() - started) / 60_000).toFixed(1)} min`,
  );
  completed = true;
} finally {
  for (const seed of seeds) {
    await seed.agent.agent.stop().catch(() => undefined);
    try {
      await seed.agent.hosting().stopAll();
    } catch {
      // The agent never started its runtime: nothing to stop.
    }
  }
  // A run that stopped keeps its agents' work dirs (sidecar and etcd logs) for a look at why.
  if (completed) rmSync(workRoot, { recursive: true, force: true });
  else
    console.log(
      `stopped after ${results.length} runs; the seeds' work dirs (sidecar.log, etcd.log per shoot) are kept in ${workRoot}`,
    );
  await close();
}
process.exit(0);
