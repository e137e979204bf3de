import type { AwsCredentialIdentity } from '@smithy/types';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoGardenRepository } from '../adapters/dynamodb/garden-repository.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { GardenClient, type GardenResponse } from '../adapters/http/garden-client.js';
import type { Deployment } from '../local/deploy.js';
import { emulatorCredentials } from '../local/aws-env.js';

/** Clients of a deployed garden stack, for tests and benchmarks. */
export interface GardenClients {
  deployment: Deployment;
  /** What an AWS SDK client of the emulator needs: its endpoint, region and credentials. */
  aws: { endpoint: string; region: string; credentials: AwsCredentialIdentity };
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

export function gardenClients(deployment: Deployment): GardenClients {
  const aws = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() };
  return {
    deployment,
    aws,
    // Generous: bursts of 50 concurrent requests start that many Lambda workers in the emulator on two cores.
    api: new GardenClient({
      apiUrl: deployment.apiUrl,
      region: deployment.region,
      credentials: emulatorCredentials(),
      timeoutMs: 120_000,
    }),
    setup: new GardenClient({
      apiUrl: deployment.apiUrl,
      region: deployment.region,
      credentials: emulatorCredentials(),
      timeoutMs: 120_000,
      gatewayRetries: 5,
    }),
    unsigned: new GardenClient({
      apiUrl: deployment.apiUrl,
      region: deployment.region,
      credentials: emulatorCredentials(),
      sign: false,
      timeoutMs: 120_000,
    }),
    ddb: DynamoDBDocumentClient.from(new DynamoDBClient(aws)),
    tableName: deployment.outputs.TableName,
    repository: new DynamoGardenRepository({
      tableName: deployment.outputs.TableName,
      client: new DynamoDBClient(aws),
    }),
  };
}

/** Every item of the garden table, sorted by key: what "nothing was written" is checked against. */
export async function scanTable(garden: Pick<GardenClients, 'ddb' | 'tableName'>): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const res = await garden.ddb.send(
      new ScanCommand({ TableName: garden.tableName, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    items.push(...(res.Items ?? []));
    start = res.LastEvaluatedKey;
  } while (start);
  return items.sort((a, b) => `${String(a.pk)}|${String(a.sk)}`.localeCompare(`${String(b.pk)}|${String(b.sk)}`));
}

/** Empties the garden table so that each suite starts from a clean state; the stack stays deployed. */
export async function resetGardenState(garden: Pick<GardenClients, 'ddb' | 'tableName'>): Promise<void> {
  const items = await scanTable(garden);
  for (let i = 0; i < items.length; i += 25) {
    const batch = items.slice(i, i + 25).map((it) => ({ DeleteRequest: { Key: { pk: it.pk, sk: it.sk } } }));
    await garden.ddb.send(new BatchWriteCommand({ RequestItems: { [garden.tableName]: batch } }));
  }
}

/**
 * A creating PUT after the emulator gateway's 502 (a Lambda worker that failed to start or ran past its
 * timeout on a loaded machine), handled as a careful client does: the first attempt may have run, so it
 * reads the object first and resends only when it does not exist (a resend of a placed shoot without
 * `spec.seedName` would be refused as immutable). `resent` says whether a 502 came, for assertions on 201.
 */
export async function putResending<T>(
  api: GardenClient,
  path: string,
  body: unknown,
  attempts = 4,
): Promise<GardenResponse<T> & { resent: boolean }> {
  for (let attempt = 1; ; attempt++) {
    const res = await api.request<T>('PUT', path, { body });
    if (res.status !== 502 || attempt === attempts) return { ...res, resent: attempt > 1 };
    await sleep(500 * 2 ** attempt);
    const existing = await api.withGatewayRetries(3).request<T>('GET', path);
    if (existing.status === 200) return { ...existing, resent: true };
  }
}

/** A creation's answer: 201, or 200 when a 502 came and the object turned out to exist (the first attempt ran). */
export function created(res: { status: number; resent: boolean }): boolean {
  return res.status === 201 || (res.resent && res.status === 200);
}
