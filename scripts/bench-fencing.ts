/**
 * Fencing benchmark: how long after the owner record moves to another seed the source's etcd refuses
 * writes. Each run starts a fresh sidecar (real etcd, owner records in the emulator's Route 53, API mode),
 * runs a writer at a steady rate, changes the record at a random moment relative to the check schedule,
 * and measures from the change (the Route 53 call returned) to the first write the source refused.
 * Prints every run, the median and the maximum. Aim: at most the check interval + 1 s.
 *
 *   npm run bench:fencing
 *   BENCH_FENCING_RUNS=20 BENCH_FENCING_INTERVAL_MS=5000 npm run bench:fencing
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateHostedZoneCommand, Route53Client } from '@aws-sdk/client-route-53';
import { Route53OwnerLookup } from '../adapters/route53/owner-lookup.js';
import { route53Api, Route53OwnerRecords } from '../adapters/route53/owner-records.js';
import { InMemorySnapshotStore } from '../core/snapshots/index.js';
import { startEmulator, type Emulator } from '../local/emulator.js';
import { readEndpoints } from '../local/landscape-file.js';
import { freePort } from '../seed/ports.js';
import { BackupRestoreSidecar, sleep } from '../seed/backup-restore/index.js';
import { median } from './bench-support.js';

const RUNS = Number(process.env.BENCH_FENCING_RUNS ?? 10);
const INTERVAL = Number(process.env.BENCH_FENCING_INTERVAL_MS ?? 5_000);
const ME = 'seed-source';
const OTHER = 'seed-destination';

async function emulator(): Promise<Emulator> {
  const running = readEndpoints();
  if (running) {
    const ok = await fetch(`${running.awsEndpoint}/_localstack/health`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false);
    if (ok) return { endpoint: running.awsEndpoint, owned: false, pid: undefined, stop: async () => {} };
  }
  return startEmulator({ logFile: `.landscape/bench-fencing-emulator-${process.pid}.log` });
}

/** Writes until the first refusal; returns when it happened (performance.now()). */
async function writeUntilRefused(clientUrl: string, from: () => boolean, deadlineMs: number): Promise<{ refusedAt: number; acknowledged: number }> {
  let acknowledged = 0;
  const deadline = performance.now() + deadlineMs;
  for (let i = 0; performance.now() < deadline; i++) {
    try {
      const res = await fetch(`${clientUrl}/v3/kv/put`, {
        method: 'POST',
        body: JSON.stringify({ key: Buffer.from(`bench/${i}`).toString('base64'), value: Buffer.from('x').toString('base64') }),
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

const emu = await emulator();
const dir = mkdtempSync(join(tmpdir(), 'gl-bench-fencing-'));
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
try {
  const client = new Route53Client({ endpoint: emu.endpoint, region: 'us-east-1', credentials, maxAttempts: 1 });
  const zone = await client.send(new CreateHostedZoneCommand({ Name: `bench-${Date.now()}.internal.gardenless.test`, CallerReference: `bench-${Date.now()}` }));
  const records = new Route53OwnerRecords({ hostedZoneId: zone.HostedZone!.Id!, api: route53Api(client) });
  const lookup = new Route53OwnerLookup(records);
  const results: { total: number; kill: number }[] = [];
  console.log(`fencing benchmark: ${RUNS} runs, owner check interval ${INTERVAL} ms, API mode on the emulator`);
  for (let run = 1; run <= RUNS; run++) {
    const recordName = `owner.api${run}.bench.${zone.HostedZone!.Name!.replace(/\.$/, '')}`;
    await records.set({ name: recordName, value: ME });
    const sidecar = await BackupRestoreSidecar.start({
      technicalID: `shoot--bench--api${run}`,
      etcd: { dataDir: join(dir, `run-${run}`), clientPort: await freePort(), privatePort: await freePort(), peerPort: await freePort(), logFile: join(dir, `run-${run}.log`) },
      store: new InMemorySnapshotStore(),
      owner: { lookup, recordName, identity: ME },
      ownerCheckInterval: INTERVAL,
      deltaSnapshotInterval: 1_000,
    });
    try {
      while (sidecar.readiness() !== 200) await sleep(10);
      const change: { at?: number } = {};
      const writing = writeUntilRefused(sidecar.clientUrl, () => change.at !== undefined, INTERVAL * 3 + 10_000);
      // A random phase against the check schedule, as an orchestrator's change would have.
      await sleep(500 + Math.random() * INTERVAL);
      await records.set({ name: recordName, value: OTHER, expected: ME });
      const changedAt = performance.now();
      change.at = changedAt;
      const { refusedAt, acknowledged } = await writing;
      // The fence is recorded once etcd is back on the private address, a moment after writes are refused.
      for (let i = 0; i < 500 && sidecar.status().etcd.lastFence === null; i++) await sleep(10);
      const fence = sidecar.status().etcd.lastFence;
      const total = refusedAt - changedAt;
      const kill = fence ? fence.refusingAt - fence.signalledAt : Number.NaN;
      results.push({ total, kill });
      console.log(`run ${String(run).padStart(2)}: first refused write ${Math.round(total)} ms after the record change (SIGTERM to exit ${kill.toFixed(1)} ms; ${acknowledged} writes acknowledged before)`);
    } finally {
      await sidecar.stop();
    }
  }
  const totals = results.map((r) => r.total);
  const max = Math.max(...totals);
  console.log(
    `\nrecord change -> first refused write over ${RUNS} runs: median ${Math.round(median(totals))} ms, max ${Math.round(max)} ms; SIGTERM -> exit median ${median(results.map((r) => r.kill)).toFixed(1)} ms; aim <= interval + 1 s = ${INTERVAL + 1_000} ms: ${max <= INTERVAL + 1_000 ? 'met' : 'NOT met'}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
  await emu.stop();
}
