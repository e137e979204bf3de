/**
 * Dependency-watchdog benchmark on the emulator: 1,000 shoots on two seeds, each with an external
 * kube-apiserver endpoint served on loopback, and one watchdog round through the deployed Lambda.
 * Prints the wall time of a round, Lambda invocations per round (the `AWS/Lambda` `Invocations` metric of
 * every function, read before and after the round, as on AWS) and probes per second.
 *
 *   npm run bench:dwd          (BENCH_SHOOTS=1000 BENCH_ROUNDS=5)
 */
import { CloudWatchClient, GetMetricStatisticsCommand, ListMetricsCommand } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pLimit from 'p-limit';
import { DynamoGardenRepository } from '../adapters/dynamodb/garden-repository.js';
import { GardenClient } from '../adapters/http/garden-client.js';
import { technicalID } from '../core/model/names.js';
import { fixture } from '../harness/fixtures/index.js';
import { aim, startBenchRun } from './bench-results.js';
import { benchLandscape, median } from './bench-support.js';
import { emulatorCredentials } from '../local/aws-env.js';

const SHOOTS = Number(process.env.BENCH_SHOOTS ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SEEDS = 2;
const record = startBenchRun({
  bench: 'dwd',
  title: 'Dependency watchdog',
  command: 'npm run bench:dwd',
  about:
    "Shoots on two seeds, every kube-apiserver's external endpoint served on loopback, the internal results in " +
    "the seeds' heartbeats; one round is one invocation of the deployed watchdog Lambda (list the fleet, probe " +
    'every shoot, decide, conditional state writes, commands).',
});

let probes = 0;
const server = createServer((_req, res) => {
  probes += 1;
  res.writeHead(200).end('ok');
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const lb = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const { deployment, close } = await benchLandscape();
try {
  const aws = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() };
  const api = new GardenClient({
    apiUrl: deployment.apiUrl,
    region: deployment.region,
    credentials: emulatorCredentials(),
  });
  const repo = new DynamoGardenRepository({ tableName: deployment.outputs.TableName, client: new DynamoDBClient(aws) });
  const lambda = new LambdaClient(aws);
  const cloudWatch = new CloudWatchClient(aws);
  /** Invocations so far per function, from the metric every Lambda function emits. */
  const invocationCounts = async (): Promise<Map<string, number>> => {
    const listed = await cloudWatch.send(
      new ListMetricsCommand({ Namespace: 'AWS/Lambda', MetricName: 'Invocations' }),
    );
    const counts = new Map<string, number>();
    for (const metric of listed.Metrics ?? []) {
      const fn = metric.Dimensions?.find((d) => d.Name === 'FunctionName')?.Value;
      if (!fn) continue;
      const stats = await cloudWatch.send(
        new GetMetricStatisticsCommand({
          Namespace: 'AWS/Lambda',
          MetricName: 'Invocations',
          Dimensions: [{ Name: 'FunctionName', Value: fn }],
          StartTime: new Date(Date.now() - 86_400_000),
          EndTime: new Date(Date.now() + 3_600_000),
          Period: 172_800,
          Statistics: ['Sum'],
        }),
      );
      counts.set(
        fn,
        (stats.Datapoints ?? []).reduce((sum, d) => sum + (d.Sum ?? 0), 0),
      );
    }
    return counts;
  };
  const run = Date.now().toString(36);
  const project = `dwd-${run}`;
  const perSeed = Math.ceil(SHOOTS / SEEDS);

  for (let s = 0; s < SEEDS; s++) {
    const seedName = `dwd-${run}-${s}`;
    const seed = fixture('seed-aws-eu1');
    seed.metadata = { name: seedName };
    delete seed.spec.capacity;
    const res = await api.request('PUT', `/seeds/${seedName}`, { body: seed });
    if (res.status !== 201) throw new Error(`seed ${seedName}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  // Shoots are written through the repository (the API path is measured by bench:api).
  const limit = pLimit(16);
  await Promise.all(
    Array.from({ length: SHOOTS }, (_, i) =>
      limit(async () => {
        const seedName = `dwd-${run}-${i % SEEDS}`;
        const name = `s${i}`;
        const now = new Date().toISOString();
        await repo.createShoot({
          apiVersion: 'core.gardenless.io/v1',
          kind: 'Shoot',
          metadata: { project, name, resourceVersion: '0', uid: `${run}-${i}`, creationTimestamp: now },
          spec: { provider: { type: 'aws' }, region: 'eu-west-1', seedName },
          status: { technicalID: technicalID(project, name), seedName, conditions: [], constraints: [] },
        });
      }),
    ),
  );
  const heartbeat = async () => {
    for (let s = 0; s < SEEDS; s++) {
      const controlPlanes = Array.from({ length: perSeed }, (_, k) => k * SEEDS + s)
        .filter((i) => i < SHOOTS)
        .map((i) => ({
          technicalID: technicalID(project, `s${i}`),
          active: true,
          externalUrl: `${lb}/s${i}`,
          internalProbe: 'Success',
          internalProbeTime: new Date().toISOString(),
          etcdReady: true,
        }));
      const res = await api.request('POST', `/seeds/dwd-${run}-${s}/heartbeat`, {
        body: { conditions: [{ type: 'GardenletReady', status: 'True' }], controlPlanes, leaseDurationSeconds: 3_600 },
      });
      if (res.status !== 200) throw new Error(`heartbeat: ${res.status} ${JSON.stringify(res.body)}`);
    }
  };

  const walls: number[] = [];
  const invocations: number[] = [];
  const watchdogInvocations: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    await heartbeat();
    const before = probes;
    const countsBefore = await invocationCounts();
    const t0 = performance.now();
    const res = await lambda.send(
      new InvokeCommand({
        FunctionName: deployment.outputs.WatchdogFunctionName,
        Payload: Buffer.from(JSON.stringify({ rounds: 1 })),
      }),
    );
    walls.push(performance.now() - t0);
    if (res.FunctionError) throw new Error(Buffer.from(res.Payload ?? new Uint8Array()).toString());
    const countsAfter = await invocationCounts();
    const during = [...countsAfter]
      .map(([fn, n]) => ({ fn, n: n - (countsBefore.get(fn) ?? 0) }))
      .filter((c) => c.n > 0);
    invocations.push(during.reduce((sum, c) => sum + c.n, 0));
    watchdogInvocations.push(during.find((c) => c.fn === deployment.outputs.WatchdogFunctionName)?.n ?? 0);
    if (probes - before < SHOOTS) console.warn(`round ${r}: only ${probes - before} probes arrived`);
  }
  const wall = median(walls);
  console.log(`bench:dwd  ${SHOOTS} shoots on ${SEEDS} seeds, ${ROUNDS} rounds, emulator ${deployment.awsEndpoint}`);
  console.log(
    `  one round (invoke to return, incl. listing the fleet and conditional state writes): median ${(wall / 1000).toFixed(2)} s, min ${(Math.min(...walls) / 1000).toFixed(2)} s`,
  );
  console.log(
    `  Lambda invocations per round (AWS/Lambda Invocations, every function, before and after each round): median ${median(invocations)}, max ${Math.max(...invocations)}; of the watchdog function: median ${median(watchdogInvocations)}`,
  );
  console.log(
    `  probes per second: ${(SHOOTS / (wall / 1000)).toFixed(0)}  (the first round writes ${SHOOTS} initial states, later rounds none)`,
  );
  record.save({
    settings: { shoots: SHOOTS, seeds: SEEDS, rounds: ROUNDS },
    tables: [
      {
        title: 'One round',
        columns: [
          'wall time, median (s)',
          'wall time, min (s)',
          'Lambda invocations, median',
          'Lambda invocations, max',
          'probes/s',
        ],
        rows: [
          [
            wall / 1000,
            Math.min(...walls) / 1000,
            median(invocations),
            Math.max(...invocations),
            SHOOTS / (wall / 1000),
          ],
        ],
        decimals: [2, 2, 0, 0, 0],
      },
    ],
    aims: [aim('round wall time, median (within the 10 s probe interval)', Math.round(wall) / 1000, '<=', 10, 's')],
  });
} finally {
  server.close();
  await close();
}
