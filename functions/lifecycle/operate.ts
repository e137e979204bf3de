import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { sendTaskCommand } from '../../adapters/sqs/command-sender.js';
import { systemClock } from '../../core/garden/context.js';
import { ShootOperationSteps } from '../../core/garden/operation-steps.js';
import { dns1123Label } from '../../core/model/names.js';
import { apiRecordWriter } from '../shared/api-records.js';
import { shootStateStore } from '../shared/migration-journal.js';
import { shootSecretsKeeper } from '../shared/shoot-secrets.js';
import { optionalNumberEnv, requireEnv } from '../shared/env.js';
import { task } from '../shared/task.js';

const shootStates = shootStateStore();
const steps = new ShootOperationSteps({
  repo: new DynamoGardenRepository({ tableName: requireEnv('TABLE_NAME'), client: new DynamoDBClient({}) }),
  owners: new Route53OwnerRecords({ hostedZoneId: requireEnv('HOSTED_ZONE_ID') }),
  internalDomain: requireEnv('INTERNAL_DOMAIN'),
  events: new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME') }),
  clock: systemClock,
  apiRecords: apiRecordWriter(),
  shootStates,
  secrets: shootSecretsKeeper(shootStates),
  externalDomain: requireEnv('EXTERNAL_DOMAIN'),
  commandTimeoutSeconds: optionalNumberEnv('COMMAND_TIMEOUT_SECONDS'),
});
const sqs = new SQSClient({});

const ref = z.object({ project: dns1123Label, name: dns1123Label, operationId: z.string().min(1).max(128) }).strict();
const input = z.discriminatedUnion('action', [
  z.object({ action: z.literal('dispatch'), ref, taskToken: z.string().min(1) }).strict(),
  z.object({ action: z.literal('succeed'), ref, output: z.unknown() }).strict(),
  z.object({ action: z.literal('fail'), ref, error: z.unknown() }).strict(),
]);

/**
 * The operate-shoot state machine's task: sends an operation's command to its seed's queue with the task
 * token the machine waits on, and records the agent's answer or the failure on the shoot.
 */
export const handler = task(input, async (event) => {
  switch (event.action) {
    case 'dispatch': {
      const outcome = await steps.dispatch(event.ref);
      if (outcome.superseded)
        throw new SupersededError(
          `operation ${event.ref.operationId} of ${event.ref.project}/${event.ref.name} was superseded or its shoot is gone`,
        );
      await sendTaskCommand({
        client: sqs,
        queueUrl: outcome.queueUrl,
        messageGroupId: outcome.messageGroupId,
        command: { ...outcome.command, taskToken: event.taskToken },
      });
      return { commandId: outcome.command.commandId, seed: outcome.command.seed };
    }
    case 'succeed':
      return steps.succeed(event.ref, event.output);
    case 'fail':
      return steps.fail(event.ref, event.error);
  }
});

/** Matched by name in operate-shoot's Catch: nothing to do, the execution ends quietly. */
class SupersededError extends Error {
  override readonly name = 'Superseded';
}
