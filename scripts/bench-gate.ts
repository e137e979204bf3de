/**
 * The public gate under a real load: what it costs a client to reach a single-member shoot's etcd through
 * its backup-restore sidecar's public gate (seed/backup-restore/public-gate.ts, a TCP proxy in the
 * sidecar's event loop) instead of etcd's own address.
 *
 * One sidecar runs as the local runtime runs it (seed/agent/local-hosting.ts: a `backup-restore serve`
 * child with its real etcd 3.4, the product's default snapshot settings, owner records in the emulator's
 * Route 53, its backups in the emulator's S3), owner of its shoot, so its gate is open. etcd's own
 * benchmark tool (tools/benchmark, built by scripts/build-etcd-benchmark.sh on first use) then drives a
 * kube-apiserver-like mix over gRPC, in each case once against etcd's private address ("direct") and once
 * through the gate, in rounds where the two take turns going first, so that the machine's load falls on
 * both alike:
 *
 * - put: 1 KB values over a key space of 10,000 keys, 10 and 100 clients;
 * - range: one key (1 KB value), linearizable, 10 and 100 clients; and serializable, 100 clients.
 *
 * The clients share a handful of gRPC connections (`BENCH_GATE_CONNS`, default 5), as a kube-apiserver's
 * do. Both paths run with the sidecar's watch and delta uploads going on, as in production: the gate
 * shares its event loop with them. Prints per case the median throughput over the rounds, the medians of
 * each run's p50 and p99 latency, and the gate's throughput as a ratio of the direct one; the aim (issue
 * 31) is a ratio of at least 0.9. It also prints the sidecar's CPU time per 1,000 requests on each path:
 * the difference is what the gate itself spends.
 *
 *   npm run bench:gate
 *   BENCH_GATE_ROUNDS=3 BENCH_GATE_SCALE=0.3 npm run bench:gate    (a quick trial; results to another file)
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateHostedZoneCommand, DeleteHostedZoneCommand, Route53Client } from '@aws-sdk/client-route-53';
import { Etcd3 } from 'etcd3';
import { route53Api, Route53OwnerRecords } from '../adapters/route53/owner-records.js';
import { ownerRecordName } from '../core/ownership/index.js';
import { processTree } from '../harness/scenario/process-tree.js';
import { until } from '../harness/until.js';
import { emulatorCredentials, emulatorCredentialsEnv, LOCAL_REGION } from '../local/aws-env.js';
import { emulatorS3, ensureBucket } from '../local/buckets.js';
import { LocalHosting } from '../seed/agent/local-hosting.js';
import { aim, startBenchRun, type BenchAim, type Cell } from './bench-results.js';
import { benchEmulator } from './bench-support.js';
import {
  GATE_THROUGHPUT_AIM,
  parseBenchmarkSummary,
  roundOrder,
  summarizeCase,
  type BenchmarkRun,
  type GatePath,
} from './gate-figures.js';

const ROOT = join(import.meta.dirname, '..');
const ROUNDS = Number(process.env.BENCH_GATE_ROUNDS ?? 5);
/** Multiplies every case's request count: below 1 for a quick trial. */
const SCALE = Number(process.env.BENCH_GATE_SCALE ?? 1);
const CONNS = Number(process.env.BENCH_GATE_CONNS ?? 5);
const VALUE_BYTES = 1024;
const KEY_SPACE = 10_000;
const RANGE_KEY = '/registry/configmaps/bench/gate';

interface GateCase {
  readonly name: string;
  readonly clients: number;
  /** Requests per run: a couple of seconds on the two-core machine, long enough to hide the start. */
  readonly total: number;
  readonly args: readonly string[];
}

