/**
 * A fleet on the emulator: BENCH_FLEET_SEEDS seeds (default 200), each with a real seed agent on the memory
 * hosting (its own SQS command queue, a heartbeat every 10 s, control planes without etcd; 50 agents to a
 * child process, scripts/fleet/agents.ts, which also answers the watchdog's external probes on loopback),
 * and BENCH_FLEET_SHOOTS shoots (default 10,000) created through the API and placed by the scheduler, their
 * Create operations run by the agents. The stack is deployed with every schedule off: the benchmark runs
 * each periodic job itself, one invocation a round, at its period.
 *
 * 1. Growth: the fleet is filled in steps (BENCH_FLEET_STEPS, default 100,1000,3000,10000, up to the size):
 *    the first through the API (20 clients), the others in bulk (scripts/fleet/bulk-fill.ts says how and
 *    why); at each step every job runs BENCH_FLEET_ROUNDS rounds (default 3) back to back: wall time,
 *    invocations, items read and written, DynamoDB and Route 53 calls per round, and per 1,000 shoots.
 * 2. Load: at the first step (the API's baseline) for BENCH_FLEET_BASELINE_SECONDS (default 120) and at
 *    the full size for BENCH_FLEET_STEADY_MINUTES (default 10): 20 API clients (a request, then about a
 *    second: get 70 %, list by pages of 100 20 %, create 4 %, delete 3 %, hibernate or wake 3 %), 5
 *    migrations at once, every job at its period; p50/p99 per request, each job's rounds against its period,
 *    the agents' heartbeat latency.
 *    At every step also the API's reads alone for BENCH_FLEET_READS_SECONDS (default 60): the same clients
 *    with gets and lists only, no churn, no migration, the jobs idle, the agents heartbeating: what the
 *    fleet's size does to the API itself, apart from what the jobs' work at that size takes from the two
 *    cores the emulator shares with everything.
 * 3. Cost: the monthly AWS cost of the full fleet, from the calls counted above (scripts/fleet/cost.ts): a job's
 *    AWS calls per round from its steady-state rounds, its Lambda time from the quiet rounds of the growth.
 *
 *   npm run bench:fleet
 *   BENCH_FLEET_SEEDS=20 BENCH_FLEET_SHOOTS=1000 BENCH_FLEET_STEADY_MINUTES=2 npm run bench:fleet   (a laptop)
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { Route53Client } from '@aws-sdk/client-route-53';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { GetExecutionHistoryCommand, ListExecutionsCommand, SFNClient, type HistoryEvent } from '@aws-sdk/client-sfn';
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { DynamoGardenRepository } from '../adapters/dynamodb/garden-repository.js';
import { TABLE_INDEXES } from '../adapters/dynamodb/keys.js';
import { GardenClient } from '../adapters/http/garden-client.js';
import { HttpTimeoutError } from '../adapters/http/transport.js';
import { CallMeter, callsOf, emptyCallReport, type CallReport } from '../adapters/metering/call-meter.js';
import { listAllSeeds } from '../core/garden/placement.js';
import type { Deployment } from '../local/deploy.js';
import { GardenService } from '../core/garden/service.js';
import { outboundPolicyFrom } from '../core/net/outbound-url.js';
import { backedSeed } from '../harness/fixtures/index.js';
import { aim, startBenchRun, type BenchAim, type BenchTable, type Cell } from './bench-results.js';
import { benchLandscape, median, percentile } from './bench-support.js';
import type { AgentsConfig, AgentsReport } from './fleet/agents.js';
import {
  alwaysOnCost,
  alwaysRunningCost,
  jobCost,
  per1000,
  PRICE_REGION,
  PRICES_AS_OF,
  seedSideCost,
  SECONDS_PER_MONTH,
  sum,
  tableStorageCost,
  unitCost,
  type CostLine,
} from './fleet/cost.js';
import { bulkFill } from './fleet/bulk-fill.js';
import { JOBS, runJobRound, type JobName, type JobRound } from './fleet/jobs.js';
import { Fleet, READ_MIX, runLoad, shootBody, type ApiOp, type LoadRecord } from './fleet/load.js';
import { emulatorCredentials } from '../local/aws-env.js';

const SEEDS = Number(process.env.BENCH_FLEET_SEEDS ?? 200);
const SHOOTS = Number(process.env.BENCH_FLEET_SHOOTS ?? 10_000);
const STEPS = [
  ...new Set(
    (process.env.BENCH_FLEET_STEPS ?? '100,1000,3000,10000')
      .split(',')
      .map(Number)
      .filter((n) => n > 0 && n < SHOOTS)
      .concat(SHOOTS),
  ),
].sort((a, b) => a - b);
const ROUNDS = Number(process.env.BENCH_FLEET_ROUNDS ?? 3);
const BASELINE_SECONDS = Number(process.env.BENCH_FLEET_BASELINE_SECONDS ?? 120);
const STEADY_MINUTES = Number(process.env.BENCH_FLEET_STEADY_MINUTES ?? 10);
const CLIENTS = Number(process.env.BENCH_FLEET_CLIENTS ?? 20);
const MIGRATIONS = Number(process.env.BENCH_FLEET_MIGRATIONS ?? 5);
const THINK_MS = Number(process.env.BENCH_FLEET_THINK_MS ?? 1_000);
const READS_SECONDS = Number(process.env.BENCH_FLEET_READS_SECONDS ?? 60);
const AGENTS_PER_PROCESS = 50;
const HEARTBEAT_MS = 10_000;

/** One load phase as measured. */
interface LoadPhase {
  phase: string;
  shoots: number;
  seconds: number;
  load: LoadRecord;
  heartbeats: number[];
}

