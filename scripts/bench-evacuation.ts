/**
 * Evacuation benchmark (issue 16) on the emulator with real seed agents (`gardenless seed-agent` processes),
 * real etcds and backup-restore sidecars, on a stack deployed with the test stack's settings
 * (TEST_STACK_CONTEXT: heartbeat 2 s so a 6 s lease, the tests' ownership timings, the evacuation schedule
 * off). Per run: a seed that opted in to evacuation hosts N shoots (small etcds: KEYS keys each); its
 * agent, sidecars and etcds get SIGKILL; this script drives the evacuation controller's rounds (one after
 * the other, as the integration test does) until every shoot serves on one of three destination seeds.
 *
 * Lease loss: the moment the seed's lease ran out as the garden sees it, its last `renewTime` plus the
 * lease duration: the evacuation record's `lostSince`, from which `after` counts.
 * A shoot serves on its destination once its migration Succeeded and its etcd there (at the address the
 * destination's agent reports) answers every key with its value; this is polled every second.
 * Per-shoot time: from its migration's creation to serving on its destination. Peak parallel migrations:
 * the most migration records whose [createdAt, finishedAt] overlap.
 *
 *   npm run bench:evacuation                                  (6 shoots, then 30)
 *   BENCH_EVACUATION_SHOOTS=6 BENCH_EVACUATION_MAX_PARALLEL=2 BENCH_EVACUATION_AFTER=10 npm run bench:evacuation
 */
import { LambdaClient } from '@aws-sdk/client-lambda';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import { DynamoMigrationStore } from '../adapters/dynamodb/migration-store.js';
import { GardenClient } from '../adapters/http/garden-client.js';
import type { Evacuation } from '../core/evacuation/record.js';
import type { MigrationRecord } from '../core/migration/record.js';
import type { HostedControlPlane, Seed } from '../core/model/seed.js';
import type { Shoot } from '../core/model/shoot.js';
import { backedSeed } from '../harness/fixtures/index.js';
import { AgentProcess } from '../harness/agent-process.js';
import { evacuationRound, hasKeys, shootOn, writeKeys } from '../harness/evacuation.js';
import { resetGardenState } from '../harness/garden.js';
import { TEST_OWNERSHIP_TIMINGS, TEST_STACK_CONTEXT } from '../harness/timings.js';
import { until } from '../harness/until.js';
import { benchLandscape, median } from './bench-support.js';
import { emulatorCredentials } from '../local/aws-env.js';

const SIZES = (process.env.BENCH_EVACUATION_SHOOTS ?? '6,30').split(',').map(Number);
const MAX_PARALLEL = Number(process.env.BENCH_EVACUATION_MAX_PARALLEL ?? 5);
const AFTER_S = Number(process.env.BENCH_EVACUATION_AFTER ?? 5);
/** Shoots created at once on the seed before the kill: each starts an etcd and a sidecar process. */
const START_PARALLEL = Number(process.env.BENCH_EVACUATION_START_PARALLEL ?? 4);
/** The bound of one run's evacuation (from the kill); the run fails past it. */
const TIMEOUT_S = Number(process.env.BENCH_EVACUATION_TIMEOUT ?? 1_200);
const DESTINATIONS = 3;
const KEYS = 5;
const HEARTBEAT_S = 2;

interface RunResult {
  shoots: number;
  leaseSeconds: number;
  killToLoss: number;
  lossToLast: number;
  peak: number;
  perShoot: number[];
  phase: string;
  destinations: Record<string, number>;
  setupMs: number;
  totalMs: number;
  lostSince: string;
  lastRenewTime: string;
  /** The machine's one-minute load average at the kill and when the last shoot served. */
  load: [number, number];
}

const started = Date.now();
const { deployment, close } = await benchLandscape({ context: TEST_STACK_CONTEXT });
const aws = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() };
const api = new GardenClient({
  apiUrl: deployment.apiUrl,
  region: deployment.region,
  credentials: emulatorCredentials(),
  timeoutMs: 120_000,
  gatewayRetries: 5,
});
const lambda = new LambdaClient(aws);
const s3 = new S3Client({ ...aws, forcePathStyle: true });
const dynamo = new DynamoDBClient(aws);
const ddb = DynamoDBDocumentClient.from(dynamo);
// Migration records straight from the table: thirty GETs a second through the API would load the machine being measured.
const migrations = new DynamoMigrationStore({ tableName: deployment.outputs.TableName, client: dynamo });
const workDir = mkdtempSync(join(tmpdir(), 'gl-bench-evacuation-'));
console.log(
  `bench:evacuation: stack ready in ${((Date.now() - started) / 1000).toFixed(0)} s; evacuation rounds driven by this script (the stack's schedule is off)`,
);

async function get<T>(path: string): Promise<T | undefined> {
  const res = await api.request<T>('GET', path).catch(() => undefined);
  return res?.status === 200 ? res.body : undefined;
}

