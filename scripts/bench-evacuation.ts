/**
 * Recovery time of a dead seed (issue 34): evacuation with the defaults a user gets, on the emulator with real
 * seed agents (`gardenless seed-agent` processes), real etcds and backup-restore sidecars.
 *
 * The stack is deployed with its defaults (heartbeat 10 s, so a 30 s lease; the design's ownership timings,
 * so a 60 s fence bound; the evacuation controller on its one-minute schedule and woken by the moves'
 * events; nothing driven by this script), the agents run with theirs (sidecars: 5 s owner checks, 30 s
 * grace, 20 s delta snapshots, a 50 s backup lag limit), and the seed's evacuation settings are the
 * defaults (`maxParallel` 5, no selector) except `after`, shortened to 1 minute (`BENCH_EVACUATION_AFTER`),
 * which is printed with every figure. Only the dependency watchdog's schedule is off (it probes shoots'
 * API servers, which this landscape does not run; benchLandscape turns it off for every benchmark).
 *
 * Per run: a seed that opted in hosts N shoots, each with a writer putting a key every 500 ms until the
 * kill; the seed's agent, sidecars and etcds get SIGKILL; three healthy seeds take the shoots.
 * - Lease loss: when the seed's lease ran out as the garden sees it (its last `renewTime` plus the lease's
 *   duration: the evacuation's `lostSince`), from which `after` counts.
 * - A shoot serves elsewhere once its migration Succeeded and its etcd on the destination (at the address
 *   that seed's agent reports) answers a read of the shoot's keys; polled every second.
 * - Its loss: the writes its etcd acknowledged before the kill that its etcd on the destination lacks, and
 *   their span (first lost to the last acknowledgement), against its bound: what its migration's copy
 *   recorded as the source's S3 loss bound (`copyWait.lossBoundMs`: its backup lag limit plus the guard's
 *   reaction, docs/design.md section 6).
 * - The seed's recovery time: from the kill to the last shoot serving; and from the lease loss plus `after`
 *   (when the evacuation is due) to the last shoot serving, aimed at 5 minutes or less.
 *
 *   npm run bench:evacuation                                              (6 shoots, then 30)
 *   BENCH_EVACUATION_SHOOTS=6 BENCH_EVACUATION_AFTER=1m npm run bench:evacuation
 *
 * Results: bench/results/evacuation.json (BENCH_RESULTS_FILE names another file, BENCH_RESULTS=off none).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import { DynamoMigrationStore } from '../adapters/dynamodb/migration-store.js';
import { GardenClient } from '../adapters/http/garden-client.js';
import type { Evacuation } from '../core/evacuation/record.js';
import { placesHeld } from '../core/evacuation/plan.js';
import { DEFAULT_MAX_PARALLEL } from '../core/evacuation/settings.js';
import { durationMs } from '../core/model/duration.js';
import type { MigrationRecord } from '../core/migration/record.js';
import type { HostedControlPlane, Seed } from '../core/model/seed.js';
import type { Shoot } from '../core/model/shoot.js';
import { backedSeed } from '../harness/fixtures/index.js';
import { AgentProcess } from '../harness/agent-process.js';
import { shootOn } from '../harness/evacuation.js';
import {
  checkLossBounded,
  readEtcdContent,
  startWriter,
  type Writer,
  type WriterRecord,
} from '../harness/scenario/index.js';
import { resetGardenState } from '../harness/garden.js';
import { until } from '../harness/until.js';
import { emulatorCredentials } from '../local/aws-env.js';
import { emulatorS3, ensureBucket } from '../local/buckets.js';
import { aim, startBenchRun } from './bench-results.js';
import { benchLandscape, median } from './bench-support.js';

const SIZES = (process.env.BENCH_EVACUATION_SHOOTS ?? '6,30').split(',').map(Number);
/** The one setting shortened from its default (10m), so that a run does not wait ten minutes for nothing. */
const AFTER = process.env.BENCH_EVACUATION_AFTER ?? '1m';
const AFTER_MS = durationMs(AFTER);
/** Shoots created at once on the seed before the kill: each starts an etcd and a sidecar process. */
const START_PARALLEL = Number(process.env.BENCH_EVACUATION_START_PARALLEL ?? 4);
/** The bound of one run's evacuation (from the kill); the run fails past it. */
const TIMEOUT_S = Number(process.env.BENCH_EVACUATION_TIMEOUT ?? 1_800);
/** The agents' default heartbeat interval (`gardenless seed-agent --heartbeat-interval`). */
const HEARTBEAT_S = 10;
const DESTINATIONS = 3;
/** Each shoot's writer: one put every 500 ms until the kill. */
const WRITES_PER_SECOND = 2;
/** Docs state the aim: a dead seed's shoots all serve elsewhere within 5 minutes of the lease loss plus `after`. */
const AIM_S = 300;
const credentials = emulatorCredentials();