// The emulator runs each concurrent Lambda invocation in a Node process of its own and keeps the surplus
// warm for LAMBDA_WARM_TTL_SECONDS (the landscape keeps them an hour). 200 agents' first heartbeats set off
// events whose invocations pile up on two cores: more than 300 processes and 18 GiB were seen before any
// shoot existed, so a short warm time here. Capping its concurrency (LAMBDA_ACCOUNT_CONCURRENCY=64) was
// no way out: a third of the first 100 shoots' operations then stayed Processing.
process.env.LAMBDA_WARM_TTL_SECONDS ??= '120';

const credentials = emulatorCredentials();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

const record = startBenchRun({
  bench: 'fleet',
  title: 'Fleet',
  command: 'npm run bench:fleet',
  about:
    'Seeds with real agents on the memory hosting (own queue, heartbeat every 10 s, no etcd) and shoots placed by ' +
    'the scheduler, on the emulator; every periodic job run by the benchmark at its period, one invocation a ' +
    'round: its wall time, invocations and AWS calls per round as the fleet grows, then API latency under 20 ' +
    'clients with churn and 5 migrations at once, and the monthly AWS cost from the counted calls.',
});

// BENCH_FLEET_LANDSCAPE: a file with the deployment (local/deploy.ts `Deployment` as JSON) of a stack deployed
// with the context below, to run against instead of deploying afresh (each run registers seeds of its own).
const given = process.env.BENCH_FLEET_LANDSCAPE;
const { deployment, close } = given
  ? { deployment: JSON.parse(readFileSync(given, 'utf8')) as Deployment, close: async () => {} }
  : await benchLandscape({
      context: {
        watchdogSchedule: 'false',
        leaseMonitorSchedule: 'false',
        lifecycleSchedule: 'false',
        evacuationSchedule: 'false',
        auditSchedule: 'false',
      },
    });
const aws = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials };
const api = new GardenClient({ apiUrl: deployment.apiUrl, region: deployment.region, credentials, timeoutMs: 60_000 });
const lambda = new LambdaClient({ ...aws, maxAttempts: 1, requestHandler: { requestTimeout: 600_000 } as never });
const ddb = new DynamoDBClient(aws);
const repo = new DynamoGardenRepository({ tableName: deployment.outputs.TableName, client: ddb });
const children: ChildProcess[] = [];
const heartbeats: { at: number; ms: number }[] = [];
const agentFailures: string[] = [];
let probesAnswered = 0;

