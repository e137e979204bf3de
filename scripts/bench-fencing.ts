/**
 * Fencing benchmark: how long after the owner record moves to another seed the source's etcd refuses
 * writes, with and without the owner-change notice. Each run starts a fresh sidecar (real etcd, owner
 * records in the emulator's Route 53, API mode), runs a writer at a steady rate, changes the record at a
 * random moment relative to the check schedule, and measures from the change (the Route 53 call returned)
 * to the first write the source refused.
 *
 * - poll: nothing but the sidecar's own owner checks (every `BENCH_FENCING_INTERVAL_MS`).
 * - notice: right after the change, what the migration's owner step and the seed agent do: a `check-owner`
 *   command on a FIFO queue of the emulator's SQS (the garden's adapter), taken by a long-polling inbox
 *   (the agent's), parsed by the protocol, and posted to the sidecar's `/owner-check` (the local runtime's
 *   call). Only the Lambda and the Step Functions transition around the owner step are left out.
 *
 * Runs alternate between the two, so that load on the machine falls on both alike. Prints every run, and
 * per mode the median and the maximum. Aims: with the notice, median <= 1 s; either way, maximum <= the
 * check interval + 1 s.
 *
 *   npm run bench:fencing
 *   BENCH_FENCING_RUNS=20 BENCH_FENCING_INTERVAL_MS=5000 npm run bench:fencing
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateHostedZoneCommand, Route53Client } from '@aws-sdk/client-route-53';
import { CreateQueueCommand, DeleteQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Route53OwnerLookup } from '../adapters/route53/owner-lookup.js';
import { route53Api, Route53OwnerRecords } from '../adapters/route53/owner-records.js';
import { sqsSeedNotices } from '../adapters/sqs/command-sender.js';
import { buildCommand } from '../core/commands/build.js';
import { readCommand } from '../core/commands/protocol.js';
import { ownerNoticeGroup } from '../core/migration/owner-notice.js';
import { InMemorySnapshotStore } from '../core/snapshots/index.js';
import { sqsCommandInbox } from '../seed/agent/inbox.js';
import { noticeSidecar } from '../seed/agent/sidecar-process.js';
import { freeEtcdPorts } from '../seed/ports.js';
import { BackupRestoreSidecar, sleep } from '../seed/backup-restore/index.js';
import { aim, startBenchRun, type BenchAim, type Cell } from './bench-results.js';
import { benchEmulator, median } from './bench-support.js';
import { emulatorCredentials } from '../local/aws-env.js';

const RUNS = Number(process.env.BENCH_FENCING_RUNS ?? 10);
const record = startBenchRun({
  bench: 'fencing',
  title: 'Fencing',
  command: 'npm run bench:fencing',
  about:
    "From the owner-record change to the first write the source's etcd refuses: a sidecar with a real etcd and a " +
    "writer, the owner record in the emulator's Route 53 (API mode), the change at a random moment against the " +
    'check schedule; runs alternate between polling alone and the owner-change notice travelling as a migration ' +
    "sends it (a check-owner command on the emulator's SQS, the agent's inbox, the sidecar's POST /owner-check).",
});
const INTERVAL = Number(process.env.BENCH_FENCING_INTERVAL_MS ?? 5_000);
const ME = 'seed-source';
const OTHER = 'seed-destination';
type Mode = 'notice' | 'poll';

/** Writes until the first refusal; returns when it happened (performance.now()). */
async function writeUntilRefused(
  clientUrl: string,
  from: () => boolean,
  deadlineMs: number,
): Promise<{ refusedAt: number; acknowledged: number }> {
  let acknowledged = 0;
  const deadline = performance.now() + deadlineMs;
  for (let i = 0; performance.now() < deadline; i++) {
    try {
      const res = await fetch(`${clientUrl}/v3/kv/put`, {
        method: 'POST',
        body: JSON.stringify({
          key: Buffer.from(`bench/${i}`).toString('base64'),
          value: Buffer.from('x').toString('base64'),
        }),
        signal: AbortSignal.timeout(1_000),
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`status ${res.status}`);
      acknowledged += 1;
    } catch {
      if (from()) return { refusedAt: performance.now(), acknowledged };
    }
    await sleep(2);
  }
  throw new Error(`no write refused within ${deadlineMs} ms`);
}

const emu = await benchEmulator('fencing');
const dir = mkdtempSync(join(tmpdir(), 'gl-bench-fencing-'));
const aws = {
  endpoint: emu.endpoint,
  region: 'us-east-1',
  credentials: emulatorCredentials(),
};
const sqs = new SQSClient({ ...aws, maxAttempts: 1 });
const queue = await sqs.send(
  new CreateQueueCommand({ QueueName: `gl-seed-bench-fencing-${Date.now()}.fifo`, Attributes: { FifoQueue: 'true' } }),
);
const queueUrl = queue.QueueUrl!;
/** The seed agent's side: long-polls the queue and hands each notice to the sidecar it names. */
const agent = { abort: new AbortController(), statusUrls: new Map<string, string>() };
const agentLoop = (async () => {
  const inbox = sqsCommandInbox({ client: sqs, queueUrl, waitSeconds: 5 });
  while (!agent.abort.signal.aborted) {
    const messages = await inbox.receive(agent.abort.signal).catch(() => []);
    for (const message of messages) {
      const { command } = readCommand(message.body, { seed: 'bench-source' });
      await inbox.delete(message).catch(() => undefined);
      const statusUrl = command?.type === 'check-owner' ? agent.statusUrls.get(command.shoot.technicalID) : undefined;
      if (statusUrl) void noticeSidecar(statusUrl);
    }
  }
})();
const notices = sqsSeedNotices({ client: sqs });
try {
  const client = new Route53Client({ ...aws, maxAttempts: 1 });
  const zone = await client.send(
    new CreateHostedZoneCommand({
      Name: `bench-${Date.now()}.internal.gardenless.test`,
      CallerReference: `bench-${Date.now()}`,
    }),
  );
  const records = new Route53OwnerRecords({ hostedZoneId: zone.HostedZone!.Id!, api: route53Api(client) });
  const lookup = new Route53OwnerLookup(records);
  const results: { mode: Mode; total: number; refusing: number; stopped: number; privateReady: number }[] = [];
  console.log(
    `fencing benchmark: ${RUNS} runs each with and without the owner-change notice, owner check interval ${INTERVAL} ms, API mode on the emulator`,
  );
  for (let run = 1; run <= RUNS * 2; run++) {
    const mode: Mode = run % 2 === 1 ? 'notice' : 'poll';
    const technicalID = `shoot--bench--api${run}`;
    const recordName = `owner.api${run}.bench.${zone.HostedZone!.Name!.replace(/\.$/, '')}`;
    await records.set({ name: recordName, value: ME });
    const sidecar = await BackupRestoreSidecar.start({
      technicalID,
      etcd: { dataDir: join(dir, `run-${run}`), ...(await freeEtcdPorts()), logFile: join(dir, `run-${run}.log`) },
      store: new InMemorySnapshotStore(),
      owner: { lookup, recordName, identity: ME },
      ownerCheckInterval: INTERVAL,
      deltaSnapshotInterval: 1_000,
    });
    agent.statusUrls.set(technicalID, sidecar.statusUrl);
    try {
      while (sidecar.readiness() !== 200) await sleep(10);
      const change: { at?: number } = {};
      const writing = writeUntilRefused(sidecar.clientUrl, () => change.at !== undefined, INTERVAL * 3 + 10_000);
      // A random phase against the check schedule, as an orchestrator's change would have.
      await sleep(500 + Math.random() * INTERVAL);
      await records.set({ name: recordName, value: OTHER, expected: ME });
      const changedAt = performance.now();
      change.at = changedAt;
      if (mode === 'notice') {
        const command = buildCommand<'check-owner'>(
          {
            shoot: { project: 'bench', name: `api${run}`, technicalID },
            seed: 'bench-source',
            commandId: `bench-${run}/set-owner-destination/check-owner`,
            issuedAt: new Date(),
          },
          { type: 'check-owner', change: 'set' },
        );
        await notices
          .send({ command, queueUrl, messageGroupId: ownerNoticeGroup(technicalID) })
          .catch((error: unknown) => console.log(`run ${run}: the notice was not sent: ${String(error)}`));
      }
      const { refusedAt, acknowledged } = await writing;
      // The fence is recorded once etcd is gone from the public address, its private start a moment later.
      for (let i = 0; i < 500 && sidecar.status().etcd.lastFence?.privateReadyAt === undefined; i++) await sleep(10);
      const fence = sidecar.status().etcd.lastFence;
      const total = refusedAt - changedAt;
      const refusing = fence ? fence.refusingAt - fence.signalledAt : Number.NaN;
      const stopped = fence ? fence.stoppedAt - fence.signalledAt : Number.NaN;
      const privateReady = fence?.privateReadyAt === undefined ? Number.NaN : fence.privateReadyAt - fence.signalledAt;
      results.push({ mode, total, refusing, stopped, privateReady });
      console.log(
        `run ${String(run).padStart(2)} (${mode.padEnd(6)}): first refused write ${Math.round(total)} ms after the record change (fence by ${fence?.by ?? '-'}: writes refused after ${refusing.toFixed(1)} ms, etcd gone after ${stopped.toFixed(1)} ms; ${acknowledged} writes acknowledged before)`,
      );
    } finally {
      agent.statusUrls.delete(technicalID);
      await sidecar.stop();
    }
  }
  console.log('');
  const rows: Cell[][] = [];
  const aims: BenchAim[] = [];
  for (const mode of ['notice', 'poll'] as const) {
    const totals = results.filter((r) => r.mode === mode).map((r) => r.total);
    const [mid, max] = [Math.round(median(totals)), Math.round(Math.max(...totals))];
    const label = mode === 'notice' ? 'with the owner-change notice' : 'polling alone';
    rows.push([label, totals.length, mid, max]);
    if (mode === 'notice') aims.push(aim(`${label}, median`, mid, '<=', 1_000, 'ms'));
    aims.push(aim(`${label}, maximum (the check interval + 1 s)`, max, '<=', INTERVAL + 1_000, 'ms'));
    console.log(
      `${label}: record change -> first refused write over ${totals.length} runs: median ${mid} ms, max ${max} ms`,
    );
  }
  const phase = (pick: (r: (typeof results)[number]) => number) => median(results.map(pick));
  console.log(
    `over all runs, from the fence's start: writes refused median ${phase((r) => r.refusing).toFixed(1)} ms; etcd gone from the public address (the final delta read before) median ${phase((r) => r.stopped).toFixed(1)} ms; etcd healthy on the private address median ${Math.round(phase((r) => r.privateReady))} ms`,
  );
  for (const a of aims)
    console.log(`aim: ${a.what} ${a.value} ${a.unit} ${a.comparison} ${a.aim}: ${a.met ? 'met' : 'NOT met'}`);
  record.save({
    settings: { runsPerMode: RUNS, ownerCheckIntervalMs: INTERVAL },
    tables: [
      {
        title: 'Owner-record change to the first refused write (ms)',
        columns: ['mode', 'runs', 'median', 'maximum'],
        rows,
      },
      {
        title: "From the fence's start, over all runs (median, ms)",
        columns: [
          'writes refused (etcd alarm)',
          'etcd gone from the public address (gate closed)',
          'etcd healthy on the private address',
        ],
        rows: [[phase((r) => r.refusing), phase((r) => r.stopped), Math.round(phase((r) => r.privateReady))]],
        decimals: [1, 1, 0],
      },
    ],
    aims,
  });
} finally {
  agent.abort.abort();
  await agentLoop;
  await sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl })).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
  await emu.stop();
}