const controlPlanes = async (seedName: string): Promise<HostedControlPlane[]> =>
  (await get<Seed>(`/seeds/${seedName}`))?.status.controlPlanes ?? [];

/** One evacuation round, as the schedule or an event would run it; a failed invocation is reported and the next one follows. */
async function round(): Promise<string | undefined> {
  try {
    return (await evacuationRound(lambda, deployment.outputs.EvacuationFunctionName)).error;
  } catch (error) {
    return String(error);
  }
}

/** The most intervals open at one moment. */
function peakOverlap(intervals: readonly [number, number][]): number {
  const edges = intervals
    .flatMap(([a, b]): [number, number][] => [
      [a, 1],
      [b, -1],
    ])
    .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let open = 0;
  let peak = 0;
  for (const [, d] of edges) peak = Math.max(peak, (open += d));
  return peak;
}

async function run(count: number, tag: string): Promise<RunResult> {
  const t0 = Date.now();
  await resetGardenState({ ddb, tableName: deployment.outputs.TableName });
  // A project per run: the owner records of the last run's shoots stay in the zone.
  const project = `b${tag}`;
  const lost = `lost-${tag}`;
  const destinations = Array.from({ length: DESTINATIONS }, (_, i) => `dest-${tag}-${i}`);
  const pool = { pool: `dest-${tag}` };
  const agents = new Map<string, AgentProcess>();
  try {
    for (const [i, name] of [lost, ...destinations].entries()) {
      await s3.send(new CreateBucketCommand({ Bucket: `gl-backup-${name}` }));
      const body = backedSeed(name, 30 + i);
      if (name === lost)
        body.spec.settings = {
          evacuation: {
            enabled: true,
            after: `${AFTER_S}s`,
            maxParallel: MAX_PARALLEL,
            destinationSelector: { matchLabels: pool },
          },
        };
      else body.metadata.labels = pool;
      const res = await api.request('PUT', `/seeds/${name}`, { body });
      if (res.status !== 201) throw new Error(`seed ${name}: ${res.status} ${JSON.stringify(res.body)}`);
      const agent = new AgentProcess({
        seed: name,
        deployment,
        workDir: join(workDir, name),
        heartbeatIntervalSeconds: HEARTBEAT_S,
        ownership: TEST_OWNERSHIP_TIMINGS,
      });
      agent.start();
      agents.set(name, agent);
    }
    for (const name of agents.keys()) {
      await until(
        `seed ${name} ready`,
        async () =>
          (await get<Seed>(`/seeds/${name}`))?.status.conditions.some(
            (c) => c.type === 'GardenletReady' && c.status === 'True',
          ),
        { timeoutMs: 180_000, intervalMs: 1_000 },
      );
    }

    // N shoots serving on the seed, a few at a time (each starts an etcd and a sidecar), KEYS keys in each.
    const shoots = Array.from({ length: count }, (_, i) => `s${i}`);
    const ids = new Map<string, string>();
    const limit = pLimit(START_PARALLEL);
    await Promise.all(
      shoots.map((name) =>
        limit(async () => {
          const put = await api.request<Shoot>('PUT', `/projects/${project}/shoots/${name}`, {
            body: shootOn(lost, name),
          });
          if (put.status !== 201) throw new Error(`shoot ${name}: ${put.status} ${JSON.stringify(put.body)}`);
          ids.set(name, put.body.status.technicalID);
          const url = await until(
            `${name} serving on ${lost}`,
            async () => {
              const cp = (await controlPlanes(lost)).find((c) => c.technicalID === put.body.status.technicalID);
              return cp?.active && cp.etcdClientUrl;
            },
            { timeoutMs: 300_000, intervalMs: 1_000 },
          );
          await writeKeys(url, `bench/${name}/`, KEYS);
        }),
      ),
    );
    // Delta snapshots every 2 s: the bad path restores the latest one, so give the sidecars a few.
    await sleep(10_000);
    const setupMs = Date.now() - t0;
    const leaseSeconds = (await get<Seed>(`/seeds/${lost}`))?.status.leaseDurationSeconds ?? NaN;
    console.log(
      `run ${tag}: ${count} shoots serving on ${lost} with ${KEYS} keys each; set-up took ${(setupMs / 1000).toFixed(0)} s`,
    );

    // Kill the seed; drive rounds while another loop watches the shoots arrive.
    const killed = agents.get(lost)!.kill();
    const killedAt = Date.now();
    const loadAtKill = loadavg()[0]!;
    const deadline = killedAt + TIMEOUT_S * 1_000;
    const servedAt = new Map<string, number>();
    const migrationOf = new Map<string, MigrationRecord>();
    let evacuation: Evacuation | undefined;
    let roundErrors = 0;
    let done = false;
    const rounds = (async () => {
      while (!done && Date.now() < deadline) {
        const error = await round();
        if (error) {
          roundErrors += 1;
          console.log(`run ${tag}: round failed (${error}); the next one follows`);
        }
        evacuation = (await get<Evacuation>(`/seeds/${lost}/evacuation`)) ?? evacuation;
        await sleep(500);
      }
    })();
    try {
      while (servedAt.size < count) {
        if (Date.now() > deadline)
          throw new Error(
            `run ${tag}: ${servedAt.size} of ${count} shoots serve on their destinations ${TIMEOUT_S} s after the kill (evacuation ${JSON.stringify(evacuation?.shoots.map((s) => `${s.name}:${s.state}${s.reason ? ` (${s.reason})` : ''}`))})`,
          );
        const planes = new Map<string, HostedControlPlane[]>();
        for (const name of shoots.filter((n) => !servedAt.has(n))) {
          const migration = await migrations.get(project, name);
          if (migration?.state !== 'Succeeded') continue;
          migrationOf.set(name, migration);
          const destination = migration.destination.name;
          if (!planes.has(destination)) planes.set(destination, await controlPlanes(destination));
          const cp = planes.get(destination)!.find((c) => c.technicalID === ids.get(name));
          if (cp?.active && cp.etcdClientUrl && (await hasKeys(cp.etcdClientUrl, `bench/${name}/`, KEYS)))
            servedAt.set(name, Date.now());
        }
        await sleep(1_000);
      }
      // The evacuation's own end: the round after the last move sees it.
      await until(
        `the evacuation of ${lost} to end`,
        async () => evacuation && !['Running', 'Paused', 'Cancelling', 'Stopping'].includes(evacuation.phase),
        { timeoutMs: 120_000, intervalMs: 1_000 },
      );
    } finally {
      done = true;
      await rounds;
    }
    const record = evacuation!;
    const lostAt = Date.parse(record.lostSince);
    const lastServed = Math.max(...servedAt.values());
    const loadAtEnd = loadavg()[0]!;
    const byDestination: Record<string, number> = {};
    for (const m of migrationOf.values())
      byDestination[m.destination.name] = (byDestination[m.destination.name] ?? 0) + 1;
    console.log(`run ${tag}: killed ${killed} processes; ${roundErrors} failed rounds`);
    return {
      shoots: count,
      leaseSeconds,
      killToLoss: lostAt - killedAt,
      lossToLast: lastServed - lostAt,
      peak: peakOverlap(
        [...migrationOf.values()].map((m) => [Date.parse(m.createdAt), Date.parse(m.finishedAt ?? m.updatedAt)]),
      ),
      perShoot: shoots.map((n) => servedAt.get(n)! - Date.parse(migrationOf.get(n)!.createdAt)),
      phase: record.phase,
      destinations: byDestination,
      setupMs,
      totalMs: Date.now() - t0,
      lostSince: record.lostSince,
      lastRenewTime: record.lastRenewTime,
      load: [loadAtKill, loadAtEnd],
    };
  } finally {
    await Promise.all([...agents.values()].map((a) => a.stop()));
  }
}

