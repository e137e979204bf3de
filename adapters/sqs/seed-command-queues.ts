import { createHash } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SeedProvisioner } from '../../core/garden/context.js';

/**
 * Queue names: `<prefix><seed>.fifo` and `<prefix><seed>-dlq.fifo`; with the default prefix they fit SQS's
 * 80 characters. FIFO, because commands for one shoot must reach its agent in the order they were sent
 * (the watchdog scales dependents down in a fixed order), and because SQS then drops a resent command
 * with the same id within five minutes.
 */
export const DEFAULT_QUEUE_PREFIX = 'gl-seed-';
/** A command that fails this often goes to the dead-letter queue instead of looping. */
export const MAX_RECEIVE_COUNT = 5;

export interface SqsSeedCommandQueuesOptions {
  client?: SQSClient;
  prefix?: string;
  /** Longer than an agent needs to start a command and answer its first heartbeat. */
  visibilityTimeoutSeconds?: number;
}

/**
 * One SQS queue per seed, with its dead-letter queue: commands travel garden -> seed through it, and
 * a seed needs only outbound access to read them. Creating is idempotent (same attributes, same queue).
 */
/** The tag every seed's dead-letter queue carries. */
export const SEED_DLQ_TAG = { key: 'GardenlessQueue', value: 'seed-dead-letter' } as const;

export class SqsSeedCommandQueues implements SeedProvisioner {
  private readonly client: SQSClient;
  private readonly prefix: string;
  private readonly visibility: number;
  private readonly urls = new Map<string, string>();

  constructor(options: SqsSeedCommandQueuesOptions = {}) {
    this.client = options.client ?? new SQSClient({});
    this.prefix = options.prefix ?? DEFAULT_QUEUE_PREFIX;
    this.visibility = options.visibilityTimeoutSeconds ?? 60;
  }

  queueName(seedName: string): string {
    return `${this.prefix}${seedName}.fifo`;
  }

  private dlqName(seedName: string): string {
    return `${this.prefix}${seedName}-dlq.fifo`;
  }

  async provision(seedName: string): Promise<{ commandQueueUrl: string }> {
    const dlq = await this.client.send(
      new CreateQueueCommand({
        QueueName: this.dlqName(seedName),
        Attributes: { FifoQueue: 'true', MessageRetentionPeriod: String(14 * 24 * 3600), SqsManagedSseEnabled: 'true' },
        // The stack's dead-letter alarm finds every seed's DLQ by this tag (a Metrics Insights query).
        tags: { 'gardenless.io/seed': seedName, [SEED_DLQ_TAG.key]: SEED_DLQ_TAG.value },
      }),
    );
    const attributes = await this.client.send(
      new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    const queue = await this.client.send(
      new CreateQueueCommand({
        QueueName: this.queueName(seedName),
        Attributes: {
          FifoQueue: 'true',
          ContentBasedDeduplication: 'false',
          VisibilityTimeout: String(this.visibility),
          MessageRetentionPeriod: String(4 * 24 * 3600),
          ReceiveMessageWaitTimeSeconds: '20',
          SqsManagedSseEnabled: 'true',
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: attributes.Attributes?.QueueArn,
            maxReceiveCount: MAX_RECEIVE_COUNT,
          }),
        },
        tags: { 'gardenless.io/seed': seedName },
      }),
    );
    if (!queue.QueueUrl) throw new Error(`CreateQueue returned no URL for ${this.queueName(seedName)}`);
    this.urls.set(seedName, queue.QueueUrl);
    return { commandQueueUrl: queue.QueueUrl };
  }

  async deprovision(seedName: string): Promise<void> {
    for (const name of [this.queueName(seedName), this.dlqName(seedName)]) {
      try {
        const { QueueUrl } = await this.client.send(new GetQueueUrlCommand({ QueueName: name }));
        await this.client.send(new DeleteQueueCommand({ QueueUrl }));
      } catch (error) {
        // Already gone is the state we want.
        if (!(error instanceof QueueDoesNotExist)) throw error;
      }
    }
    this.urls.delete(seedName);
  }

  /**
   * Sends one command to a seed's queue. Commands of one shoot share a message group (its technical ID),
   * so the agent receives them in order; the command id deduplicates resends.
   */
  async send(seedName: string, command: { commandId: string; shoot: { technicalID: string } }): Promise<string> {
    const url =
      this.urls.get(seedName) ??
      (await this.client.send(new GetQueueUrlCommand({ QueueName: this.queueName(seedName) }))).QueueUrl;
    if (!url) throw new Error(`no command queue for seed ${seedName}`);
    this.urls.set(seedName, url);
    const res = await this.client.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: JSON.stringify(command),
        MessageGroupId: command.shoot.technicalID,
        // SQS allows 128 characters of [A-Za-z0-9!-~]; command ids are longer at times, so hash them.
        MessageDeduplicationId: createHash('sha256').update(command.commandId).digest('hex'),
      }),
    );
    return res.MessageId ?? '';
  }
}