const CASES: readonly GateCase[] = [
  { name: 'put 1 KB, 10 clients', clients: 10, total: 4_000, args: putArgs() },
  { name: 'put 1 KB, 100 clients', clients: 100, total: 12_000, args: putArgs() },
  { name: 'range 1 key, 10 clients', clients: 10, total: 10_000, args: ['range', RANGE_KEY, '--consistency', 'l'] },
  { name: 'range 1 key, 100 clients', clients: 100, total: 20_000, args: ['range', RANGE_KEY, '--consistency', 'l'] },
  {
    name: 'range 1 key serializable, 100 clients',
    clients: 100,
    total: 20_000,
    args: ['range', RANGE_KEY, '--consistency', 's'],
  },
];

function putArgs(): string[] {
  return ['put', '--val-size', String(VALUE_BYTES), '--key-size', '32', '--key-space-size', String(KEY_SPACE)];
}

const record = startBenchRun({
  bench: 'gate',
  title: 'The public gate',
  command: 'npm run bench:gate',
  about:
    "What the sidecar's public gate costs a client of a single etcd: etcd's own benchmark tool against a real " +
    "etcd 3.4 behind a real sidecar (the local runtime's `backup-restore serve`, owner, gate open, its watch and " +
    'delta uploads to the emulated S3 running), straight to etcd and through the gate in alternating rounds of one ' +
    'run; a kube-apiserver-like mix of 1 KB puts and single-key ranges. Throughput is the median over the rounds, ' +
    "p50 and p99 the medians of each run's; the ratio is the gate's median over the direct median.",
});

/** The benchmark tool, built on first use (about a minute cold; a no-op once built). */
function benchmarkTool(): string {
  const script = join(ROOT, 'scripts', 'build-etcd-benchmark.sh');
  execFileSync('bash', [script], { stdio: 'inherit' });
  return join(ROOT, execFileSync('bash', [script, '--path'], { encoding: 'utf8' }).trim());
}

/** etcd's own client address, which the sidecar keeps to itself: read from etcd's command line. */
function privateClientAddress(etcdPid: number): string {
  const args = readFileSync(`/proc/${etcdPid}/cmdline`, 'utf8').split('\0');
  const url = args[args.indexOf('--listen-client-urls') + 1];
  if (!url) throw new Error(`etcd ${etcdPid} has no --listen-client-urls`);
  return new URL(url).host;
}

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** CPU seconds (user and system) the sidecar's processes (tsx, node; etcd not) have used so far. */
function sidecarCpuSeconds(sidecarPid: number): number {
  let ticks = 0;
  for (const pid of processTree(sidecarPid)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === 'etcd') continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone between the walk and the read: nothing more to count.
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** The benchmark tool now running, so that a signal stops it too. */
let running: ReturnType<typeof spawn> | undefined;

async function runBenchmark(tool: string, endpoint: string, c: GateCase, total: number): Promise<BenchmarkRun> {
  const args = [
    '--precise',
    '--endpoints',
    endpoint,
    '--conns',
    String(Math.min(CONNS, c.clients)),
    '--clients',
    String(c.clients),
    '--dial-timeout',
    '10s',
    ...c.args,
    '--total',
    String(total),
  ];
  const child = spawn(tool, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    // gRPC's INFO lines about every connection say nothing here.
    env: { ...process.env, GRPC_GO_LOG_SEVERITY_LEVEL: 'error' },
  });
  running = child;
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2_000)));
  // A run is a few seconds; one that takes minutes is stuck (an endpoint that never answers).
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  running = undefined;
  if (code !== 0) throw new Error(`benchmark ${args.join(' ')} exited ${code}: ${err.trim().slice(-500)}`);
  return parseBenchmarkSummary(out);
}