const s = (ms: number) => (ms / 1000).toFixed(1);
const results: RunResult[] = [];
try {
  for (const [i, count] of SIZES.entries()) {
    const r = await run(count, `${Date.now().toString(36)}${i}`);
    results.push(r);
    console.log(
      `run ${count} shoots: lease lost at ${r.lostSince} (renewTime ${r.lastRenewTime} + ${r.leaseSeconds} s); moved to ${JSON.stringify(r.destinations)}; evacuation ${r.phase}; run took ${s(r.totalMs)} s (set-up ${s(r.setupMs)} s)`,
    );
  }
} finally {
  await close();
  rmSync(workDir, { recursive: true, force: true });
}

console.log(
  `\nevacuation of a killed seed (lease ${results[0]?.leaseSeconds} s, after ${AFTER_S} s, maxParallel ${MAX_PARALLEL}, ${DESTINATIONS} destinations, ${KEYS} keys per shoot; lease loss = the lease's renewTime + duration as the garden sees it)`,
);
for (const r of results) {
  console.log(
    `${String(r.shoots).padStart(3)} shoots, maxParallel ${MAX_PARALLEL}, after ${AFTER_S} s: kill -> lease loss ${s(r.killToLoss)} s; lease loss -> last shoot serving on its destination ${s(r.lossToLast)} s; peak ${r.peak} migrations at once; per shoot (migration start -> serving) median ${s(median(r.perShoot))} s, max ${s(Math.max(...r.perShoot))} s; load average ${r.load.map((l) => l.toFixed(1)).join(' -> ')} (${cpus().length} cores)`,
  );
}
console.log(`whole benchmark: ${((Date.now() - started) / 1000).toFixed(0)} s`);