interface ShootResult {
  name: string;
  destination: string;
  /** From the kill to serving on the destination. */
  killToServingMs: number;
  /** The move's claim (its migration's creation) to serving. */
  moveMs: number;
  acknowledged: number;
  lost: number;
  /** From the first lost write to the last acknowledgement; 0 when nothing was lost. */
  lostSpanMs: number;
  boundMs: number;
  withinBound: boolean;
  copyBasis: string;
  finalSnapshot: boolean;
}

interface RunResult {
  shoots: number;
  killToLossMs: number;
  /** From the lease loss plus `after` (the evacuation being due) to the last shoot serving. */
  dueToLastMs: number;
  killToLastMs: number;
  evacuationStartedAfterDueMs: number;
  /** Most moves holding a place at once, and most moving at once, rebuilt from the final record's times. */
  peakHolding: number;
  /** Most places held in one version of the record, as the controller counts them (`placesHeld`). */
  peakHeldSeen: number;
  peakMoving: number;
  perShoot: ShootResult[];
  setupMs: number;
  lostSince: string;
  load: [number, number];
}

const started = Date.now();
const record = startBenchRun({
  bench: 'evacuation',
  title: 'Evacuation of a killed seed',
  command: 'npm run bench:evacuation',
  about: `A seed that opted in to evacuation is killed (agent, sidecars, etcds: SIGKILL) while its shoots are written to; the stack, the agents and the seed's settings are the defaults a user gets except evacuation.after (${AFTER}). Per shoot: the kill to serving its keys elsewhere, and the writes it lost against its S3 bound; per seed: the lease loss plus after to the last shoot serving, aimed at ${AIM_S} s.`,
});
// The stack's defaults: a context of its own only so that a fresh stack is deployed, not a running landscape's.
const { deployment, close } = await benchLandscape({ context: {} });
const aws = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials };
const api = new GardenClient({
  apiUrl: deployment.apiUrl,
  region: deployment.region,
  credentials,
  timeoutMs: 120_000,
  gatewayRetries: 5,
});
const dynamo = new DynamoDBClient(aws);
// Migration records straight from the table: thirty GETs a second through the API would load the machine being measured.
const migrations = new DynamoMigrationStore({ tableName: deployment.outputs.TableName, client: dynamo });
const workDir = mkdtempSync(join(tmpdir(), 'gl-bench-evacuation-'));
console.log(
  `bench:evacuation: stack ready in ${((Date.now() - started) / 1000).toFixed(0)} s with its defaults; seed setting evacuation.after ${AFTER} (default 10m), everything else default; nothing driven by this script`,
);

async function get<T>(path: string): Promise<T | undefined> {
  const res = await api.request<T>('GET', path).catch(() => undefined);
  return res?.status === 200 ? res.body : undefined;
}

const controlPlanes = async (seedName: string): Promise<HostedControlPlane[]> =>
  (await get<Seed>(`/seeds/${seedName}`))?.status.controlPlanes ?? [];

