import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { inject } from 'vitest';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { GardenClient } from '../../adapters/http/garden-client.js';
import type { Deployment } from '../../local/deploy.js';

export interface TestGarden {
  deployment: Deployment;
  api: GardenClient;
  /** The same API without SigV4 signatures. */
  unsigned: GardenClient;
  /** `api` resending the emulator gateway's 502s (a Lambda worker that failed to start): for set-up steps a test is not about. */
  setup: GardenClient;
  ddb: DynamoDBDocumentClient;
  tableName: string;
  /** The garden table through the repository the functions use (for what a missing seed agent would have done). */
  repository: DynamoGardenRepository;
}

const credentials = async () => ({ accessKeyId: 'test', secretAccessKey: 'test' });

/** Clients of the stack the global setup deployed. */
export function testGarden(): TestGarden {
  const deployment = inject('deployment');
  const awsConfig = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials };
  return {
    deployment,
    // Generous: bursts of 50 concurrent requests start that many Lambda workers in the emulator on two cores.
    api: new GardenClient({ apiUrl: deployment.apiUrl, region: deployment.region, credentials, timeoutMs: 120_000 }),
    setup: new GardenClient({ apiUrl: deployment.apiUrl, region: deployment.region, credentials, timeoutMs: 120_000, gatewayRetries: 5 }),
    unsigned: new GardenClient({ apiUrl: deployment.apiUrl, region: deployment.region, credentials, sign: false, timeoutMs: 120_000 }),
    ddb: DynamoDBDocumentClient.from(new DynamoDBClient(awsConfig)),
    tableName: deployment.outputs.TableName,
    repository: new DynamoGardenRepository({ tableName: deployment.outputs.TableName, client: new DynamoDBClient(awsConfig) }),
  };
}

/** Every item of the garden table, sorted by key: what "nothing was written" is checked against. */
export async function scanTable(garden: TestGarden): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const res = await garden.ddb.send(new ScanCommand({ TableName: garden.tableName, ExclusiveStartKey: start, ConsistentRead: true }));
    items.push(...(res.Items ?? []));
    start = res.LastEvaluatedKey;
  } while (start);
  return items.sort((a, b) => `${String(a.pk)}|${String(a.sk)}`.localeCompare(`${String(b.pk)}|${String(b.sk)}`));
}

/** Empties the garden table so that each suite starts from a clean state; the stack stays deployed. */
export async function resetGardenState(garden: TestGarden): Promise<void> {
  const items = await scanTable(garden);
  for (let i = 0; i < items.length; i += 25) {
    const batch = items.slice(i, i + 25).map((it) => ({ DeleteRequest: { Key: { pk: it.pk, sk: it.sk } } }));
    await garden.ddb.send(new BatchWriteCommand({ RequestItems: { [garden.tableName]: batch } }));
  }
}
