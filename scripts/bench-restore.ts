/**
 * Restore benchmark: an etcd of at least 200 MB is snapshotted into a bucket on the emulator; then, in
 * the same run, (a) the sidecar's restore from the bucket through the S3 latency model (bench-support.ts,
 * `s3ModelFromEnv`: download, `etcdctl snapshot restore`, start on the private address, revision check;
 * large uncompressed snapshots come down in parallel ranges) and (b) `etcdctl snapshot restore` of the
 * same snapshot file alone. The baseline is (b) plus the time to download the file once at the model's
 * bandwidth; prints the phases of (a) and the ratio a/baseline (aim: at most 1.5).
 *
 *   npm run bench:restore
 *   BENCH_RESTORE_MB=300 BENCH_RESTORE_RUNS=5 BENCH_RESTORE_COMPRESSION=gzip npm run bench:restore
 *   BENCH_S3_LATENCY_MS=30 BENCH_S3_MBPS=100 npm run bench:restore    (BENCH_S3_MODEL=off: no model)
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { emulatorCredentials, emulatorEnv } from '../local/aws-env.js';
import { freeEtcdPorts, freePort } from '../seed/ports.js';
import { s3Backup } from '../seed/backup-restore/aws.js';
import {
  download,
  EtcdSupervisor,
  restoreFromStore,
  restoreSnapshot,
  Snapshotter,
  type Compression,
} from '../seed/backup-restore/index.js';
import {
  behindS3Model,
  benchEmulator,
  describeS3Model,
  fillEtcd,
  median,
  modelTransferSeconds,
  s3ModelFromEnv,
} from './bench-support.js';
import { aim, startBenchRun } from './bench-results.js';

const record = startBenchRun({
  bench: 'restore',
  title: 'Restore',
  command: 'npm run bench:restore',
  about:
    'An etcd of about 220 MB snapshotted into a bucket; the sidecar restores it from the bucket under the S3 ' +
    'latency model (download in parallel ranges, `etcdctl snapshot restore`, start on the private address, ' +
    'revision check), against `etcdctl snapshot restore` of the same file alone plus one download of it at the ' +
    "model's bandwidth, in the same run.",
});
const TARGET_MB = Number(process.env.BENCH_RESTORE_MB ?? 220);
const RUNS = Number(process.env.BENCH_RESTORE_RUNS ?? 5);
const COMPRESSION = (process.env.BENCH_RESTORE_COMPRESSION ?? 'none') as Compression;
const technicalID = 'shoot--bench--restore';

async function ports() {
  return freeEtcdPorts();
}

const model = s3ModelFromEnv();
const emu = await benchEmulator('restore');
const modelled = await behindS3Model(emu.endpoint, model);
const dir = mkdtempSync(join(tmpdir(), 'gl-bench-restore-'));
const supervisors: EtcdSupervisor[] = [];
try {
  const env = emulatorEnv(emu.endpoint);
  const client = (endpoint: string) =>
    new S3Client({
      endpoint,
      region: env.AWS_REGION,
      credentials: emulatorCredentials(),
      forcePathStyle: true,
    });
  const s3 = client(emu.endpoint);
  const bucket = `gl-backup-bench-${Date.now()}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  // Preparing goes straight to the emulator; the measured restore through the model.
  const { store } = s3Backup({ bucket, client: s3 });
  const restoreSide = s3Backup({ bucket, client: client(modelled.endpoint) });

  // Prepare: the source etcd and its full snapshot in the bucket.
  const source = new EtcdSupervisor({
    dataDir: join(dir, 'source'),
    ...(await ports()),
    logFile: join(dir, 'source.log'),
  });
  supervisors.push(source);
  await source.ensure('public');
  const t0 = performance.now();
  const revision = await fillEtcd(source.clientUrl('public'), TARGET_MB);
  const dbBytes = statSync(join(dir, 'source', 'member', 'snap', 'db')).size;
  console.log(
    `filled etcd: revision ${revision}, database ${(dbBytes / 1e6).toFixed(0)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const snapshotter = new Snapshotter({
    store,
    technicalID,
    endpoint: () => source.clientUrl('public'),
    stagingDir: join(dir, 'staging'),
    compression: COMPRESSION,
  });
  const full = await snapshotter.takeFull();
  console.log(
    `full snapshot ${full.key}: ${(full.size / 1e6).toFixed(0)} MB uploaded in ${(full.ms / 1000).toFixed(1)} s (compression ${COMPRESSION})`,
  );
  await source.stop();

  // The same snapshot file, for the etcdctl baseline.
  const listing = await store.list(technicalID);
  const snapshotFile = join(dir, 'baseline.db');
  await download(store, listing.at(-1)!, snapshotFile);

  const oneDownloadS = modelTransferSeconds(model, full.size);
  console.log(
    `${describeS3Model(model)}${model ? ` (loopback proxy ${modelled.endpoint})` : ''}; one download of the ${(full.size / 1e6).toFixed(0)} MB snapshot at that bandwidth: ${(oneDownloadS * 1000).toFixed(0)} ms`,
  );
  const sidecarTimes: number[] = [];
  const etcdctlTimes: number[] = [];
  const phases: { download: number[]; restore: number[]; start: number[]; replay: number[] } = {
    download: [],
    restore: [],
    start: [],
    replay: [],
  };
  for (let run = 1; run <= RUNS; run++) {
    // (b) etcdctl snapshot restore of the file alone.
    const baselineDir = join(dir, `baseline-${run}`);
    const b0 = performance.now();
    await restoreSnapshot({
      file: snapshotFile,
      dataDir: baselineDir,
      name: 'etcd',
      peerUrl: `http://127.0.0.1:${await freePort()}`,
    });
    const etcdctlMs = performance.now() - b0;
    rmSync(baselineDir, { recursive: true, force: true });

    // (a) the sidecar's restore from the bucket, up to a verified etcd on the private address.
    const target = new EtcdSupervisor({
      dataDir: join(dir, `target-${run}`),
      ...(await ports()),
      logFile: join(dir, `target-${run}.log`),
    });
    supervisors.push(target);
    const result = await restoreFromStore({
      store: restoreSide.store,
      technicalID,
      supervisor: target,
      stagingDir: join(dir, 'staging'),
      expectedLastRevision: revision,
      rangedReader: restoreSide.rangedReader,
    });
    await target.stop();
    rmSync(join(dir, `target-${run}`), { recursive: true, force: true });
    if (result.revision !== revision) throw new Error(`restored revision ${result.revision}, expected ${revision}`);

    sidecarTimes.push(result.timings.total);
    etcdctlTimes.push(etcdctlMs);
    const t = result.timings;
    for (const phase of ['download', 'restore', 'start', 'replay'] as const) phases[phase].push(t[phase]);
    const baselineMs = etcdctlMs + oneDownloadS * 1000;
    console.log(
      `run ${run}: restore from bucket ${t.total} ms (download ${t.download}, etcdctl restore ${t.restore}, start ${t.start}, verify ${t.replay}) | etcdctl snapshot restore alone ${Math.round(etcdctlMs)} ms, plus one download ${Math.round(baselineMs)} ms | ratio ${(t.total / baselineMs).toFixed(2)}`,
    );
  }
  const baseline = median(etcdctlTimes) + oneDownloadS * 1000;
  const ratio = median(sidecarTimes) / baseline;
  const ms = (values: number[]) => `${Math.round(median(values))} ms`;
  console.log(
    `\nrestore of a ${(dbBytes / 1e6).toFixed(0)} MB etcd (${RUNS} runs, medians): from the bucket ${ms(sidecarTimes)} (download ${ms(phases.download)}, etcdctl restore ${ms(phases.restore)}, start ${ms(phases.start)}, verify ${ms(phases.replay)}); ` +
      `etcdctl snapshot restore alone ${ms(etcdctlTimes)} + one download at the model's bandwidth ${Math.round(oneDownloadS * 1000)} ms = ${Math.round(baseline)} ms; ratio ${ratio.toFixed(2)} (aim <= 1.5: ${ratio <= 1.5 ? 'met' : 'NOT met'})`,
  );
  const medianMs = (values: number[]) => Math.round(median(values));
  record.save({
    settings: { runs: RUNS, compression: COMPRESSION, s3Model: describeS3Model(model) },
    tables: [
      {
        title: `Restore of a ${(dbBytes / 1e6).toFixed(0)} MB etcd (medians of ${RUNS} runs, ms)`,
        columns: [
          'from the bucket',
          'download',
          'etcdctl restore',
          'start',
          'verify',
          'baseline: etcdctl alone',
          'baseline: one download',
          'ratio',
        ],
        rows: [
          [
            medianMs(sidecarTimes),
            medianMs(phases.download),
            medianMs(phases.restore),
            medianMs(phases.start),
            medianMs(phases.replay),
            medianMs(etcdctlTimes),
            Math.round(oneDownloadS * 1000),
            ratio,
          ],
        ],
        decimals: [0, 0, 0, 0, 0, 0, 0, 2],
      },
    ],
    aims: [aim('restore from the bucket over the baseline', Math.round(ratio * 100) / 100, '<=', 1.5, 'x')],
  });
} finally {
  for (const s of supervisors) await s.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
  await modelled.stop();
  await emu.stop();
}
