/**
 * Snapshot copy benchmark: 200 objects of mixed sizes (1 KB to 50 MB) copied server-side between two
 * backup buckets through the copy task's own code path (`copyBatch` over `S3SnapshotStore`: CopyObject,
 * UploadPartCopy above the multipart threshold, HeadObject verification), once with objects in parallel
 * and once one at a time, in the same run, into fresh destination buckets.
 *
 *   npm run bench:copy                      (uses the running local landscape, else starts its own)
 *   BENCH_OBJECTS=200 BENCH_CONCURRENCY=32 BENCH_MULTIPART_MB=16 npm run bench:copy
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { s3Api } from '../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../adapters/s3/snapshot-store.js';
import { copyBatch, makeSnapshot, mapWithConcurrency, type CopyBatchItem } from '../core/snapshots/index.js';
import { benchLandscape } from './bench-support.js';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const MULTIPART_MB = Number(process.env.BENCH_MULTIPART_MB ?? 16);
const KB = 1024;
const MB = 1024 * KB;
const credentials = async () => ({ accessKeyId: 'test', secretAccessKey: 'test' });

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

const { deployment, close } = await benchLandscape();
try {
  const s3 = new S3Client({ endpoint: deployment.awsEndpoint, region: deployment.region, credentials, forcePathStyle: true });
  const api = s3Api(s3);
  const run = Date.now().toString(36);
  const bucket = async (label: string) => {
    const name = `gl-backup-bench-${label}-${run}`;
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    return new S3SnapshotStore({ bucket: name, api, multipartThresholdBytes: MULTIPART_MB * MB });
  };
  const source = await bucket('src');
  const technicalID = `shoot--bench--${run}`;
  const t0 = Math.floor(Date.now() / 1_000) - OBJECTS;
  const objects = sizes(OBJECTS).map((size, i) => ({
    key: makeSnapshot({ technicalID, kind: i % 20 === 0 ? 'Full' : 'Incr', startRevision: i * 100 + 1, lastRevision: i * 100 + 100, createdOn: t0 + i, compressionSuffix: '.gz', final: false }).key,
    size,
  }));
  const totalBytes = objects.reduce((sum, o) => sum + o.size, 0);
  console.log(`preparing ${objects.length} objects, ${(totalBytes / MB).toFixed(1)} MB, in ${source.bucket}`);
  await mapWithConcurrency(objects, 8, async (o, i) => {
    const body = new Uint8Array(o.size);
    for (let j = 0; j < body.length; j += 4_096) body[j] = (i + j) & 0xff;
    await source.put(o.key, body);
  });

  const measure = async (label: string, concurrency: number) => {
    const destination = await bucket(label);
    const items: CopyBatchItem[] = objects.map((o) => ({ key: o.key, size: o.size }));
    const started = performance.now();
    const result = await copyBatch({ source, destination, copier: destination.copierFrom(source), items, concurrency });
    const ms = performance.now() - started;
    if (result.copied !== objects.length || result.bytesCopied !== totalBytes) throw new Error(`${label}: copied ${result.copied} objects, ${result.bytesCopied} bytes`);
    return ms;
  };
  // How much the emulator itself overlaps requests: the ceiling for any client-side parallelism.
  const probeKey = objects[1]!.key;
  let started = performance.now();
  for (let i = 0; i < 32; i++) await source.head(probeKey);
  const headSequential = performance.now() - started;
  started = performance.now();
  await Promise.all(Array.from({ length: 32 }, () => source.head(probeKey)));
  const headParallel = performance.now() - started;

  const sequential = await measure('seq', 1);
  const parallel = await measure('par', CONCURRENCY);
  const mbps = (ms: number) => totalBytes / MB / (ms / 1_000);
  console.log(`objects ${objects.length}, ${(totalBytes / MB).toFixed(1)} MB (1 KB to 50 MB), multipart above ${MULTIPART_MB} MB, emulator ${deployment.awsEndpoint}`);
  console.log(`sequential (1 at a time):  ${(sequential / 1_000).toFixed(2)} s  ${mbps(sequential).toFixed(0)} MB/s`);
  console.log(`parallel (${CONCURRENCY} at a time):    ${(parallel / 1_000).toFixed(2)} s  ${mbps(parallel).toFixed(0)} MB/s`);
  console.log(`ratio sequential/parallel: ${(sequential / parallel).toFixed(1)}x`);
  console.log(`emulator overlap: 32 HeadObject one at a time ${headSequential.toFixed(0)} ms, all at once ${headParallel.toFixed(0)} ms (${(headSequential / headParallel).toFixed(1)}x)`);
} finally {
  await close();
}