/** The most intervals open at one moment. */
function peakOverlap(intervals: readonly (readonly [number, number])[]): number {
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
  const project = `b${tag}`;
  const lost = `lost-${tag}`;
  const destinations = Array.from({ length: DESTINATIONS }, (_, i) => `dest-${tag}-${i}`);
  const agents = new Map<string, AgentProcess>();
  const writers = new Map<string, Writer>();
  try {
    for (const [i, name] of [lost, ...destinations].entries()) {
      await ensureBucket(emulatorS3(deployment.awsEndpoint, deployment.region), `gl-backup-${name}`);
      const body = backedSeed(name, 30 + i);
      if (name === lost) body.spec.settings = { evacuation: { enabled: true, after: AFTER } };
      const res = await api.request('PUT', `/seeds/${name}`, { body });
      if (res.status !== 201) throw new Error(`seed ${name}: ${res.status} ${JSON.stringify(res.body)}`);
      // The agent's defaults: no ownership, delta or limit flags.
      const agent = new AgentProcess({
        seed: name,
        deployment,
        workDir: join(workDir, name),
        heartbeatIntervalSeconds: HEARTBEAT_S,
        deltaSnapshotInterval: false,
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
        { timeoutMs: 300_000, intervalMs: 1_000 },
      );
    }

    // N shoots serving on the seed, a few created at a time (each starts an etcd and a sidecar), each written to.
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
            { timeoutMs: 600_000, intervalMs: 1_000 },
          );
          writers.set(
            name,
            startWriter({
              endpoints: { source: url, destination: url },
              prefix: `bench/${name}`,
              writesPerSecond: WRITES_PER_SECOND,
              mainLoops: 1,
              probeIntervalMs: 0,
              timeoutMs: 2_000,
              bothFailedPauseMs: 500,
            }),
          );
        }),
      ),
    );
    // Every shoot written to for a while, and its sidecar's settings in a heartbeat (every 10 s).
    await sleep(30_000);
    const setupMs = Date.now() - t0;
    console.log(
      `run ${tag}: ${count} shoots serving on ${lost}, each written to ${WRITES_PER_SECOND} times a second; set-up took ${(setupMs / 1000).toFixed(0)} s`,
    );

    // Kill the seed: its agent, sidecars and etcds. Nothing is driven from here: the controller's schedule and events do it all.
    const killed = agents.get(lost)!.kill();
    const killedAt = Date.now();
    const loadAtKill = loadavg()[0]!;
    const records = new Map<string, WriterRecord>();
    await Promise.all(shoots.map(async (n) => records.set(n, await writers.get(n)!.stop())));
    writers.clear();
    const deadline = killedAt + TIMEOUT_S * 1_000;
    const servedAt = new Map<string, number>();
    const migrationOf = new Map<string, MigrationRecord>();
    const contentOf = new Map<string, Map<string, string>>();
    // The places the controller itself counts as held, in every version of the record seen: never above maxParallel.
    let peakHeldSeen = 0;
    while (servedAt.size < count) {
      const seen = await get<Evacuation>(`/seeds/${lost}/evacuation`).catch(() => undefined);
      if (seen) peakHeldSeen = Math.max(peakHeldSeen, placesHeld(seen));
      if (Date.now() > deadline) {
        const e = await get<Evacuation>(`/seeds/${lost}/evacuation`);
        throw new Error(
          `run ${tag}: ${servedAt.size} of ${count} shoots serve on their destinations ${TIMEOUT_S} s after the kill (evacuation ${JSON.stringify(e?.shoots.map((s) => `${s.name}:${s.state}${s.reason ? ` (${s.reason})` : ''}`))})`,
        );
      }
      const planes = new Map<string, HostedControlPlane[]>();
      for (const name of shoots.filter((n) => !servedAt.has(n))) {
        const migration = await migrations.get(project, name);
        if (migration?.state !== 'Succeeded') continue;
        migrationOf.set(name, migration);
        const destination = migration.destination.name;
        if (!planes.has(destination)) planes.set(destination, await controlPlanes(destination));
        const cp = planes.get(destination)!.find((c) => c.technicalID === ids.get(name));
        if (!cp?.active || !cp.etcdClientUrl) continue;
        const content = await readEtcdContent({ clientUrl: cp.etcdClientUrl, prefix: `bench/${name}/` }).catch(
          () => undefined,
        );
        if (!content) continue;
        servedAt.set(name, Date.now());
        contentOf.set(name, content);
      }
      await sleep(1_000);
    }
    const lastServed = Math.max(...servedAt.values());
    const loadAtEnd = loadavg()[0]!;
    const evacuation = await until(
      `the evacuation of ${lost} to end`,
      async () => {
        const e = await get<Evacuation>(`/seeds/${lost}/evacuation`);
        return e && !['Running', 'Paused', 'Cancelling', 'Stopping'].includes(e.phase) && e;
      },
      { timeoutMs: 180_000, intervalMs: 2_000 },
    );
    const lostAt = Date.parse(evacuation.lostSince);
    const dueAt = lostAt + AFTER_MS;
    const perShoot = shoots.map((name): ShootResult => {
      const m = migrationOf.get(name)!;
      const record = records.get(name)!;
      const boundMs = m.copyWait?.lossBoundMs ?? Number.NaN;
      const loss = checkLossBounded(record.acknowledged, contentOf.get(name)!, { spanMs: boundMs });
      const lastAck = record.acknowledged.at(-1)?.at ?? killedAt;
      const lostSpanMs = loss.lost.length === 0 ? 0 : lastAck - Math.min(...loss.lost.map((w) => w.at));
      return {
        name,
        destination: m.destination.name,
        killToServingMs: servedAt.get(name)! - killedAt,
        moveMs: servedAt.get(name)! - Date.parse(m.createdAt),
        acknowledged: record.acknowledged.length,
        lost: loss.lost.length,
        lostSpanMs,
        boundMs,
        withinBound: loss.ok,
        copyBasis: m.copyWait?.basis ?? 'none',
        finalSnapshot: m.copy?.final ?? false,
      };
    });
    const entries = evacuation.shoots;
    const time = (iso: string | undefined) => (iso === undefined ? Number.NaN : Date.parse(iso));
    console.log(`run ${tag}: killed ${killed} processes; evacuation ${evacuation.phase}`);
    return {
      shoots: count,
      killToLossMs: lostAt - killedAt,
      dueToLastMs: lastServed - dueAt,
      killToLastMs: lastServed - killedAt,
      evacuationStartedAfterDueMs: time(evacuation.createdAt) - dueAt,
      peakHolding: peakOverlap(entries.map((s) => [time(s.startedAt), time(s.slotFreedAt ?? s.endedAt)] as const)),
      peakMoving: peakOverlap(entries.map((s) => [time(s.startedAt), time(s.endedAt)] as const)),
      peakHeldSeen,
      perShoot,
      setupMs,
      lostSince: evacuation.lostSince,
      load: [loadAtKill, loadAtEnd],
    };
  } finally {
    await Promise.all([...writers.values()].map((w) => w.stop()));
    await Promise.all([...agents.values()].map((a) => a.stop()));
    // The next run starts from an empty garden: this run's seeds, their agents stopped, would count as lost
    // and more than half the fleet lost holds every evacuation (maxLostShare).
    await resetGardenState({ ddb: DynamoDBDocumentClient.from(dynamo), tableName: deployment.outputs.TableName });
  }
}