const tool = benchmarkTool();
const dir = mkdtempSync(join(tmpdir(), 'gl-bench-gate-'));
const emu = await benchEmulator('gate');
let hosting: LocalHosting | undefined;
const route53 = new Route53Client({
  endpoint: emu.endpoint,
  region: LOCAL_REGION,
  credentials: emulatorCredentials(),
  maxAttempts: 1,
});
let zoneId: string | undefined;
let stopping: Promise<void> | undefined;
/** Everything this run started goes, once, whichever way it ends. */
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    running?.kill('SIGKILL');
    await hosting?.stopAll().catch((error: unknown) => console.error(`stopping the sidecar: ${String(error)}`));
    if (zoneId) await route53.send(new DeleteHostedZoneCommand({ Id: zoneId })).catch(() => undefined);
    await emu.stop();
    rmSync(dir, { recursive: true, force: true });
  })();
  return stopping;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the sidecar, etcd and the emulator`);
    void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });

try {
  const shoot = { project: 'bench', name: 'gate', technicalID: 'shoot--bench--gate' };
  const domain = `gate-${Date.now()}.internal.gardenless.test`;
  const zone = await route53.send(
    new CreateHostedZoneCommand({ Name: domain, CallerReference: `bench-gate-${Date.now()}` }),
  );
  zoneId = zone.HostedZone!.Id!;
  // As a seed's agent has it: owner records through the Route 53 API, the emulator's credentials.
  const seed = (hosting = new LocalHosting({
    identity: 'bench-gate-seed',
    workDir: dir,
    aws: { endpoint: emu.endpoint, region: LOCAL_REGION },
    owner: { mode: 'api', hostedZoneId: zoneId, internalDomain: domain },
    env: { ...process.env, ...emulatorCredentialsEnv(LOCAL_REGION) },
  }));
  await new Route53OwnerRecords({ hostedZoneId: zoneId, api: route53Api(route53) }).set({
    name: ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain: domain }),
    value: 'bench-gate-seed',
  });
  const bucket = 'gl-backup-bench-gate';
  await ensureBucket(emulatorS3(emu.endpoint, LOCAL_REGION), bucket);
  await seed.components(shoot.technicalID).etcd.deploy({ shoot, bucket });
  const view = await until('the sidecar to serve (owner, gate open)', async () => {
    const v = await seed.etcd(shoot.technicalID);
    return v.available && v.clientUrl ? v : undefined;
  });
  const sidecar = seed.sidecar(shoot.technicalID)!;
  const status = await sidecar.status(5_000);
  const endpoints: Record<GatePath, string> = {
    direct: privateClientAddress(status!.etcd.pid!),
    gate: new URL(view.clientUrl!).host,
  };
  const etcd = new Etcd3({ hosts: `http://${endpoints.direct}` });
  await etcd.put(RANGE_KEY).value(Buffer.alloc(VALUE_BYTES, 'x'));
  etcd.close();
  console.log(
    `gate benchmark: etcd ${endpoints.direct} (direct) and the gate ${endpoints.gate}; ${ROUNDS} rounds per case and path, ` +
      `${CONNS} gRPC connections, requests x${SCALE}; sidecar pid ${sidecar.pid}`,
  );

  const runs = new Map<string, Record<GatePath, BenchmarkRun[]>>();
  const cpu = new Map<string, Record<GatePath, { seconds: number; requests: number }>>();
  for (const c of CASES) {
    runs.set(c.name, { direct: [], gate: [] });
    cpu.set(c.name, { direct: { seconds: 0, requests: 0 }, gate: { seconds: 0, requests: 0 } });
  }
  // A short unrecorded run per path first: connections, etcd's caches and the gate's code paths warm.
  for (const path of ['direct', 'gate'] as const)
    for (const c of [CASES[1]!, CASES[3]!]) await runBenchmark(tool, endpoints[path], c, Math.ceil(c.total / 10));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const c of CASES) {
      const total = Math.max(100, Math.round(c.total * SCALE));
      const line: string[] = [];
      for (const path of roundOrder(round)) {
        const before = sidecarCpuSeconds(sidecar.pid!);
        const run = await runBenchmark(tool, endpoints[path], c, total);
        const used = cpu.get(c.name)![path];
        used.seconds += sidecarCpuSeconds(sidecar.pid!) - before;
        used.requests += total;
        runs.get(c.name)![path].push(run);
        line.push(
          `${path} ${Math.round(run.requestsPerSecond)} ops/s p50 ${run.p50Ms.toFixed(2)} p99 ${run.p99Ms.toFixed(2)} ms` +
            (run.errors > 0 ? ` (${run.errors} failed)` : ''),
        );
      }
      console.log(`round ${round} ${c.name.padEnd(38)} ${line.join(' | ')}`);
    }
  }

  console.log('');
  const rows: Cell[][] = [];
  const cpuRows: Cell[][] = [];
  const aims: BenchAim[] = [];
  let failed = 0;
  for (const c of CASES) {
    const r = runs.get(c.name)!;
    const s = summarizeCase(r.direct, r.gate);
    const u = cpu.get(c.name)!;
    const perThousand = (p: GatePath) => (u[p].seconds / u[p].requests) * 1_000_000;
    failed += s.direct.errors + s.gate.errors;
    rows.push([
      c.name,
      s.direct.requestsPerSecond,
      s.gate.requestsPerSecond,
      s.ratio,
      // How far single rounds stray from the medians: the load of a shared machine moves them.
      `${Math.min(...s.roundRatios).toFixed(2)} to ${Math.max(...s.roundRatios).toFixed(2)}`,
      s.direct.p50Ms,
      s.gate.p50Ms,
      s.direct.p99Ms,
      s.gate.p99Ms,
      s.aimMet ? 'met' : 'not met',
    ]);
    cpuRows.push([c.name, perThousand('direct'), perThousand('gate'), perThousand('gate') - perThousand('direct')]);
    aims.push(aim(`${c.name}: throughput through the gate / direct`, round3(s.ratio), '>=', GATE_THROUGHPUT_AIM, ''));
    console.log(
      `${c.name}: direct ${Math.round(s.direct.requestsPerSecond)} ops/s (p50 ${s.direct.p50Ms.toFixed(2)}, p99 ${s.direct.p99Ms.toFixed(2)} ms), ` +
        `gate ${Math.round(s.gate.requestsPerSecond)} ops/s (p50 ${s.gate.p50Ms.toFixed(2)}, p99 ${s.gate.p99Ms.toFixed(2)} ms); ` +
        `gate/direct ${s.ratio.toFixed(3)} (per round ${s.roundRatios.map((x) => x.toFixed(2)).join(' ')}): ` +
        `aim >= ${GATE_THROUGHPUT_AIM} ${s.aimMet ? 'met' : 'NOT met'}; sidecar CPU per 1,000 requests ` +
        `${perThousand('direct').toFixed(0)} ms direct, ${perThousand('gate').toFixed(0)} ms through the gate`,
    );
  }
  aims.push(aim('requests that failed, all cases', failed, '<=', 0, ''));
  record.save({
    settings: { rounds: ROUNDS, scale: SCALE, grpcConnections: CONNS, valueBytes: VALUE_BYTES, keySpace: KEY_SPACE },
    tables: [
      {
        title: 'Throughput (ops/s, median over rounds) and latency (ms, median of the runs)',
        columns: [
          'case',
          'direct ops/s',
          'gate ops/s',
          'gate / direct',
          'per round',
          'direct p50',
          'gate p50',
          'direct p99',
          'gate p99',
          'aim (>= 0.9)',
        ],
        rows,
        decimals: [undefined, 0, 0, 3, undefined, 2, 2, 2, 2],
      },
      {
        title: "The sidecar's CPU time per 1,000 requests (ms; its watch and uploads run on both paths)",
        columns: ['case', 'direct', 'through the gate', 'the gate'],
        rows: cpuRows,
        decimals: [undefined, 0, 0, 0],
      },
    ],
    aims,
  });
} finally {
  await stopAll();
}

function round3(n: number): number {
  return Math.round(n * 1_000) / 1_000;
}
