/**
 * Migration benchmark on the emulator: seed agents that answer every command at once, a stand-in
 * sidecar that writes the final snapshot as soon as the owner record is deleted; N migrations one
 * after another. Prints the median orchestration time (POST .../migrate to Succeeded), and per
 * migration the state transitions and task invocations of the migrate-shoot execution.
 *
 *   npm run bench:migration        (BENCH_MIGRATIONS=10)
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { GetExecutionHistoryCommand, ListExecutionsCommand, SFNClient, type HistoryEvent } from '@aws-sdk/client-sfn';
import { GardenClient } from '../adapters/http/garden-client.js';
import type { MigrationRecord } from '../core/migration/record.js';
import { technicalID } from '../core/model/names.js';
import type { Deployment } from '../local/deploy.js';
import { backedSeed, fixture } from '../harness/fixtures/index.js';
import { FakeSidecar } from '../harness/fake-sidecar.js';
import { TestAgent } from '../harness/test-agent.js';
import { startBenchRun } from './bench-results.js';
import { benchLandscape, median } from './bench-support.js';
import { emulatorCredentials } from '../local/aws-env.js';

const MIGRATIONS = Number(process.env.BENCH_MIGRATIONS ?? 10);
const record = startBenchRun({
  bench: 'migration',
  title: 'Migration orchestration',
  command: 'npm run bench:migration',
  about:
    'Good-path migrations one after another on the emulator: real seed agents on in-memory hosting answering every ' +
    'command at once, a stand-in sidecar writing the final snapshot as soon as the owner record goes; the ' +
    'orchestration time (POST migrate to Succeeded) and the work per migrate-shoot execution.',
});

const { deployment, close } = await benchLandscape();
const stoppers: { stop(): Promise<void> }[] = [];
try {
  const aws = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() };
  const api = new GardenClient({
    apiUrl: deployment.apiUrl,
    region: deployment.region,
    credentials: emulatorCredentials(),
  });
  const s3 = new S3Client({ ...aws, forcePathStyle: true });
  const sfn = new SFNClient(aws);
  const run = Date.now().toString(36);
  const seeds = [`bench-a-${run}`, `bench-b-${run}`];
  for (const [i, name] of seeds.entries()) {
    await s3.send(new CreateBucketCommand({ Bucket: `gl-backup-${name}` }));
    const seed = backedSeed(name, i);
    const res = await api.request('PUT', `/seeds/${name}`, { body: seed });
    if (res.status !== 201) throw new Error(`seed ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    const agent = TestAgent.onDeployment(deployment as Deployment, { seed: name });
    await agent.start();
    stoppers.push(agent);
  }
  const identity = (await api.request<{ status: { identity: string } }>('GET', `/seeds/${seeds[0]}`)).body.status
    .identity;

  const times: number[] = [];
  const transitions: number[] = [];
  const tasks: number[] = [];
  for (let i = 0; i < MIGRATIONS; i++) {
    const project = `bench${run}`;
    const name = `s${i}`;
    const shoot = fixture('shoot-dev-api1');
    shoot.metadata = { name };
    shoot.spec.seedName = seeds[0];
    delete shoot.spec.tolerations;
    await api.request('PUT', `/projects/${project}/shoots/${name}`, { body: shoot });
    const sidecar = FakeSidecar.onDeployment(deployment as Deployment, {
      shoot: { project, name, technicalID: technicalID(project, name) },
      identity,
      bucket: `gl-backup-${seeds[0]}`,
      claim: true,
      intervalMs: 100,
    });
    await sidecar.start();
    stoppers.push(sidecar);

    const t0 = performance.now();
    const started = await api.request<{ migrationId: string }>('POST', `/projects/${project}/shoots/${name}/migrate`, {
      body: { destinationSeed: seeds[1], mode: 'good' },
    });
    if (started.status !== 202) throw new Error(`migrate: ${started.status} ${JSON.stringify(started.body)}`);
    let record: MigrationRecord;
    for (;;) {
      record = (await api.request<MigrationRecord>('GET', `/projects/${project}/shoots/${name}/migration`)).body;
      if (record.state !== 'Running') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    times.push(performance.now() - t0);
    if (record.state !== 'Succeeded') throw new Error(`migration ${i}: ${JSON.stringify(record.error)}`);
    await sidecar.stop();

    const executions = await sfn.send(
      new ListExecutionsCommand({ stateMachineArn: deployment.outputs.MigrateShootStateMachineArn }),
    );
    const execution = executions.executions?.find((e) => e.name?.startsWith(started.body.migrationId));
    const events: HistoryEvent[] = [];
    let token: string | undefined;
    do {
      const page = await sfn.send(
        new GetExecutionHistoryCommand({ executionArn: execution?.executionArn, nextToken: token, maxResults: 1000 }),
      );
      events.push(...(page.events ?? []));
      token = page.nextToken;
    } while (token);
    transitions.push(events.filter((e) => e.type?.endsWith('StateEntered')).length);
    tasks.push(events.filter((e) => e.type === 'TaskScheduled' || e.type === 'LambdaFunctionScheduled').length);
  }
  console.log(
    `bench:migration  ${MIGRATIONS} good-path migrations one after another, agents answering at once, emulator ${deployment.awsEndpoint}`,
  );
  console.log(
    `  orchestration time (POST migrate -> Succeeded): median ${(median(times) / 1000).toFixed(2)} s, min ${(Math.min(...times) / 1000).toFixed(2)} s, max ${(Math.max(...times) / 1000).toFixed(2)} s`,
  );
  console.log(
    `  state transitions per migration: ${median(transitions)} (migrate-shoot; the copy-snapshots child adds its own)`,
  );
  console.log(
    `  task invocations per migration: ${median(tasks)} (Lambda tasks, incl. 4 that send agent commands, and the copy child execution)`,
  );
  record.save({
    settings: { migrations: MIGRATIONS },
    tables: [
      {
        title: 'Per migration',
        columns: ['measure', 'median', 'min', 'max'],
        rows: [
          [
            'orchestration time, POST migrate to Succeeded (s)',
            median(times) / 1000,
            Math.min(...times) / 1000,
            Math.max(...times) / 1000,
          ],
          [
            'state transitions (migrate-shoot)',
            median(transitions),
            Math.min(...transitions),
            Math.max(...transitions),
          ],
          ['task invocations (Lambda tasks and the copy child)', median(tasks), Math.min(...tasks), Math.max(...tasks)],
        ],
        decimals: [undefined, 2, 2, 2],
      },
    ],
    aims: [],
  });
} finally {
  await Promise.all(stoppers.map((s) => s.stop()));
  await close();
}
