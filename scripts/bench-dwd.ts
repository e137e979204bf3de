/**
 * Dependency-watchdog benchmark on the emulator: 1,000 shoots on two seeds, each with an external
 * kube-apiserver endpoint served on loopback, and one watchdog round through the deployed Lambda.
 * Prints the wall time of a round, Lambda invocations per round and probes per second.
 *
 *   npm run bench:dwd          (BENCH_SHOOTS=1000 BENCH_ROUNDS=5)
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pLimit from 'p-limit';
import { DynamoGardenRepository } from '../adapters/dynamodb/garden-repository.js';
import { GardenClient } from '../adapters/http/garden-client.js';
import { technicalID } from '../core/model/names.js';
import { fixture } from '../test/fixtures/index.js';
import { benchLandscape, median } from './bench-support.js';

const SHOOTS = Number(process.env.BENCH_SHOOTS ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SEEDS = 2;
const credentials = async () => ({ accessKeyId: 'test', secretAccessKey: 'test' });

let probes = 0;
const server = createServer((_req, res) => {
  probes += 1;
  res.writeHead(200).end('ok');
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const lb = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const { deployment, close } = await benchLandscape();
try {
  const aws = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials };
  const api = new GardenClient({ apiUrl: deployment.apiUrl, region: deployment.region, credentials });
  const repo = new DynamoGardenRepository({ tableName: deployment.outputs.TableName, client: new DynamoDBClient(aws) });
  const lambda = new LambdaClient(aws);
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
          apiVersion: 'core.gardenless.io/v1', kind: 'Shoot',
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
          technicalID: technicalID(project, `s${i}`), active: true, externalUrl: `${lb}/s${i}`, internalProbe: 'Success',
          internalProbeTime: new Date().toISOString(), etcdReady: true,
        }));
      const res = await api.request('POST', `/seeds/dwd-${run}-${s}/heartbeat`, { body: { conditions: [{ type: 'GardenletReady', status: 'True' }], controlPlanes, leaseDurationSeconds: 3_600 } });
      if (res.status !== 200) throw new Error(`heartbeat: ${res.status} ${JSON.stringify(res.body)}`);
    }
  };

  const walls: number[] = [];
  const invocations: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    await heartbeat();
    const before = probes;
    const t0 = performance.now();
    const res = await lambda.send(new InvokeCommand({ FunctionName: deployment.outputs.WatchdogFunctionName, Payload: Buffer.from(JSON.stringify({ rounds: 1 })) }));
    walls.push(performance.now() - t0);
    if (res.FunctionError) throw new Error(Buffer.from(res.Payload ?? new Uint8Array()).toString());
    invocations.push(1);
    if (probes - before < SHOOTS) console.warn(`round ${r}: only ${probes - before} probes arrived`);
  }
  const wall = median(walls);
  console.log(`bench:dwd  ${SHOOTS} shoots on ${SEEDS} seeds, ${ROUNDS} rounds, emulator ${deployment.awsEndpoint}`);
  console.log(`  one round (invoke to return, incl. listing the fleet and conditional state writes): median ${(wall / 1000).toFixed(2)} s, min ${(Math.min(...walls) / 1000).toFixed(2)} s`);
  console.log(`  Lambda invocations per round: ${median(invocations)} (fan-out inside one invocation, 50 probes at a time)`);
  console.log(`  probes per second: ${(SHOOTS / (wall / 1000)).toFixed(0)}  (first round writes 1,000 initial states; later rounds write none)`);
} finally {
  server.close();
  await close();
}
