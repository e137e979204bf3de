import { SQSClient } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { DynamoSourceWaitIndex } from '../../adapters/dynamodb/source-waits.js';
import { sendTaskCommand } from '../../adapters/sqs/command-sender.js';
import { STEP_ROUNDS } from '../../core/migration/commands.js';
import { SeedCommands } from '../../core/migration/seed-steps.js';
import { optionalNumberEnv, requireEnv } from '../shared/env.js';
import { migrationJournal, shootStateStore } from '../shared/migration-journal.js';
import { shootSecretsKeeper } from '../shared/shoot-secrets.js';
import { task } from '../shared/task.js';
import { ref, stepId } from './input.js';

const shootStates = shootStateStore();
const commands = new SeedCommands({
  journal: migrationJournal(),
  shootStates,
  secrets: shootSecretsKeeper(shootStates),
  externalDomain: requireEnv('EXTERNAL_DOMAIN'),
  stateBucket: requireEnv('STATE_BUCKET'),
  commandTimeoutSeconds: optionalNumberEnv('COMMAND_TIMEOUT_SECONDS'),
  sourceWaits: new DynamoSourceWaitIndex({ tableName: requireEnv('TABLE_NAME') }),
});
const sqs = new SQSClient({});

/**
 * A step done by a seed agent: starts the step, builds its command with the task token the state
 * machine waits on, and puts it on the seed's queue. The agent answers with SendTaskSuccess/Failure.
 */
export const handler = task(
  z
    .object({
      action: z.literal('dispatch'),
      ref,
      step: stepId,
      round: z.enum(STEP_ROUNDS).optional(),
      taskToken: z.string().min(1),
    })
    .strict(),
  async (event) => {
    const { command, queueUrl, messageGroupId } = await commands.beginCommand(event.ref, event.step, {
      taskToken: event.taskToken,
      ...(event.round ? { round: event.round } : {}),
    });
    await sendTaskCommand({
      client: sqs,
      queueUrl,
      messageGroupId,
      command: { ...command, taskToken: event.taskToken },
    });
    return { commandId: command.commandId, seed: command.seed };
  },
);