const s = (ms: number) => Math.round(ms / 100) / 10;
const results: RunResult[] = [];
try {
  for (const [i, count] of SIZES.entries()) {
    const r = await run(count, `${Date.now().toString(36)}${i}`);
    results.push(r);
    console.log(`\n${count} shoots (lease lost at ${r.lostSince}); per shoot:`);
    for (const p of r.perShoot)
      console.log(
        `  ${p.name.padEnd(4)} -> ${p.destination}: kill -> serving ${s(p.killToServingMs)} s (its move ${s(p.moveMs)} s); lost ${p.lost} of ${p.acknowledged} acknowledged writes, span ${s(p.lostSpanMs)} s, bound ${s(p.boundMs)} s: ${p.withinBound ? 'within' : 'BEYOND'}; copy ${p.finalSnapshot ? 'final' : `not final (${p.copyBasis})`}`,
      );
  }
} finally {
  await close();
  rmSync(workDir, { recursive: true, force: true });
}

console.log(
  `\nrecovery of a killed seed with the defaults (heartbeat ${HEARTBEAT_S} s: lease ${3 * HEARTBEAT_S} s; maxParallel ${DEFAULT_MAX_PARALLEL}; fence bound 60 s; backup lag limit 50 s) and after ${AFTER}:`,
);
for (const r of results) {
  const killToServing = r.perShoot.map((p) => p.killToServingMs);
  console.log(
    `${String(r.shoots).padStart(3)} shoots: kill -> lease loss ${s(r.killToLossMs)} s; lease loss + after -> last shoot serving ${s(r.dueToLastMs)} s (aim <= ${AIM_S} s: ${r.dueToLastMs <= AIM_S * 1_000 ? 'met' : 'NOT met'}; the evacuation began ${s(r.evacuationStartedAfterDueMs)} s after it was due); kill -> last shoot serving ${s(r.killToLastMs)} s; per shoot kill -> serving median ${s(median(killToServing))} s, max ${s(Math.max(...killToServing))} s; lost writes within the S3 bound for ${r.perShoot.filter((p) => p.withinBound).length} of ${r.shoots} shoots (largest span ${s(Math.max(...r.perShoot.map((p) => p.lostSpanMs)))} s, bound ${s(r.perShoot[0]!.boundMs)} s); at most ${r.peakHolding} moves held a place (${r.peakHeldSeen} as the controller counted them), ${r.peakMoving} moved at once; load ${r.load.map((l) => l.toFixed(1)).join(' -> ')} (${cpus().length} cores)`,
  );
}
record.save({
  settings: {
    shoots: SIZES.join(','),
    after: AFTER,
    maxParallel: DEFAULT_MAX_PARALLEL,
    heartbeatSeconds: HEARTBEAT_S,
    destinations: DESTINATIONS,
    writesPerSecondPerShoot: WRITES_PER_SECOND,
  },
  tables: [
    {
      title: 'Recovery of the seed (s)',
      columns: [
        'shoots',
        'kill to lease loss',
        'lease loss + after to last serving',
        'kill to last serving',
        'per shoot kill to serving, median',
        'per shoot kill to serving, max',
        'largest lost span',
        'S3 bound',
        'moves holding a place, most',
        'places held as counted, most',
        'moves at once, most',
      ],
      rows: results.map((r) => [
        r.shoots,
        s(r.killToLossMs),
        s(r.dueToLastMs),
        s(r.killToLastMs),
        s(median(r.perShoot.map((p) => p.killToServingMs))),
        s(Math.max(...r.perShoot.map((p) => p.killToServingMs))),
        s(Math.max(...r.perShoot.map((p) => p.lostSpanMs))),
        s(r.perShoot[0]!.boundMs),
        r.peakHolding,
        r.peakHeldSeen,
        r.peakMoving,
      ]),
    },
    ...results.map((r) => ({
      title: `Per shoot, ${r.shoots} shoots (s)`,
      columns: ['shoot', 'destination', 'kill to serving', 'lost writes', 'lost span', 'bound', 'copy'],
      rows: r.perShoot.map((p) => [
        p.name,
        p.destination,
        s(p.killToServingMs),
        p.lost,
        s(p.lostSpanMs),
        s(p.boundMs),
        p.finalSnapshot ? 'final' : p.copyBasis,
      ]),
    })),
  ],
  aims: results.flatMap((r) => [
    aim(`${r.shoots} shoots: lease loss + after to the last shoot serving`, s(r.dueToLastMs), '<=', AIM_S, 's'),
    aim(
      `${r.shoots} shoots: shoots whose lost writes stay within the S3 bound`,
      r.perShoot.filter((p) => p.withinBound).length,
      '>=',
      r.shoots,
      'shoots',
    ),
  ]),
});
console.log(`whole benchmark: ${((Date.now() - started) / 1000).toFixed(0)} s`);