try {
  const run = Date.now().toString(36);
  const seedNames = Array.from({ length: SEEDS }, (_, i) => `fleet-${run}-${String(i).padStart(3, '0')}`);
  log(`bench:fleet  ${SEEDS} seeds, ${SHOOTS} shoots in steps ${STEPS.join(', ')}; emulator ${deployment.awsEndpoint}`);

  const seedAccess = new Map<string, { queueUrl: string; identity: string }>();
  // Seeds: a backup bucket each (the agent reports BackupBucketsReady), registered through the API.
  const s3 = new S3Client({ ...aws, forcePathStyle: true });
  const setup = pLimit(8);
  await Promise.all(
    seedNames.map((name, i) =>
      setup(async () => {
        await s3.send(new CreateBucketCommand({ Bucket: `gl-backup-${name}` }));
        const seed = backedSeed(name, 0);
        seed.spec.networks.nodes = `10.${Math.floor(i / 256)}.${i % 256}.0/24`;
        const res = await api
          .withGatewayRetries(3)
          .request<{ status: { identity: string; commandQueueUrl: string } }>('PUT', `/seeds/${name}`, { body: seed });
        // 200: a resent PUT (after a gateway 502) found the seed its first attempt created.
        if (res.status !== 201 && res.status !== 200)
          throw new Error(`seed ${name}: ${res.status} ${JSON.stringify(res.body)}`);
        seedAccess.set(name, { queueUrl: res.body.status.commandQueueUrl, identity: res.body.status.identity });
      }),
    ),
  );
  log(`${SEEDS} seeds registered`);

  // Agents, 50 to a process.
  for (let i = 0; i < seedNames.length; i += AGENTS_PER_PROCESS) {
    const config: AgentsConfig = {
      seeds: seedNames.slice(i, i + AGENTS_PER_PROCESS),
      apiUrl: deployment.apiUrl,
      awsEndpoint: deployment.awsEndpoint,
      region: deployment.region,
      hostedZoneId: deployment.outputs.HostedZoneId,
      internalDomain: deployment.outputs.InternalDomain,
      heartbeatIntervalMs: HEARTBEAT_MS,
    };
    const child = fork(join(import.meta.dirname, 'fleet', 'agents.ts'), [JSON.stringify(config)], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(child);
    child.on('message', (m: AgentsReport | { type: 'ready' }) => {
      if (m.type !== 'report') return;
      const at = Date.now();
      for (const ms of m.heartbeats) heartbeats.push({ at, ms });
      agentFailures.push(...m.failures);
      probesAnswered += m.probes;
    });
  }
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve, reject) => {
          c.on('message', (m: { type: string }) => m.type === 'ready' && resolve());
          c.once('exit', (code) => reject(new Error(`an agents process exited with ${code} before it was ready`)));
        }),
    ),
  );
  await waitFor('every seed ready', async () => {
    const seeds = await listAllSeeds(repo);
    const ready = seeds.filter((s) =>
      s.status.conditions.some((c) => c.type === 'GardenletReady' && c.status === 'True'),
    ).length;
    return { done: ready >= SEEDS, progress: `${ready}/${SEEDS}` };
  });

  const fleet = new Fleet(`fleet-${run}`);
  const growth: { shoots: number; rounds: JobRound[] }[] = [];
  const loads: LoadPhase[] = [];
  let quietRequests: Awaited<ReturnType<typeof measureSampleRequests>> | undefined;
  const reads: { shoots: number; load: LoadRecord }[] = [];
  const fillRates: { shoots: number; seconds: number }[] = [];
  for (const step of STEPS) {
    const t0 = Date.now();
    if (step === STEPS[0]) await fill(fleet, step);
    else {
      const from = fleet.names.length;
      const names = Array.from({ length: Math.max(0, step - from) }, (_, k) => `s${String(from + k).padStart(5, '0')}`);
      const progress = setInterval(() => log(`  bulk fill: ${fleet.names.length - from}/${names.length}`), 30_000);
      try {
        await bulkFill({
          repo,
          sqs: new SQSClient(aws),
          route53: new Route53Client(aws),
          hostedZoneId: deployment.outputs.HostedZoneId,
          internalDomain: deployment.outputs.InternalDomain,
          seeds: seedAccess,
          project: fleet.project,
          names,
          onProgress: () => undefined,
        });
      } finally {
        clearInterval(progress);
      }
      fleet.names.push(...names);
      log(`  ${names.length} shoots placed by the scheduler in bulk in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
    // The lifecycle resync runs at its period meanwhile, as its schedule would: it starts again a Create
    // whose execution the emulator never started (a StartExecution that timed out under the fill).
    const resync = JOBS.find((j) => j.name === 'resync')!;
    let resynced = Date.now();
    await waitFor(`${step} control planes hosted`, async () => {
      const hosted = await hostedControlPlanes();
      if (hosted < fleet.names.length && Date.now() - resynced >= resync.periodSeconds * 1_000) {
        resynced = Date.now();
        const round = await runJobRound(lambda, deployment.outputs, resync);
        if (round.error) log(`  resync round failed: ${round.error}`);
      }
      return { done: hosted >= fleet.names.length, progress: `${hosted}/${fleet.names.length}` };
    });
    if (step === STEPS[0]) fillRates.push({ shoots: step, seconds: (Date.now() - t0) / 1000 });
    // One more heartbeat, so that every lease carries every plane's external URL.
    await sleep(HEARTBEAT_MS + 2_000);
    const rounds: JobRound[] = [];
    for (const job of JOBS)
      for (let r = 0; r < (job.name === 'audit' ? Math.min(ROUNDS, 2) : ROUNDS); r++) {
        const round = await runJobRound(lambda, deployment.outputs, job);
        if (round.error) log(`  ${job.name} round failed: ${round.error}`);
        rounds.push(round);
      }
    growth.push({ shoots: fleet.names.length, rounds });
    log(`step ${step}: ${describeRounds(rounds)}`);
    const readLoad = await runLoad({
      api,
      lambda,
      deployment,
      fleet,
      durationMs: READS_SECONDS * 1000,
      clients: CLIENTS,
      migrations: 0,
      thinkMs: THINK_MS,
      mix: READ_MIX,
      jobs: false,
    });
    reads.push({ shoots: fleet.names.length, load: readLoad });
    log(`  reads alone: ${describeLoad(readLoad)}`);
    const isFirst = step === STEPS[0];
    const isLast = step === STEPS.at(-1);
    // The cost model's per-request Lambda time, measured on the quiet fleet: under the steady state the
    // emulator's one process is saturated, which AWS's per-request billing is not.
    if (isLast) quietRequests = await measureSampleRequests();
    if (isFirst || isLast) {
      const seconds = isLast ? STEADY_MINUTES * 60 : BASELINE_SECONDS;
      log(`${isLast ? 'steady state' : 'API baseline'} at ${fleet.names.length} shoots for ${seconds} s`);
      const since = Date.now();
      const load = await runLoad({
        api,
        lambda,
        deployment,
        fleet,
        durationMs: seconds * 1000,
        clients: CLIENTS,
        migrations: MIGRATIONS,
        thinkMs: THINK_MS,
      });
      loads.push({
        phase: isLast ? 'steady state' : 'baseline',
        shoots: fleet.names.length,
        seconds,
        load,
        heartbeats: heartbeats.filter((h) => h.at >= since).map((h) => h.ms),
      });
      log(`  ${describeLoad(load)}`);
    }
  }

  const cost = await costModel(growth.at(-1)!, loads.at(-1)!, quietRequests ?? (await measureSampleRequests()));
  report({ growth, loads, reads, fillRates, cost });
} finally {
  for (const child of children) child.send({ type: 'stop' });
  await Promise.all(children.map((c) => new Promise((r) => c.once('exit', r))));
  await close();
}

/** Creates shoots through the API (20 at once, the scheduler places them) until the fleet has `size`. */
async function fill(fleet: Fleet, size: number): Promise<void> {
  const limit = pLimit(CLIENTS);
  const from = fleet.names.length;
  const names = Array.from({ length: Math.max(0, size - from) }, (_, k) => `s${String(from + k).padStart(5, '0')}`);
  let done = 0;
  const t0 = Date.now();
  const progress = setInterval(() => log(`  filling: ${done}/${names.length}`), 30_000);
  try {
    await Promise.all(
      names.map((name) =>
        limit(async () => {
          for (let attempt = 0; ; attempt++) {
            // A create the emulator has not answered in time may still land (its Lambda worker starting on a
            // loaded machine): it is read before writing again, like a gateway 502.
            const res = await unlessTimedOut(
              api.request('PUT', `/projects/${fleet.project}/shoots/${name}`, { body: shootBody(name) }),
            );
            if (res.status === 201 || res.status === 200) break;
            // A gateway 502 (a worker that did not start in time), a timeout or a conflict on a retried create.
            const existing = await unlessTimedOut(api.request('GET', `/projects/${fleet.project}/shoots/${name}`));
            if (existing.status === 200) break;
            if (attempt >= 5) throw new Error(`create ${name}: ${res.status} ${JSON.stringify(res.body)}`);
            await sleep(1_000 * (attempt + 1));
          }
          fleet.names.push(name);
          done += 1;
        }),
      ),
    );
  } finally {
    clearInterval(progress);
  }
  log(`  ${names.length} shoots created in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

/** A request's answer, or a 504 in its place when the emulator did not answer within the client's timeout. */
async function unlessTimedOut<T extends { status: number }>(
  request: Promise<T>,
): Promise<T | { status: 504; body: string }> {
  try {
    return await request;
  } catch (e) {
    if (e instanceof HttpTimeoutError) return { status: 504, body: e.message };
    throw e;
  }
}

async function hostedControlPlanes(): Promise<number> {
  const seeds = await listAllSeeds(repo);
  return seeds.reduce((n, s) => n + (s.status.controlPlanes?.length ?? 0), 0);
}

async function waitFor(what: string, check: () => Promise<{ done: boolean; progress: string }>): Promise<void> {
  const t0 = Date.now();
  let last = '';
  for (;;) {
    const { done, progress } = await check();
    if (done) {
      log(`${what} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
      return;
    }
    if (progress === last && Date.now() - t0 > 20 * 60_000) throw new Error(`${what}: stuck at ${progress}`);
    if (progress !== last) log(`  waiting for ${what}: ${progress}`);
    last = progress;
    await sleep(5_000);
  }
}

function roundsOf(rounds: readonly JobRound[], job: JobName): JobRound[] {
  return rounds.filter((r) => r.job === job && !r.error);
}

function describeRounds(rounds: readonly JobRound[]): string {
  return JOBS.map((j) => {
    const mine = roundsOf(rounds, j.name);
    return `${j.name} ${(median(mine.map((r) => r.wallMs)) / 1000).toFixed(2)} s`;
  }).join(', ');
}

/** p50 and p99 as table cells; none of a request the phase did not send. */
function quantiles(values: readonly number[]): [Cell, Cell] {
  return values.length === 0 ? [null, null] : [median(values), percentile(values, 99)];
}

function describeLoad(load: LoadRecord): string {
  // The reads alone send no creates or migrations.
  const ops = (['get', 'list', 'create', 'migrate'] as const)
    .filter((op) => load.latencies[op].length > 0)
    .map(
      (op) =>
        `${op} p50 ${median(load.latencies[op]).toFixed(0)} p99 ${percentile(load.latencies[op], 99).toFixed(0)} ms`,
    );
  return `${ops.join(', ')}; migrations ${load.migrations.succeeded} ok / ${load.migrations.failed} failed`;
}

/** A call report reduced to one round's figures. */
function callFigures(calls: CallReport) {
  return {
    dynamodb: callsOf(calls, 'DynamoDB'),
    route53: callsOf(calls, 'Route53'),
    itemsRead: calls.dynamodb.itemsRead,
    itemsWritten: calls.dynamodb.itemsWritten,
    readUnits: calls.dynamodb.readUnits,
    writeUnits: calls.dynamodb.writeUnits,
  };
}

function medianCalls(rounds: readonly JobRound[]): CallReport {
  // The round with the median DynamoDB calls stands for the job (the calls of one round belong together).
  const sorted = [...rounds].sort((a, b) => callsOf(a.calls, 'DynamoDB') - callsOf(b.calls, 'DynamoDB'));
  return sorted[Math.floor((sorted.length - 1) / 2)]?.calls ?? emptyCallReport();
}

/** The costs of a heartbeat and of the API's requests: the API's own code in this process, on a metered client. */
async function measureRequests(sampleSeed: string, project: string, shootName: string) {
  const meter = new CallMeter({ dynamodbIndexes: Object.values(TABLE_INDEXES) });
  const metered = meter.attach(new DynamoDBClient(aws), 'DynamoDB');
  const service = new GardenService({
    repository: new DynamoGardenRepository({ tableName: deployment.outputs.TableName, client: metered }),
    outbound: outboundPolicyFrom('http,loopback'),
  });
  const seed = await service.getSeed(sampleSeed);
  const heartbeatBody = {
    identity: seed.status.identity,
    conditions: seed.status.conditions.map(({ type, status, reason, message }) => ({ type, status, reason, message })),
    controlPlanes: seed.status.controlPlanes ?? [],
    leaseDurationSeconds: 30,
    agentVersion: 'seed-agent/local',
  };
  const measure = async (fn: () => Promise<unknown>) => {
    meter.take();
    const t0 = performance.now();
    await fn();
    return { ms: performance.now() - t0, calls: meter.take() };
  };
  // The third of three: the first may find a report that changed since the agent's last heartbeat.
  await measure(() => service.heartbeat(sampleSeed, heartbeatBody));
  await measure(() => service.heartbeat(sampleSeed, heartbeatBody));
  const heartbeat = await measure(() => service.heartbeat(sampleSeed, heartbeatBody));
  const get = await measure(() => service.getShoot(project, shootName));
  const list = await measure(() => service.listShoots(project, { limit: 100 }));
  return { heartbeat, get, list, heartbeatBytes: JSON.stringify(heartbeatBody).length };
}

/** State transitions and task invocations of recent executions of a state machine (a sample of the churn's). */
async function executionShape(stateMachineArn: string, sample = 10) {
  const sfn = new SFNClient(aws);
  const listed = await sfn.send(
    new ListExecutionsCommand({ stateMachineArn, statusFilter: 'SUCCEEDED', maxResults: sample }),
  );
  const shapes: { transitions: number; lambdas: number; sqs: number }[] = [];
  for (const e of listed.executions ?? []) {
    const events: HistoryEvent[] = [];
    let token: string | undefined;
    do {
      const page = await sfn.send(
        new GetExecutionHistoryCommand({ executionArn: e.executionArn, nextToken: token, maxResults: 1000 }),
      );
      events.push(...(page.events ?? []));
      token = page.nextToken;
    } while (token);
    shapes.push({
      transitions: events.filter((ev) => ev.type?.endsWith('StateEntered')).length,
      lambdas: events.filter((ev) => ev.type === 'LambdaFunctionScheduled' || ev.type === 'TaskScheduled').length,
      sqs: events.filter((ev) => ev.type === 'TaskScheduled' && ev.taskScheduledEventDetails?.resourceType === 'sqs')
        .length,
    });
  }
  return {
    samples: shapes.length,
    transitions: median(shapes.map((s) => s.transitions)) || 0,
    tasks: median(shapes.map((s) => s.lambdas)) || 0,
    commands: median(shapes.map((s) => s.sqs)) || 0,
  };
}

/** measureRequests for a shoot of the first seed listed and that seed, and that shoot's size. */
async function measureSampleRequests() {
  const sample = await repo.listShootsOnSeed(
    (await repo.listSeeds({ limit: 1 }, { leases: false })).items[0]!.metadata.name,
    { limit: 1 },
  );
  const sampleShoot = sample.items[0]!;
  const requests = await measureRequests(
    sampleShoot.status.seedName!,
    sampleShoot.metadata.project,
    sampleShoot.metadata.name,
  );
  return { ...requests, shootBytes: JSON.stringify(sampleShoot).length };
}

async function costModel(
  last: { shoots: number; rounds: JobRound[] },
  steady: LoadPhase,
  requests: Awaited<ReturnType<typeof measureSampleRequests>>,
) {
  const shoots = last.shoots;
  const operate = await executionShape(deployment.outputs.OperateShootStateMachineArn!);
  const migrate = await executionShape(deployment.outputs.MigrateShootStateMachineArn!);
  const table = await ddb.send(new DescribeTableCommand({ TableName: deployment.outputs.TableName }));

  const memory = async (output: keyof typeof deployment.outputs) =>
    Number(
      (await lambda.send(new GetFunctionConfigurationCommand({ FunctionName: deployment.outputs[output] }))).MemorySize,
    );
  const jobMemory = new Map<JobName, number>();
  for (const job of JOBS) jobMemory.set(job.name, await memory(job.output));
  const partitionMb = await memory('WatchdogPartitionFunctionName');
  const apiMb = await memory('ApiFunctionName');
  const jobLines: CostLine[] = JOBS.map((job) => {
    // What a round asks of AWS comes from the steady state's rounds: the rounds just after a fill see every
    // new shoot for the first time (the watchdog then writes the state of each), which a running fleet does
    // not. Its Lambda time comes from those quiet rounds: under load the emulator's invocations share two
    // cores with everything else, which on AWS they do not.
    const quiet = roundsOf(last.rounds, job.name);
    const running = roundsOf(steady.load.rounds, job.name);
    return jobCost({
      name: job.title,
      periodSeconds: job.periodSeconds,
      invocationsPerRound: median((running.length > 0 ? running : quiet).map((r) => r.invocations)),
      lambdaMsPerRound: median(quiet.map((r) => r.billedMs)),
      memoryMb: job.name === 'watchdog' ? partitionMb : jobMemory.get(job.name)!,
      calls: medianCalls(running.length > 0 ? running : quiet),
    });
  });
  const minutes = steady.seconds / 60;
  const perMonth = (count: number) => (count / minutes) * (SECONDS_PER_MONTH / 60);
  const perSeedHeartbeats = SECONDS_PER_MONTH / (HEARTBEAT_MS / 1000);
  const lambdaTask = { lambdaMs: 200, memoryMb: apiMb };
  const heartbeatLine = unitCost({
    name: `seed heartbeats (${SEEDS} seeds every ${HEARTBEAT_MS / 1000} s)`,
    perMonth: SEEDS * perSeedHeartbeats,
    httpApiRequests: 1,
    lambdaInvocations: 1,
    lambdaMs: requests.heartbeat.ms,
    memoryMb: apiMb,
    stepFunctionsTransitions: 0,
    events: 0,
    sqsFifoRequests: 0,
    calls: requests.heartbeat.calls,
  });
  const operation = (name: string, count: number, shape: typeof operate) =>
    unitCost({
      name,
      perMonth: perMonth(count),
      httpApiRequests: 1,
      lambdaInvocations: 1 + shape.tasks,
      lambdaMs: (1 + shape.tasks) * lambdaTask.lambdaMs,
      memoryMb: lambdaTask.memoryMb,
      stepFunctionsTransitions: shape.transitions,
      events: 2 + shape.tasks,
      // Each command: send, receive, delete.
      sqsFifoRequests: 3 * Math.max(1, shape.commands),
      // Each task reads and writes the shoot (its item with three indexes) about once.
      calls: {
        calls: {},
        dynamodb: {
          itemsRead: shape.tasks,
          itemsWritten: shape.tasks,
          readUnits: shape.tasks,
          writeUnits: shape.tasks * 4 * Math.ceil(requests.shootBytes / 1024),
        },
      },
    });
  const readsPerMonth = perMonth(steady.load.latencies.get.length + steady.load.latencies.list.length);
  const churnLines = [
    operation('shoot creations', steady.load.churn.created, operate),
    operation('shoot deletions', steady.load.churn.deleted, operate),
    operation('hibernations and wake-ups', steady.load.churn.hibernations, operate),
    operation(
      `migrations (${MIGRATIONS} at once)`,
      steady.load.migrations.succeeded + steady.load.migrations.failed,
      migrate,
    ),
    unitCost({
      name: 'API reads (get, list)',
      perMonth: readsPerMonth,
      httpApiRequests: 1,
      lambdaInvocations: 1,
      lambdaMs: (requests.get.ms + requests.list.ms) / 2,
      memoryMb: apiMb,
      stepFunctionsTransitions: 0,
      events: 0,
      sqsFifoRequests: 0,
      calls: requests.get.calls,
    }),
  ];
  const idleGarden = [
    ...jobLines,
    alwaysRunningCost('watchdog round function', jobMemory.get('watchdog')!),
    alwaysRunningCost('lease monitor', jobMemory.get('leaseMonitor')!),
    heartbeatLine,
    tableStorageCost(Number(table.Table?.TableSizeBytes ?? 0)),
    { item: 'Route 53 hosted zones (owner records, API records)', usdPerMonth: 2 * 0.5 },
  ];
  const seedSide = seedSideCost({
    shoots,
    seeds: SEEDS,
    deltaSnapshotSeconds: 20,
    fullSnapshotMinutes: 60,
    storedMbPerShoot: 200,
    ownerQueryEverySeconds: 5,
    agentPollSeconds: 5,
  });
  return {
    shoots,
    idleGarden,
    churnLines,
    seedSide,
    alwaysOn: alwaysOnCost(),
    requests,
    operate,
    migrate,
    churnPerMinute: {
      created: steady.load.churn.created / minutes,
      deleted: steady.load.churn.deleted / minutes,
      hibernations: steady.load.churn.hibernations / minutes,
      migrations: (steady.load.migrations.succeeded + steady.load.migrations.failed) / minutes,
    },
  };
}

function report(input: {
  growth: { shoots: number; rounds: JobRound[] }[];
  loads: LoadPhase[];
  reads: { shoots: number; load: LoadRecord }[];
  fillRates: { shoots: number; seconds: number }[];
  cost: Awaited<ReturnType<typeof costModel>>;
}) {
  const { growth, loads, reads, cost } = input;
  const tables: BenchTable[] = [];
  const aims: BenchAim[] = [];

  // Growth: per job and size, the median round.
  const growthRows: Cell[][] = [];
  for (const job of JOBS)
    for (const g of growth) {
      const rounds = roundsOf(g.rounds, job.name);
      const f = callFigures(medianCalls(rounds));
      const wall = median(rounds.map((r) => r.wallMs)) / 1000;
      growthRows.push([
        job.title,
        g.shoots,
        wall,
        (wall / g.shoots) * 1000,
        median(rounds.map((r) => r.invocations)),
        f.itemsRead,
        f.itemsWritten,
        f.dynamodb,
        f.route53,
        f.readUnits,
        f.writeUnits,
      ]);
    }
  tables.push({
    title: 'Growth: one round of each job (median of the rounds at each size)',
    columns: [
      'job',
      'shoots',
      'wall (s)',
      'wall per 1,000 shoots (s)',
      'invocations',
      'items read',
      'items written',
      'DynamoDB calls',
      'Route 53 calls',
      'read units',
      'write units',
    ],
    rows: growthRows,
    decimals: [undefined, 0, 2, 3, 0, 0, 0, 0, 0, 1, 0],
  });

  // Growth is at most linear: the cost per shoot at the largest size against the size of at least 1,000 shoots.
  const sizes = growth.filter((g) => g.shoots >= 1_000);
  if (sizes.length >= 2) {
    const small = sizes[0]!;
    const large = sizes.at(-1)!;
    for (const job of JOBS) {
      const per = (g: typeof small, f: (r: JobRound[]) => number) => f(roundsOf(g.rounds, job.name)) / g.shoots;
      const wallRatio =
        per(large, (r) => median(r.map((x) => x.wallMs))) / per(small, (r) => median(r.map((x) => x.wallMs)));
      const callsRatio =
        per(large, (r) => callsOf(medianCalls(r), 'DynamoDB') + callsOf(medianCalls(r), 'Route53')) /
        per(small, (r) => callsOf(medianCalls(r), 'DynamoDB') + callsOf(medianCalls(r), 'Route53'));
      aims.push(
        aim(
          `${job.title}: wall time per shoot at ${large.shoots} over that at ${small.shoots} (linear: 1)`,
          Math.round(wallRatio * 100) / 100,
          '<=',
          1.25,
          'x',
        ),
      );
      if (Number.isFinite(callsRatio))
        aims.push(
          aim(
            `${job.title}: DynamoDB and Route 53 calls per shoot at ${large.shoots} over that at ${small.shoots}`,
            Math.round(callsRatio * 100) / 100,
            '<=',
            1.1,
            'x',
          ),
        );
    }
  }

  // Rounds against their periods under load.
  const steady = loads.at(-1)!;
  const periodRows: Cell[][] = JOBS.map((job) => {
    const rounds = roundsOf(steady.load.rounds, job.name);
    const walls = rounds.map((r) => r.wallMs / 1000);
    const f = callFigures(medianCalls(rounds));
    aims.push(
      aim(
        `${job.title}: median round at ${steady.shoots} shoots under load`,
        Math.round(median(walls) * 100) / 100,
        '<=',
        job.periodSeconds,
        's',
      ),
    );
    return [
      job.title,
      job.periodSeconds,
      rounds.length,
      median(walls),
      Math.max(0, ...walls),
      steady.load.overruns[job.name],
      median(rounds.map((r) => r.invocations)),
      f.itemsRead,
      f.itemsWritten,
      f.dynamodb,
      f.route53,
    ];
  });
  tables.push({
    title: `Periodic jobs at ${steady.shoots} shoots on ${SEEDS} seeds, under load (${steady.seconds / 60} min)`,
    columns: [
      'job',
      'period (s)',
      'rounds',
      'median round (s)',
      'max round (s)',
      'overruns',
      'invocations per round',
      'items read',
      'items written',
      'DynamoDB calls',
      'Route 53 calls',
    ],
    rows: periodRows,
    decimals: [undefined, 0, 0, 2, 2, 0, 0, 0, 0, 0, 0],
  });

  // The API and the heartbeats.
  const ops: ApiOp[] = ['create', 'get', 'list', 'migrate', 'delete', 'hibernate'];
  const apiRows: Cell[][] = [];
  for (const l of loads)
    for (const op of ops)
      apiRows.push([
        `${l.phase} (${l.shoots} shoots)`,
        op,
        l.load.latencies[op].length,
        ...quantiles(l.load.latencies[op]),
        l.load.failures[op].length,
      ]);
  for (const l of loads)
    apiRows.push([
      `${l.phase} (${l.shoots} shoots)`,
      'heartbeat (agents)',
      l.heartbeats.length,
      ...quantiles(l.heartbeats),
      0,
    ]);
  tables.push({
    title: `API under ${CLIENTS} clients (ms), with churn and ${MIGRATIONS} migrations at once`,
    columns: ['phase', 'request', 'count', 'p50', 'p99', 'failed'],
    rows: apiRows,
    decimals: [undefined, undefined, 0, 0, 0, 0],
  });
  const baseline = loads[0]!;
  if (loads.length > 1) {
    const ratio = percentile(steady.load.latencies.get, 99) / percentile(baseline.load.latencies.get, 99);
    aims.push(
      aim(
        `API get p99 at ${steady.shoots} shoots over its p99 at ${baseline.shoots}`,
        Math.round(ratio * 100) / 100,
        '<=',
        2,
        'x',
      ),
    );
  }

  // The API's reads at each size, alone.
  tables.push({
    title: `API reads alone under ${CLIENTS} clients (ms), at each size: no churn, the jobs idle, the agents heartbeating`,
    columns: ['shoots', 'gets', 'get p50', 'get p99', 'lists', 'list p50', 'list p99', 'failed'],
    rows: reads.map((r) => [
      r.shoots,
      r.load.latencies.get.length,
      median(r.load.latencies.get),
      percentile(r.load.latencies.get, 99),
      r.load.latencies.list.length,
      median(r.load.latencies.list),
      percentile(r.load.latencies.list, 99),
      r.load.failures.get.length + r.load.failures.list.length,
    ]),
    decimals: [0, 0, 0, 0, 0, 0, 0, 0],
  });
  if (reads.length > 1) {
    const [first, last] = [reads[0]!, reads.at(-1)!];
    const ratio = percentile(last.load.latencies.get, 99) / percentile(first.load.latencies.get, 99);
    aims.push(
      aim(
        `API get p99 at ${last.shoots} shoots over its p99 at ${first.shoots}, reads alone`,
        Math.round(ratio * 100) / 100,
        '<=',
        2,
        'x',
      ),
    );
  }

  // How close each job and the heartbeats run to the services' limits at this size.
  tables.push({
    title: `Against the services' limits at ${steady.shoots} shoots`,
    ...limitsTable(steady, growth.at(-1)!),
  });

  // Cost.
  const idle = sum(cost.idleGarden);
  const churn = sum(cost.churnLines);
  const seedSide = sum(cost.seedSide);
  const alwaysOn = cost.alwaysOn.usdPerMonth;
  const usd = (n: number) => Math.round(n * 100) / 100;
  tables.push({
    title: `Monthly AWS cost at ${cost.shoots} shoots on ${SEEDS} seeds (${PRICE_REGION} list prices as of ${PRICES_AS_OF}; scripts/fleet/cost.ts)`,
    columns: ['part', 'item', 'USD per month', 'USD per month per 1,000 shoots'],
    rows: [
      ...cost.idleGarden.map((l) => [
        'garden, idle',
        l.item,
        usd(l.usdPerMonth),
        usd(per1000(l.usdPerMonth, cost.shoots)),
      ]),
      ...cost.churnLines.map((l) => [
        'garden, churn',
        l.item,
        usd(l.usdPerMonth),
        usd(per1000(l.usdPerMonth, cost.shoots)),
      ]),
      ...cost.seedSide.map((l) => ['seeds', l.item, usd(l.usdPerMonth), usd(per1000(l.usdPerMonth, cost.shoots))]),
      ['total', 'garden idle', usd(idle), usd(per1000(idle, cost.shoots))],
      ['total', 'garden with the churn above', usd(idle + churn), usd(per1000(idle + churn, cost.shoots))],
      ['total', 'seed side (either garden)', usd(seedSide), usd(per1000(seedSide, cost.shoots))],
      [
        'alternative',
        `garden on an always-on cluster: ${cost.alwaysOn.item}`,
        usd(alwaysOn),
        usd(per1000(alwaysOn, cost.shoots)),
      ],
    ],
    decimals: [undefined, undefined, 2, 2],
  });
  tables.push({
    title: 'Cost inputs measured in this run',
    columns: ['what', 'value'],
    rows: [
      [
        'churn per minute: creations / deletions / hibernations / migrations',
        `${cost.churnPerMinute.created.toFixed(1)} / ${cost.churnPerMinute.deleted.toFixed(1)} / ${cost.churnPerMinute.hibernations.toFixed(1)} / ${cost.churnPerMinute.migrations.toFixed(1)}`,
      ],
      [
        'heartbeat: DynamoDB read / write units, body bytes',
        `${cost.requests.heartbeat.calls.dynamodb.readUnits} / ${cost.requests.heartbeat.calls.dynamodb.writeUnits}, ${cost.requests.heartbeatBytes}`,
      ],
      [
        'operate-shoot execution: state transitions / tasks (median of sampled)',
        `${cost.operate.transitions} / ${cost.operate.tasks} (${cost.operate.samples})`,
      ],
      [
        'migrate-shoot execution: state transitions / tasks (median of sampled)',
        `${cost.migrate.transitions} / ${cost.migrate.tasks} (${cost.migrate.samples})`,
      ],
      [
        'fill rate (shoots created and hosted per second, last step)',
        (input.fillRates.at(-1)!.shoots - (input.fillRates.at(-2)?.shoots ?? 0)) / input.fillRates.at(-1)!.seconds,
      ],
      ["external probes answered, agents' loop failures", `${probesAnswered}, ${agentFailures.length}`],
    ],
  });

  for (const t of tables) printTable(t);
  for (const a of aims)
    console.log(`aim: ${a.what}: ${a.value} ${a.unit} (${a.comparison} ${a.aim}) ${a.met ? 'met' : 'NOT MET'}`);
  if (agentFailures.length > 0) console.log(`agent failures (first 10): ${agentFailures.slice(0, 10).join(' | ')}`);
  record.save({
    settings: {
      seeds: SEEDS,
      shoots: SHOOTS,
      steps: STEPS.join(','),
      rounds: ROUNDS,
      steadyMinutes: STEADY_MINUTES,
      baselineSeconds: BASELINE_SECONDS,
      readsSeconds: READS_SECONDS,
      clients: CLIENTS,
      migrations: MIGRATIONS,
      thinkMs: THINK_MS,
      agentsPerProcess: AGENTS_PER_PROCESS,
      emulatorWarmSeconds: Number(process.env.LAMBDA_WARM_TTL_SECONDS),
    },
    tables,
    aims,
  });
}

/** Each job and the heartbeats per second against the quota that bounds them (AWS defaults, per account and region). */
function limitsTable(steady: LoadPhase, last: { shoots: number; rounds: JobRound[] }) {
  const rows: Cell[][] = [];
  for (const job of JOBS) {
    const calls = medianCalls(roundsOf(last.rounds, job.name));
    const perSecond = (n: number) => n / job.periodSeconds;
    const r53 = perSecond(callsOf(calls, 'Route53'));
    const wall = median(roundsOf(last.rounds, job.name).map((r) => r.wallMs)) / 1000;
    if (r53 > 0) {
      rows.push([job.title, 'Route 53 API requests/s (5 per account), over its period', r53, 5, (r53 / 5) * 100]);
      const burst = callsOf(calls, 'Route53') / Math.max(wall, 0.001);
      rows.push([
        job.title,
        'Route 53 API requests/s (5 per account), while a round runs',
        burst,
        5,
        (burst / 5) * 100,
      ]);
    }
    const invocations = median(roundsOf(last.rounds, job.name).map((r) => r.invocations));
    if (invocations > 1)
      rows.push([
        job.title,
        'concurrent Lambda executions (1,000 per account)',
        invocations,
        1000,
        (invocations / 1000) * 100,
      ]);
    const sfn = perSecond(calls.calls['StepFunctions.StartExecution'] ?? 0);
    if (sfn > 0)
      rows.push([
        job.title,
        'Step Functions StartExecution/s (bucket refill 300 in us-east-1)',
        sfn,
        300,
        (sfn / 300) * 100,
      ]);
  }
  const watchdog = medianCalls(roundsOf(last.rounds, 'watchdog'));
  const kindWrites = watchdog.dynamodb.itemsWritten / 10;
  rows.push([
    'dependency watchdog round',
    'DynamoDB writes/s to its state items (1,000 WCU/s per partition: one item per shoot, spread)',
    kindWrites,
    1000,
    (kindWrites / 1000) * 100,
  ]);
  const heartbeatsPerSecond = SEEDS / (HEARTBEAT_MS / 1000);
  rows.push([
    'seed heartbeats',
    'API Gateway requests/s (10,000 per account)',
    heartbeatsPerSecond,
    10_000,
    (heartbeatsPerSecond / 10_000) * 100,
  ]);
  const creations = steady.load.churn.created / steady.seconds;
  const shootWrites =
    ((steady.load.churn.created + steady.load.churn.deleted + steady.load.churn.hibernations) * 4) / steady.seconds;
  rows.push([
    'lifecycle operations (churn)',
    "shoot writes/s in the kind index's one `Shoot` partition (1,000 WCU/s per partition; about 4 writes an operation)",
    shootWrites,
    1000,
    (shootWrites / 1000) * 100,
  ]);
  const migrationsPerSecond = MIGRATIONS / 60;
  rows.push([
    'migrations, lifecycle operations',
    'Step Functions StartExecution/s (refill 300/s us-east-1; state transitions 5,000/s)',
    migrationsPerSecond + creations,
    300,
    ((migrationsPerSecond + creations) / 300) * 100,
  ]);
  rows.push([
    'seed command queues',
    'SQS FIFO per message group (300 msg/s without batching): one group per shoot',
    1 / 60,
    300,
    (1 / 60 / 300) * 100,
  ]);
  return {
    columns: ['who', 'limit', 'per second at this size', 'quota', '% of quota'],
    rows,
    decimals: [undefined, undefined, 2, 0, 2],
  };
}

function printTable(t: BenchTable): void {
  console.log(`\n${t.title}`);
  const fmt = (c: Cell, i: number) =>
    c === null ? '-' : typeof c === 'number' ? c.toFixed(t.decimals?.[i] ?? (Number.isInteger(c) ? 0 : 2)) : c;
  const rows = [t.columns.map(String), ...t.rows.map((r) => r.map(fmt))];
  const widths = t.columns.map((_, i) => Math.min(60, Math.max(...rows.map((r) => String(r[i]).length))));
  for (const r of rows) console.log(`  ${r.map((c, i) => String(c).slice(0, 60).padEnd(widths[i]!)).join('  ')}`);
}
