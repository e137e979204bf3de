/**
 * Snapshot copy benchmark: 200 objects of mixed sizes (1 KB to 50 MB) copied server-side between two
 * backup buckets through the copy task's own code path (`copyBatch` over `S3SnapshotStore`: CopyObject,
 * UploadPartCopy above the multipart threshold, HeadObject verification), once with objects in parallel
 * and once one at a time, in the same run, into fresh destination buckets. The copies talk to the
 * emulator through the S3 latency model (bench-support.ts, `s3ModelFromEnv`); preparing the objects and
 * measuring the emulator's own overlap go straight to it.
 *
 *   npm run bench:copy                      (uses the running local landscape's emulator, else starts its own)
 *   BENCH_OBJECTS=200 BENCH_CONCURRENCY=32 BENCH_MULTIPART_MB=64,16 BENCH_S3_LATENCY_MS=30 BENCH_S3_MBPS=100 npm run bench:copy
 * Each multipart threshold is measured in the same run: the production default, and 16 MiB, which copies
 * the objects above it in parts with UploadPartCopy.
 *   BENCH_S3_MODEL=off npm run bench:copy      (no latency model)
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { s3Api } from '../adapters/s3/s3-api.js';
import { DEFAULT_MULTIPART_THRESHOLD_BYTES, S3SnapshotStore } from '../adapters/s3/snapshot-store.js';
import { copyBatch, makeSnapshot, mapWithConcurrency, type CopyBatchItem } from '../core/snapshots/index.js';
import { aim, startBenchRun, type BenchAim, type Cell } from './bench-results.js';
import { emulatorCredentials, emulatorEnv } from '../local/aws-env.js';
import { behindS3Model, benchEmulator, describeS3Model, s3ModelFromEnv } from './bench-support.js';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const MULTIPART_MBS = (process.env.BENCH_MULTIPART_MB ?? `${DEFAULT_MULTIPART_THRESHOLD_BYTES / 2 ** 20},16`)
  .split(',')
  .map(Number);
const OVERLAP_CALLS = 20;
const KB = 1024;
const MB = 1024 * KB;

/**
 * Sizes from 1 KB to 50 MB, as a seed bucket holds them: mostly small deltas, some larger deltas, a
 * few full snapshots. Deterministic, so runs compare.
 */
function sizes(n: number): number[] {
  return Array.from({ length: n }, (_, i) => {
    if (i === 0) return 50 * MB;
    if (i === 1) return KB;
    const r = i % 20;
    if (r === 0) return 20 * MB + (i % 7) * MB; // full snapshots, above the multipart threshold
    if (r < 5) return 1 * MB + ((i * 37) % 4_000) * KB; // larger deltas, 1-5 MB
    return KB + ((i * 7919) % 200) * KB; // small deltas, 1-200 KB
  });
}

