/**
 * The early switch to the bad path on the local landscape (`npm start` first): the source seed's agent is
 * frozen (SIGSTOP of the agent process alone; its sidecars and etcds keep running), then a migration in
 * mode auto is requested at once, while the source's last heartbeat is still fresh (the good path is
 * chosen). Prints the time from the request to Succeeded and when and why the flow left the good path;
 * the lease monitor runs on its own schedule, as deployed. BENCH_BASELINE=1 also measures mode good the
 * same way (it keeps waiting for the source command's timeout, 5 minutes on the landscape).
 *
 *   npm run bench:early-switch            (BENCH_SHOOT=dev/web BENCH_RUNS=3 BENCH_BASELINE=0)
 */
import { cpus, loadavg } from 'node:os';
import { GardenClient } from '../adapters/http/garden-client.js';
import type { MigrationRecord } from '../core/migration/record.js';
import type { Shoot } from '../core/model/shoot.js';
import { readEndpoints } from '../local/landscape-file.js';
import { agentPids } from '../harness/agent-process.js';
import { aim, startBenchRun, type Cell } from './bench-results.js';
import { median } from './bench-stats.js';
import { emulatorCredentials } from '../local/aws-env.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const bench = startBenchRun({
  bench: 'early-switch',
  title: 'Early switch to the bad path',
  command: 'npm start && npm run bench:early-switch',
  about:
    "On the local landscape: the source seed's agent process frozen (SIGSTOP; its sidecar and etcd keep running), " +
    "then a migration in mode auto requested at once, while the source's last heartbeat is still fresh, so the " +
    'good path is chosen; the lease monitor fails the waiting step once the lease expires and the flow goes on ' +
    'on the bad path. Runs go back and forth between seeds; BENCH_BASELINE=1 adds mode good, which waits for ' +
    "the command's timeout.",
});
const [project, name] = (process.env.BENCH_SHOOT ?? 'dev/web').split('/') as [string, string];
const endpoints = readEndpoints();
if (!endpoints) {
  console.error('No local landscape: run `npm start` first.');
  process.exit(2);
}
const api = new GardenClient({
  apiUrl: endpoints.apiUrl,
  region: endpoints.region,
  credentials: emulatorCredentials(),
});

async function ready(seed: string): Promise<boolean> {
  const res = await api.request<{ status: { conditions: { type: string; status: string }[] } }>(
    'GET',
    `/seeds/${seed}`,
  );
  return res.body.status.conditions.some((c) => c.type === 'GardenletReady' && c.status === 'True');
}

/** One migration of the shoot with its source's agent frozen; the agent is thawed afterwards, whatever happens. */
async function frozenSourceMigration(
  mode: 'auto' | 'good',
): Promise<{ seconds: number; record: MigrationRecord; source: string; load: string }> {
  const shoot = (await api.request<Shoot>('GET', `/projects/${project}/shoots/${name}`)).body;
  const source = shoot.status.seedName;
  if (!source) throw new Error(`shoot ${project}/${name} is not scheduled`);
  const root = endpoints!.agentPids?.[source];
  if (!root) throw new Error(`no agent pid for seed ${source} in .landscape/endpoints.json`);
  for (let i = 0; !(await ready(source)); i++) {
    if (i > 60) throw new Error(`seed ${source} is not ready`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
  const frozen = agentPids(root);
  if (frozen.length === 0) throw new Error(`no seed-agent process below pid ${root}`);
  for (const pid of frozen) process.kill(pid, 'SIGSTOP');
  try {
    const t0 = performance.now();
    const loadAtStart = loadavg()[0]!.toFixed(1);
    const started = await api.request<{ migrationId: string; message?: string }>(
      'POST',
      `/projects/${project}/shoots/${name}/migrate`,
      { body: { mode } },
    );
    if (started.status !== 202) throw new Error(`migrate: ${started.status} ${JSON.stringify(started.body)}`);
    for (;;) {
      const record = (await api.request<MigrationRecord>('GET', `/projects/${project}/shoots/${name}/migration`)).body;
      if (record.state !== 'Running')
        return {
          seconds: (performance.now() - t0) / 1000,
          record,
          source,
          load: `${loadAtStart} at the request, ${loadavg()[0]!.toFixed(1)} at the end (1 min, ${cpus().length} cores)`,
        };
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    for (const pid of frozen) process.kill(pid, 'SIGCONT');
  }
}

const rows: Cell[][] = [];
const times: number[] = [];

function report(label: string, run: { seconds: number; record: MigrationRecord; source: string; load: string }): void {
  const { record } = run;
  const switchedS = record.switchedToBadPathAt
    ? (Date.parse(record.switchedToBadPathAt) - Date.parse(record.createdAt)) / 1000
    : undefined;
  console.log(
    `  ${label}: ${record.state} in ${run.seconds.toFixed(1)} s (request -> ${record.state}), ${run.source} -> ${record.destination.name}, path ${record.path}, switched to the bad path ${switchedS === undefined ? 'never' : `${switchedS.toFixed(1)} s after admission`}; load average ${run.load}`,
  );
  if (record.badPathSwitch) console.log(`    why: ${record.badPathSwitch.failedStep}: ${record.badPathSwitch.reason}`);
  if (record.error) console.log(`    error: ${record.error.step}: ${record.error.message}`);
  rows.push([label, record.state, run.seconds, switchedS ?? null, run.load]);
}

console.log(
  `bench:early-switch  shoot ${project}/${name} on the local landscape (${endpoints.awsEndpoint}); the source's agent frozen (SIGSTOP), its sidecar alive`,
);
let failed = false;
for (let run = 1; run <= RUNS; run++) {
  if (run > 1) await new Promise((r) => setTimeout(r, 10_000)); // the thawed agent of the old source settles
  const auto = await frozenSourceMigration('auto');
  report(`mode auto, run ${run}`, auto);
  times.push(auto.seconds);
  failed ||= auto.record.state !== 'Succeeded';
}
if (process.env.BENCH_BASELINE === '1') {
  await new Promise((r) => setTimeout(r, 10_000));
  report('mode good (baseline: waits for the command timeout)', await frozenSourceMigration('good'));
}
bench.save({
  settings: { shoot: `${project}/${name}`, runs: RUNS, baseline: process.env.BENCH_BASELINE === '1' },
  tables: [
    {
      title: 'Migrations with the source agent frozen',
      columns: ['run', 'state', 'request to end (s)', 'left the good path after admission (s)', 'load average'],
      rows,
      decimals: [undefined, undefined, 1, 1],
    },
  ],
  aims: [aim('mode auto, request to Succeeded, median', Math.round(median(times) * 10) / 10, '<=', 60, 's')],
});
process.exit(failed ? 1 : 0);
