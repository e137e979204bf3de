/**
 * HA etcd benchmark, two parts in one run:
 *
 * 1. Failover: a three-member etcd (real etcd processes, one backup-restore sidecar each, etcd's default
 *    100 ms heartbeat and 1 s election timeout) under a writer of ~200 writes a second that knows every
 *    member. The leader's etcd gets SIGKILL (its sidecar restarts it); measured: from the kill to the
 *    first acknowledged write sent after it. Median and maximum over the runs (aim: at most 2 s).
 * 2. Restore: an etcd of at least 200 MB snapshotted into a bucket on the emulator; then, in the same
 *    run, a single-member restore (download, `etcdctl snapshot restore`, start, revision check) against a
 *    three-member restore of the same snapshot as the local runtime does it (one download, every member
 *    restored with the whole member list and a new token, started together, the coordinator replays, each
 *    member checks its own revision). Medians and the ratio cluster/single (aim: at most 1.3).
 *
 *   npm run bench:failover
 *   BENCH_FAILOVER_RUNS=20 BENCH_FAILOVER_RESTORE_MB=300 BENCH_FAILOVER_RESTORE_RUNS=3 npm run bench:failover
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { InMemorySnapshotStore, planRestore } from '../core/snapshots/index.js';
import { emulatorCredentials, emulatorEnv } from '../local/aws-env.js';
import { s3Backup } from '../seed/backup-restore/aws.js';
import { portOf } from '../seed/backup-restore/cluster/spec.js';
import { restoreMember } from '../seed/backup-restore/cluster/restore.js';
import { etcdHealthy } from '../seed/backup-restore/etcd-process.js';
import { download, EtcdSupervisor, restoreFromStore, Snapshotter } from '../seed/backup-restore/index.js';
import { freeEtcdPorts } from '../seed/ports.js';
import { ControlledOwnerLookup, memberSpecs, startInProcessCluster } from '../harness/cluster/in-process-cluster.js';
import { startClusterWriter } from '../harness/scenario/cluster-writer.js';
import { aim, startBenchRun } from './bench-results.js';
import { benchEmulator, fillEtcd, median } from './bench-support.js';

const RUNS = Number(process.env.BENCH_FAILOVER_RUNS ?? 10);
const RESTORE_MB = Number(process.env.BENCH_FAILOVER_RESTORE_MB ?? 220);
const RESTORE_RUNS = Number(process.env.BENCH_FAILOVER_RESTORE_RUNS ?? 3);
const epochNow = () => performance.timeOrigin + performance.now();

async function failover(): Promise<number[]> {
  const cluster = await startInProcessCluster({
    technicalID: 'shoot--bench--failover',
    store: new InMemorySnapshotStore(),
    identity: 'seed-bench',
    lookups: [new ControlledOwnerLookup('seed-bench')],
    sidecar: { ownerCheckInterval: 1_000, deltaSnapshotInterval: 5_000 },
  });
  const writer = startClusterWriter({
    endpoints: () => cluster.clientUrls,
    prefix: 'bench/failover',
    writesPerSecond: 200,
    timeoutMs: 300,
  });
  const times: number[] = [];
  try {
    for (let run = 1; run <= RUNS; run++) {
      // Every member healthy and serving before each kill.
      const deadline = Date.now() + 60_000;
      while (
        !(await Promise.all(cluster.clientUrls.map((u) => etcdHealthy(u, 500).catch(() => false)))).every(Boolean)
      ) {
        if (Date.now() > deadline) throw new Error(`run ${run}: the cluster did not become healthy again`);
        await sleep(100);
      }
      await sleep(1_000);
      const leader = await cluster.leader();
      if (leader === undefined) throw new Error(`run ${run}: no leader`);
      const killedAt = epochNow();
      process.kill(leader.sidecar.supervisor.pid!, 'SIGKILL');
      let next: number | undefined;
      while (next === undefined && epochNow() - killedAt < 30_000) {
        next = writer.record().acknowledged.find((a) => a.sentAt >= killedAt)?.at;
        await sleep(10);
      }
      if (next === undefined) throw new Error(`run ${run}: no acknowledged write within 30 s of the kill`);
      times.push(next - killedAt);
      const newLeader = await cluster.leader();
      console.log(
        `failover run ${run}: killed ${leader.spec.name}, next acknowledged write after ${Math.round(next - killedAt)} ms (leader now ${newLeader?.spec.name ?? '?'})`,
      );
    }
    const record = await writer.stop();
    console.log(`writer: ${record.acknowledged.length} acknowledged, ${record.failed} writes no member acknowledged`);
  } finally {
    await writer.stop();
    await cluster.stop();
  }
  return times;
}

async function restore(): Promise<{ single: number[]; cluster: number[]; dbBytes: number }> {
  const emu = await benchEmulator('failover');
  const dir = mkdtempSync(join(tmpdir(), 'gl-bench-failover-'));
  const supervisors: EtcdSupervisor[] = [];
  const technicalID = 'shoot--bench--ha-restore';
  const ports = freeEtcdPorts;
  try {
    const env = emulatorEnv(emu.endpoint);
    const s3 = new S3Client({
      endpoint: emu.endpoint,
      region: env.AWS_REGION,
      credentials: emulatorCredentials(),
      forcePathStyle: true,
    });
    const bucket = `gl-backup-bench-ha-${Date.now()}`;
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const { store, rangedReader } = s3Backup({ bucket, client: s3 });

    const source = new EtcdSupervisor({
      dataDir: join(dir, 'source'),
      ...(await ports()),
      logFile: join(dir, 'source.log'),
    });
    supervisors.push(source);
    await source.ensure('public');
    const revision = await fillEtcd(source.clientUrl('public'), RESTORE_MB);
    const dbBytes = statSync(join(dir, 'source', 'member', 'snap', 'db')).size;
    const snapshotter = new Snapshotter({
      store,
      technicalID,
      endpoint: () => source.clientUrl('public'),
      stagingDir: join(dir, 'staging'),
      compression: 'none',
    });
    const full = await snapshotter.takeFull();
    console.log(
      `\nrestore: etcd of ${(dbBytes / 1e6).toFixed(0)} MB at revision ${revision}, full snapshot ${(full.size / 1e6).toFixed(0)} MB in the bucket`,
    );
    await source.stop();

    const single: number[] = [];
    const cluster: number[] = [];
    for (let run = 1; run <= RESTORE_RUNS; run++) {
      // One member, as the sidecar of a shoot without failure tolerance restores.
      const target = new EtcdSupervisor({
        dataDir: join(dir, `single-${run}`),
        ...(await ports()),
        logFile: join(dir, `single-${run}.log`),
      });
      supervisors.push(target);
      const one = await restoreFromStore({
        store,
        technicalID,
        supervisor: target,
        stagingDir: join(dir, 'staging'),
        expectedLastRevision: revision,
        rangedReader,
      });
      await target.stop();
      rmSync(join(dir, `single-${run}`), { recursive: true, force: true });
      if (one.revision < revision) throw new Error(`single restore reached ${one.revision}, expected ${revision}`);

      // Three members, as LocalEtcdCluster restores: one download, then every member at once.
      const c0 = performance.now();
      const specs = await memberSpecs(3);
      const token = `bench-${run}-${Date.now().toString(36)}`;
      const initialCluster = specs.map((s) => ({ name: s.name, peerUrl: s.peerUrl }));
      const plan = planRestore(await store.list(technicalID), { technicalID, expectedLastRevision: revision });
      const file = join(dir, `cluster-${run}-full.db`);
      await download(store, plan.full, file, rangedReader);
      const downloaded = performance.now() - c0;
      const members = specs.map((s) => {
        const supervisor = new EtcdSupervisor({
          name: s.name,
          dataDir: join(dir, `cluster-${run}`, s.name),
          clientPort: portOf(s.clientUrl),
          privatePort: portOf(s.privateUrl),
          peerPort: portOf(s.peerUrl),
          cluster: { initialCluster, state: 'new', token },
          logFile: join(dir, `cluster-${run}-${s.name}.log`),
        });
        supervisors.push(supervisor);
        return supervisor;
      });
      const results = await Promise.all(
        members.map((supervisor, i) =>
          restoreMember({
            store,
            technicalID,
            supervisor,
            stagingDir: join(dir, 'staging'),
            cluster: { initialCluster, token },
            coordinator: i === 0,
            expectedLastRevision: revision,
            file,
          }),
        ),
      );
      const clusterMs = performance.now() - c0;
      const revisions = new Set(results.map((r) => r.revision));
      if (revisions.size !== 1 || results[0]!.revision < revision)
        throw new Error(`cluster restore: members at ${[...revisions].join(', ')}, expected ${revision}`);
      await Promise.all(members.map((m) => m.stop()));
      rmSync(join(dir, `cluster-${run}`), { recursive: true, force: true });
      rmSync(file, { force: true });

      single.push(one.timings.total);
      cluster.push(clusterMs);
      const t = one.timings;
      const phases = results
        .map((r) => `restore ${r.timings.restore}/start ${r.timings.start}/replay+verify ${r.timings.replay}`)
        .join(' | ');
      console.log(
        `restore run ${run}: single ${t.total} ms (download ${t.download}, etcdctl ${t.restore}, start ${t.start}, verify ${t.replay}) | three members ${Math.round(clusterMs)} ms (download ${Math.round(downloaded)}; ${phases}) | ratio ${(clusterMs / t.total).toFixed(2)}`,
      );
    }
    return { single, cluster, dbBytes };
  } finally {
    for (const s of supervisors) await s.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    await emu.stop();
  }
}

const bench = startBenchRun({
  bench: 'failover',
  title: 'HA etcd',
  command: 'npm run bench:failover',
  about:
    "A three-member etcd (real etcd 3.4, one backup-restore sidecar each, etcd's default 100 ms heartbeat and 1 s " +
    "election timeout) under a writer that knows every member: the leader's etcd killed with SIGKILL, time to the " +
    'next acknowledged write. Then a snapshot of about 220 MB restored into one member and into three members as ' +
    'the local runtime does it, in the same run.',
});
const times = await failover();
const restored = await restore();
const ratio = median(restored.cluster) / median(restored.single);
console.log(
  `\nfailover (${RUNS} runs, leader's etcd killed, election timeout 1 s): next acknowledged write after median ${Math.round(median(times))} ms, max ${Math.round(Math.max(...times))} ms (aim <= 2000: ${Math.max(...times) <= 2_000 ? 'met' : 'NOT met'})`,
);
console.log(
  `restore of a ${(restored.dbBytes / 1e6).toFixed(0)} MB snapshot (${RESTORE_RUNS} runs, medians): three members ${Math.round(median(restored.cluster))} ms, one member ${Math.round(median(restored.single))} ms, ratio ${ratio.toFixed(2)} (aim <= 1.3: ${ratio <= 1.3 ? 'met' : 'NOT met'})`,
);
bench.save({
  settings: { failoverRuns: RUNS, restoreRuns: RESTORE_RUNS },
  tables: [
    {
      title: "Failover: leader's etcd killed, next acknowledged write (ms)",
      columns: ['runs', 'median', 'maximum'],
      rows: [[RUNS, Math.round(median(times)), Math.round(Math.max(...times))]],
    },
    {
      title: `Restore of a ${(restored.dbBytes / 1e6).toFixed(0)} MB snapshot (medians, ms)`,
      columns: ['runs', 'three members', 'one member', 'ratio'],
      rows: [[RESTORE_RUNS, Math.round(median(restored.cluster)), Math.round(median(restored.single)), ratio]],
      decimals: [0, 0, 0, 2],
    },
  ],
  aims: [
    aim('failover, maximum', Math.round(Math.max(...times)), '<=', 2_000, 'ms'),
    aim('restore, three members over one', Math.round(ratio * 100) / 100, '<=', 1.3, 'x'),
  ],
});
