import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { SqsSeedCommandQueues } from '../../adapters/sqs/seed-command-queues.js';
import type { EventSink } from '../../core/garden/context.js';
import { GardenService } from '../../core/garden/service.js';
import { logger } from '../shared/logger.js';
import { requireEnv, schedulingPolicyFromEnv } from '../shared/env.js';
import { StepFunctionsMigrationWorkflow } from '../../adapters/sfn/migration-workflow.js';
import { MigrationAdmission } from '../../core/migration/migration-admission.js';
import { migrationJournal } from '../shared/migration-journal.js';
import { handleRequest } from './app.js';

const VERSION = process.env.GARDENLESS_VERSION ?? '0.1.0';

const bus = new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME') });
// The resource is already written when an event is published; failing the request would make the
// client retry a write that succeeded. The event is logged so that nothing is lost silently.
const events: EventSink = {
  publish: (detailType, detail) =>
    bus.publish(detailType, detail).catch((error: unknown) => logger.error('event not published', { detailType, detail, error })),
};
const service = new GardenService({
  repository: new DynamoGardenRepository({ tableName: requireEnv('TABLE_NAME') }),
  events,
  scheduling: schedulingPolicyFromEnv(),
  provisioner: new SqsSeedCommandQueues({ prefix: requireEnv('SEED_QUEUE_PREFIX') }),
});

const migrations = new MigrationAdmission({
  journal: migrationJournal(),
  workflow: new StepFunctionsMigrationWorkflow({ stateMachineArn: requireEnv('MIGRATE_SHOOT_STATE_MACHINE_ARN') }),
  scheduling: schedulingPolicyFromEnv(),
});

async function api(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const started = Date.now();
  const result = await handleRequest(event, {
    service,
    migrations,
    version: VERSION,
    onUnexpected: (error) => logger.error('unexpected error', { error }),
  });
  logger.info('request', {
    method: event.requestContext.http.method,
    path: event.rawPath,
    status: result.statusCode,
    durationMs: Date.now() - started,
  });
  return result;
}

export const handler = middy(api).use(injectLambdaContext(logger, { resetKeys: true }));
