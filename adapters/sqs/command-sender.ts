import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createHash } from 'node:crypto';
import type { SeedCommand } from '../../core/commands/schema.js';
import type { SeedNotices } from '../../core/migration/owner-notice.js';

/**
 * Sends a command that a state-machine task waits for. The deduplication id covers the task token:
 * a retried step repeats the command id with a new token and must reach the agent (which answers a
 * known id from its record), while a redelivered send of the same token is dropped by SQS.
 */
export async function sendTaskCommand(options: {
  client: SQSClient;
  queueUrl: string;
  messageGroupId: string;
  command: SeedCommand;
}): Promise<void> {
  const { command } = options;
  await options.client.send(
    new SendMessageCommand({
      QueueUrl: options.queueUrl,
      MessageBody: JSON.stringify(command),
      MessageGroupId: options.messageGroupId,
      MessageDeduplicationId: createHash('sha256')
        .update(`${command.commandId}\n${command.taskToken ?? ''}`)
        .digest('hex'),
    }),
  );
}

/**
 * Notices (owner changes, hand-overs) on the seeds' queues. Deduplicated by command id (a retried step sends the
 * same notice, which SQS drops within its five-minute window), and bounded in time: a notice that cannot
 * be sent within `timeoutMs` is given up, the source's poll bounds the fence anyway.
 */
export function sqsSeedNotices(options: { client: SQSClient; timeoutMs?: number }): SeedNotices {
  return {
    async send({ command, queueUrl, messageGroupId }) {
      await options.client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify(command),
          MessageGroupId: messageGroupId,
          MessageDeduplicationId: createHash('sha256').update(command.commandId).digest('hex'),
        }),
        { abortSignal: AbortSignal.timeout(options.timeoutMs ?? 2_000) },
      );
    },
  };
}
