import { describe, expect, it } from 'vitest';
import { DynamoEvacuationStore } from '../../../adapters/dynamodb/evacuations.js';
import { DynamoGardenRepository } from '../../../adapters/dynamodb/garden-repository.js';
import { TABLE_INDEXES } from '../../../adapters/dynamodb/keys.js';
import { DynamoMigrationStore } from '../../../adapters/dynamodb/migration-store.js';
import { DynamoShootStateStore } from '../../../adapters/dynamodb/shoot-state-store.js';
import { EvacuationControls } from '../../../core/evacuation/controls.js';
import { ShootKubeconfigs } from '../../../core/garden/kubeconfigs.js';
import { GardenService } from '../../../core/garden/service.js';
import { MigrationJournal } from '../../../core/migration/journal.js';
import { MigrationAdmission } from '../../../core/migration/migration-admission.js';
import { generateShootSecrets } from '../../../core/pki/shoot-secrets.js';
import { LocalDataKeys, ShootSecretsKeeper } from '../../../core/shootstate/index.js';
import { handleRequest } from '../../../functions/api/app.js';
import { routes } from '../../../functions/api/routes.js';
import { DynamoDbFake, type RecordedCall } from '../../harness/dynamodb-fake.js';
import { seedBody, shootBody } from '../garden/builders.js';
import { ACCESS, CALLERS, httpEvent, type RequestOptions } from '../api/events.js';

/**
 * Every request path of the API reads DynamoDB by key or by index partition: a Scan reads the whole table,
 * whose cost and latency grow with the fleet (the API must stay flat at 10,000 shoots). The API's own
 * pipeline (routes, service, the DynamoDB adapters) runs on a table that records every call.
 */
const REQUESTS: Record<string, [method: string, path: string, options?: RequestOptions]> = {
  health: ['GET', '/healthz'],
  openapi: ['GET', '/openapi.json'],
  listSeeds: ['GET', '/seeds', { query: { limit: '2' } }],
  putSeed: ['PUT', '/seeds/aws-eu3', { body: seedBody() }],
  getSeed: ['GET', '/seeds/aws-eu1'],
  deleteSeed: ['DELETE', '/seeds/aws-eu2'],
  seedHeartbeat: [
    'POST',
    '/seeds/aws-eu1/heartbeat',
    {
      body: {
        conditions: [{ type: 'GardenletReady', status: 'True' }],
        controlPlanes: [{ technicalID: 'shoot--dev--api1', shoot: { project: 'dev', name: 'api1' }, active: true }],
      },
      caller: CALLERS.agent('aws-eu1'),
    },
  ],
  listShoots: ['GET', '/projects/dev/shoots', { query: { limit: '1' } }],
  listAllShoots: ['GET', '/shoots', { query: { limit: '1' } }],
  putShoot: ['PUT', '/projects/dev/shoots/api3', { body: shootBody() }],
  patchShoot: [
    'PATCH',
    '/projects/dev/shoots/api1',
    { body: { metadata: { labels: { team: 'a' } } }, headers: { 'content-type': 'application/merge-patch+json' } },
  ],
  getShoot: ['GET', '/projects/dev/shoots/api1'],
  deleteShoot: ['DELETE', '/projects/dev/shoots/api2'],
  getControlPlaneLayout: ['GET', '/projects/dev/shoots/api1/controlplane'],
  schedulingDryRun: ['POST', '/scheduling/dry-run', { body: { shoot: shootBody() } }],
  migrateShoot: ['POST', '/projects/dev/shoots/api1/migrate', { body: {} }],
  getMigration: ['GET', '/projects/dev/shoots/api1/migration'],
  listEvacuations: ['GET', '/evacuations'],
  getEvacuation: ['GET', '/seeds/aws-eu1/evacuation'],
  pauseEvacuation: ['POST', '/seeds/aws-eu1/evacuation/pause'],
  resumeEvacuation: ['POST', '/seeds/aws-eu1/evacuation/resume'],
  cancelEvacuation: ['POST', '/seeds/aws-eu1/evacuation/cancel'],
  createAdminKubeconfig: ['POST', '/projects/dev/shoots/api1/adminkubeconfig', { body: {} }],
  createViewerKubeconfig: ['POST', '/projects/dev/shoots/api1/viewerkubeconfig', { body: {} }],
};