const record = startBenchRun({
  bench: 'copy',
  title: 'Snapshot copy',
  command: 'npm run bench:copy',
  about:
    "Snapshots of mixed sizes (1 KB to 50 MB) copied bucket to bucket through the copy task's own path (head " +
    'both sides, server-side copy, UploadPartCopy above the multipart threshold, head again to verify), one at a ' +
    'time and many at once in the same run, under the S3 latency model (a loopback proxy adding a round trip ' +
    'and a bandwidth per connection, as S3 has; the emulator answers in milliseconds and one request at a time).',
});
const model = s3ModelFromEnv();
const emu = await benchEmulator('copy');
const modelled = await behindS3Model(emu.endpoint, model);
try {
  const client = (endpoint: string) =>
    new S3Client({
      endpoint,
      region: emulatorEnv(emu.endpoint).AWS_REGION,
      credentials: emulatorCredentials(),
      forcePathStyle: true,
    });
  const s3 = client(emu.endpoint);
  const s3Modelled = client(modelled.endpoint);
  let requests = 0;
  s3Modelled.middlewareStack.add(
    (next) => (args) => {
      requests += 1;
      return next(args);
    },
    { step: 'finalizeRequest', name: 'countRequests' },
  );
  const run = Date.now().toString(36);
  const bucket = async (label: string, through: S3Client = s3, multipartMb = MULTIPART_MBS[0]!) => {
    const name = `gl-backup-bench-${label}-${run}`;
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    return new S3SnapshotStore({ bucket: name, api: s3Api(through), multipartThresholdBytes: multipartMb * MB });
  };
  const source = await bucket('src');
  const sourceModelled = (multipartMb: number) =>
    new S3SnapshotStore({ bucket: source.bucket, api: s3Api(s3Modelled), multipartThresholdBytes: multipartMb * MB });
  const technicalID = `shoot--bench--${run}`;
  const t0 = Math.floor(Date.now() / 1_000) - OBJECTS;
  const objects = sizes(OBJECTS).map((size, i) => ({
    key: makeSnapshot({
      technicalID,
      kind: i % 20 === 0 ? 'Full' : 'Incr',
      startRevision: i * 100 + 1,
      lastRevision: i * 100 + 100,
      createdOn: t0 + i,
      compressionSuffix: '.gz',
      final: false,
    }).key,
    size,
  }));
  const totalBytes = objects.reduce((sum, o) => sum + o.size, 0);
  console.log(`preparing ${objects.length} objects, ${(totalBytes / MB).toFixed(1)} MB, in ${source.bucket}`);
  await mapWithConcurrency(objects, 8, async (o, i) => {
    const body = new Uint8Array(o.size);
    for (let j = 0; j < body.length; j += 4_096) body[j] = (i + j) & 0xff;
    await source.put(o.key, body);
  });

  const measure = async (label: string, concurrency: number, multipartMb: number) => {
    const destination = await bucket(label, s3Modelled, multipartMb);
    const from = sourceModelled(multipartMb);
    const items: CopyBatchItem[] = objects.map((o) => ({ key: o.key, size: o.size }));
    const before = requests;
    const started = performance.now();
    const result = await copyBatch({
      source: from,
      destination,
      copier: destination.copierFrom(from),
      items,
      concurrency,
    });
    const ms = performance.now() - started;
    if (result.copied !== objects.length || result.bytesCopied !== totalBytes)
      throw new Error(`${label}: copied ${result.copied} objects, ${result.bytesCopied} bytes`);
    return { ms, requests: requests - before };
  };
  /** The same calls one at a time and all at once, straight to the emulator: how much it overlaps requests itself. */
  const overlap = async (call: () => Promise<unknown>) => {
    let started = performance.now();
    for (let i = 0; i < OVERLAP_CALLS; i++) await call();
    const sequentialMs = performance.now() - started;
    started = performance.now();
    await Promise.all(Array.from({ length: OVERLAP_CALLS }, call));
    const parallelMs = performance.now() - started;
    return { sequentialMs, parallelMs };
  };
  const probe = objects.find((o) => o.size >= MB)!;
  const probeHead = (await source.head(probe.key))!;
  const scratch = await bucket('overlap');
  const headOverlap = await overlap(() => source.head(probe.key));
  const copyOverlap = await overlap(() => scratch.copierFrom(source).copy({ key: probe.key, source: probeHead }));

  const mbps = (ms: number) => totalBytes / MB / (ms / 1_000);
  console.log(
    `objects ${objects.length}, ${(totalBytes / MB).toFixed(1)} MB (1 KB to 50 MB), emulator ${emu.endpoint}`,
  );
  console.log(describeS3Model(model) + (model ? ` (loopback proxy ${modelled.endpoint})` : ''));
  const rows: Cell[][] = [];
  const aims: BenchAim[] = [];
  for (const multipartMb of MULTIPART_MBS) {
    const sequential = await measure(`seq-${multipartMb}`, 1, multipartMb);
    const parallel = await measure(`par-${multipartMb}`, CONCURRENCY, multipartMb);
    const ratio = sequential.ms / parallel.ms;
    console.log(
      `multipart above ${multipartMb} MB: sequential ${(sequential.ms / 1_000).toFixed(2)} s ${mbps(sequential.ms).toFixed(0)} MB/s ` +
        `${sequential.requests} requests; parallel (${CONCURRENCY}) ${(parallel.ms / 1_000).toFixed(2)} s ` +
        `${mbps(parallel.ms).toFixed(0)} MB/s; ratio ${ratio.toFixed(1)}x (aim >= 5x: ${ratio >= 5 ? 'met' : 'NOT met'})`,
    );
    rows.push([
      `${multipartMb} MB`,
      sequential.ms / 1_000,
      mbps(sequential.ms),
      sequential.requests,
      model ? (sequential.requests * model.latencyMs) / 1_000 : null,
      parallel.ms / 1_000,
      mbps(parallel.ms),
      ratio,
    ]);
    aims.push(
      aim(`sequential over parallel, multipart above ${multipartMb} MB`, Math.round(ratio * 10) / 10, '>=', 5, 'x'),
    );
  }
  const copyKind = probe.size > MULTIPART_MBS[0]! * MB ? 'UploadPartCopy parts' : 'one CopyObject';
  const overlapRow = (what: string, o: { sequentialMs: number; parallelMs: number }): Cell[] => [
    what,
    o.sequentialMs,
    o.parallelMs,
    o.sequentialMs / o.parallelMs,
  ];
  record.save({
    settings: {
      objects: objects.length,
      megabytes: Math.round(totalBytes / MB),
      concurrency: CONCURRENCY,
      s3Model: describeS3Model(model),
    },
    tables: [
      {
        title: `Copy of ${objects.length} objects, ${(totalBytes / MB).toFixed(1)} MB`,
        columns: [
          'multipart threshold',
          'sequential (s)',
          'sequential (MB/s)',
          'requests',
          'round trips alone (s)',
          `parallel, ${CONCURRENCY} at once (s)`,
          'parallel (MB/s)',
          'ratio',
        ],
        rows,
        decimals: [undefined, 2, 0, 0, 2, 2, 0, 1],
      },
      {
        title: `The emulator's own overlap: ${OVERLAP_CALLS} calls straight to it (ms)`,
        columns: ['call', 'one at a time', 'all at once', 'ratio'],
        rows: [
          overlapRow('HeadObject', headOverlap),
          overlapRow(`copy of ${(probe.size / MB).toFixed(1)} MB (${copyKind})`, copyOverlap),
        ],
        decimals: [undefined, 0, 0, 1],
      },
    ],
    aims,
  });
} finally {
  await modelled.stop();
  await emu.stop();
}
