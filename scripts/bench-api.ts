/**
 * API benchmark against the emulator: median latency of create and read through API Gateway and the
 * API Lambda, throughput of 1,000 shoot creations, and, as the baseline measured in the same run, the
 * latency of the same DynamoDB write made directly (so the ratio shows what the API layer costs).
 *
 *   npm run bench:api            (uses the running local landscape, else starts its own)
 *   BENCH_SHOOTS=1000 BENCH_CONCURRENCY=16 npm run bench:api
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { GardenClient } from '../adapters/http/garden-client.js';
import { fixture } from '../harness/fixtures/index.js';
import { aim, startBenchRun } from './bench-results.js';
import { benchLandscape, median, percentile } from './bench-support.js';
import { emulatorCredentials } from '../local/aws-env.js';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 100);
const SHOOTS = Number(process.env.BENCH_SHOOTS ?? 1_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

async function timed(fn: () => Promise<{ status: number }>, expected: number): Promise<number> {
  const t0 = performance.now();
  const res = await fn();
  const ms = performance.now() - t0;
  if (res.status !== expected) throw new Error(`expected ${expected}, got ${res.status}`);
  return ms;
}

const record = startBenchRun({
  bench: 'api',
  title: 'Garden API',
  command: 'npm run bench:api',
  about:
    'API Gateway HTTP API -> API Lambda -> DynamoDB on the emulator: sequential samples of create and read after ' +
    'warm-up, against the same conditional write made directly to DynamoDB; then shoot creations in parallel, all ' +
    'onto one seed (each updates that seed item in a transaction: the capacity invariant).',
});
const { deployment, close } = await benchLandscape();
try {
  const api = new GardenClient({
    apiUrl: deployment.apiUrl,
    region: deployment.region,
    credentials: emulatorCredentials(),
  });
  const ddb = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      endpoint: deployment.awsEndpoint,
      region: deployment.region,
      credentials: emulatorCredentials(),
    }),
  );
  const run = Date.now().toString(36);
  const project = `bench-${run}`;
  const seed = fixture('seed-aws-eu1');
  seed.metadata.name = `bench-${run}`;
  delete seed.spec.capacity;
  await timed(() => api.request('PUT', `/seeds/${seed.metadata.name}`, { body: seed }), 201);
  const shoot = (name: string) => {
    const s = fixture('shoot-dev-api1');
    s.metadata = { name };
    s.spec.seedName = seed.metadata.name;
    return s;
  };

  // Warm the Lambda so that cold starts do not count as latency.
  for (let i = 0; i < 5; i++) await api.request('GET', '/healthz');

  const create: number[] = [];
  for (let i = 0; i < SAMPLES; i++)
    create.push(
      await timed(() => api.request('PUT', `/projects/${project}/shoots/lat-${i}`, { body: shoot(`lat-${i}`) }), 201),
    );
  const read: number[] = [];
  for (let i = 0; i < SAMPLES; i++)
    read.push(await timed(() => api.request('GET', `/projects/${project}/shoots/lat-${i}`), 200));
  const direct: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t0 = performance.now();
    await ddb.send(
      new PutCommand({
        TableName: deployment.outputs.TableName,
        Item: { pk: `BENCH#${run}#${i}`, sk: 'BENCH', doc: shoot(`b-${i}`) },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    direct.push(performance.now() - t0);
  }

  const limit = pLimit(CONCURRENCY);
  const t0 = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: SHOOTS }, (_, i) =>
      limit(
        async () =>
          (await api.request('PUT', `/projects/${project}-t/shoots/s-${i}`, { body: shoot(`s-${i}`) })).status,
      ),
    ),
  );
  const seconds = (performance.now() - t0) / 1000;
  const failed = statuses.filter((s) => s !== 201).length;

  const fmt = (n: number) => n.toFixed(1);
  console.log(`bench:api  emulator ${deployment.awsEndpoint}  samples ${SAMPLES}`);
  console.log(
    `  create (PUT shoot, placed on a seed)  median ${fmt(median(create))} ms  p90 ${fmt(percentile(create, 90))} ms`,
  );
  console.log(
    `  read   (GET shoot)                    median ${fmt(median(read))} ms  p90 ${fmt(percentile(read, 90))} ms`,
  );
  console.log(
    `  baseline: direct DynamoDB PutItem     median ${fmt(median(direct))} ms  -> API create / baseline = ${(median(create) / median(direct)).toFixed(1)}x`,
  );
  console.log(
    `  throughput: ${SHOOTS} shoot creations, concurrency ${CONCURRENCY}: ${fmt(seconds)} s = ${fmt(SHOOTS / seconds)} creations/s (${failed} failed)`,
  );
  record.save({
    settings: { samples: SAMPLES, shoots: SHOOTS, concurrency: CONCURRENCY },
    tables: [
      {
        title: 'Latency (ms)',
        columns: ['measure', 'median', 'p90'],
        rows: [
          ['create (PUT shoot, placed on its seed in one transaction)', median(create), percentile(create, 90)],
          ['read (GET shoot)', median(read), percentile(read, 90)],
          ['baseline: direct DynamoDB PutItem', median(direct), percentile(direct, 90)],
        ],
      },
      {
        title: 'Throughput',
        columns: ['creations', 'concurrency', 'seconds', 'creations/s', 'failed', 'API create / baseline'],
        rows: [[SHOOTS, CONCURRENCY, seconds, SHOOTS / seconds, failed, median(create) / median(direct)]],
        decimals: [0, 0, 1, 1, 0, 1],
      },
    ],
    aims: [aim('failed creations', failed, '<=', 0, '')],
  });
  if (failed > 0) process.exitCode = 1;
} finally {
  await close();
}
