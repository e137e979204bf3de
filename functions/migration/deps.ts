import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { DynamoMigrationStore } from '../../adapters/dynamodb/migration-store.js';
import { DynamoShootStateStore } from '../../adapters/dynamodb/shoot-state-store.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import { StepFunctionsMigrationWorkflow } from '../../adapters/sfn/migration-workflow.js';
import type { OwnerRecords } from '../../core/ownership/owner-records.js';
import { MigrationService, type MigrationWorkflow } from '../../core/migration/service.js';
import { parseOwnershipTimings } from '../../core/ownership/index.js';
import { requireEnv, schedulingPolicyFromEnv } from '../shared/env.js';

/** Parts a function was not given permissions for fail loudly when used, instead of at start. */
const unavailable = (what: string) =>
  new Proxy({}, { get: () => () => Promise.reject(new Error(`${what} is not available to this function`)) });

/**
 * The migration service as each migration function needs it; each passes only what its role allows
 * (the owner-record function alone talks to Route 53, the API alone starts executions).
 */
export function migrationService(options: { owners?: boolean; workflow?: boolean } = {}): MigrationService {
  const client = new DynamoDBClient({});
  const tableName = requireEnv('TABLE_NAME');
  return new MigrationService({
    garden: new DynamoGardenRepository({ tableName, client }),
    migrations: new DynamoMigrationStore({ tableName, client }),
    shootStates: new DynamoShootStateStore({ tableName, client }),
    owners: options.owners ? new Route53OwnerRecords({ hostedZoneId: requireEnv('HOSTED_ZONE_ID') }) : (unavailable('Route 53') as OwnerRecords),
    snapshots: (bucket) => new S3SnapshotStore({ bucket }),
    workflow: options.workflow
      ? new StepFunctionsMigrationWorkflow({ stateMachineArn: requireEnv('MIGRATE_SHOOT_STATE_MACHINE_ARN') })
      : (unavailable('Step Functions') as MigrationWorkflow),
    internalDomain: requireEnv('INTERNAL_DOMAIN'),
    stateBucket: requireEnv('STATE_BUCKET'),
    events: new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME') }),
    scheduling: schedulingPolicyFromEnv(),
    ...(process.env.HEARTBEAT_INTERVAL_MS ? { heartbeatIntervalMs: Number(process.env.HEARTBEAT_INTERVAL_MS) } : {}),
    ...(process.env.WAIT_FINAL_SNAPSHOT_MS ? { waitFinalSnapshotMs: Number(process.env.WAIT_FINAL_SNAPSHOT_MS) } : {}),
    ...(process.env.COMMAND_TIMEOUT_SECONDS ? { commandTimeoutSeconds: Number(process.env.COMMAND_TIMEOUT_SECONDS) } : {}),
    fenceTimings: parseOwnershipTimings(process.env.OWNERSHIP_TIMINGS),
    ...(process.env.COPY_WAIT_FOR_FINAL_MS ? { copyWaitForFinalMs: Number(process.env.COPY_WAIT_FOR_FINAL_MS) } : {}),
  });
}