/** The API on the recording table, with two seeds, a shoot placed on the first and one pending. */
async function api() {
  const fake = new DynamoDbFake(Object.values(TABLE_INDEXES));
  const client = fake.client();
  const tableName = 'garden';
  const repository = new DynamoGardenRepository({ tableName, client });
  const service = new GardenService({ repository });
  const migrations = new MigrationAdmission({
    journal: new MigrationJournal({
      garden: repository,
      migrations: new DynamoMigrationStore({ tableName, client }),
      events: { publish: async () => {} },
    }),
    workflow: { start: async () => {}, ended: async () => false },
  });
  const evacuations = new EvacuationControls({
    store: new DynamoEvacuationStore({ tableName, client }),
    events: { publish: async () => {} },
    clock: { now: () => new Date() },
  });
  const kubeconfigs = new ShootKubeconfigs({
    getShoot: (project, name) => service.getShoot(project, name),
    secrets: new ShootSecretsKeeper({
      store: new DynamoShootStateStore({ tableName, client }),
      keys: new LocalDataKeys(),
      generate: generateShootSecrets,
      now: () => new Date(),
    }),
    clock: { now: () => new Date() },
  });
  const send = (method: string, path: string, options: RequestOptions = {}) =>
    handleRequest(httpEvent(method, path, options), {
      service,
      migrations,
      evacuations,
      kubeconfigs,
      access: ACCESS,
      version: 't',
    });
  const ready = {
    body: {
      conditions: [
        { type: 'GardenletReady', status: 'True' },
        { type: 'BackupBucketsReady', status: 'True' },
      ],
    },
  };
  for (const [method, path, options] of [
    ['PUT', '/seeds/aws-eu1', { body: seedBody() }],
    ['PUT', '/seeds/aws-eu2', { body: seedBody() }],
    ['POST', '/seeds/aws-eu1/heartbeat', ready],
    ['POST', '/seeds/aws-eu2/heartbeat', ready],
    ['PUT', '/projects/dev/shoots/api1', { body: shootBody({ spec: { seedName: 'aws-eu1' } }) }],
    ['PUT', '/projects/dev/shoots/api2', { body: shootBody() }],
  ] as const) {
    const res = await send(method, path, options as RequestOptions);
    expect(res.statusCode, `${method} ${path}: ${String(res.body)}`).toBeLessThan(300);
  }
  fake.calls.length = 0;
  return { fake, send };
}

/** What makes a read a request path may make: a key, or one partition of the table or an index. */
function readProblem(call: RecordedCall): string | undefined {
  if (call.operation === 'Scan') return 'a Scan reads the whole table';
  if (call.operation !== 'Query') return undefined;
  const condition = String(call.input.KeyConditionExpression ?? '');
  if (!/^\S+ = :\w+( AND .+)?$/.test(condition)) return `a Query without one partition's key: "${condition}"`;
  return undefined;
}

describe('the API reads DynamoDB by key or index partition on every request path', () => {
  it('has a request below for every route, so that a new route is covered too', () => {
    expect(routes.map((r) => r.operationId).sort()).toEqual(Object.keys(REQUESTS).sort());
  });

  it.each(Object.entries(REQUESTS))('%s makes no Scan', async (operationId, [method, path, options]) => {
    // Prepare
    const { fake, send } = await api();

    // Act
    const res = await send(method, path, options);

    // Assess: the route ran to its reads (no 5xx; a 404 or 409 comes after them), each a key lookup or a partition query.
    expect(res.statusCode, String(res.body)).toBeLessThan(500);
    if (operationId !== 'health' && operationId !== 'openapi') expect(fake.calls.length).toBeGreaterThan(0);
    const problems = fake.calls.flatMap((c) => readProblem(c) ?? []);
    expect(problems).toEqual([]);
  });

  it('catches a Scan where one is made', async () => {
    // Prepare
    const { fake } = await api();
    const { ScanCommand } = await import('@aws-sdk/client-dynamodb');

    // Act
    await fake.client().send(new ScanCommand({ TableName: 'garden' }));

    // Assess
    expect(fake.calls.map(readProblem)).toEqual(['a Scan reads the whole table']);
  });
});
