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

/** Queue names: `<prefix><seed>` and `<prefix><seed>-dlq`; with the default prefix they fit SQS's 80 characters. */
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
    return `${this.prefix}${seedName}`;
  }

  async provision(seedName: string): Promise<{ commandQueueUrl: string }> {
    const dlq = await this.client.send(
      new CreateQueueCommand({
        QueueName: `${this.queueName(seedName)}-dlq`,
        Attributes: { MessageRetentionPeriod: String(14 * 24 * 3600), SqsManagedSseEnabled: 'true' },
        tags: { 'gardenless.io/seed': seedName },
      }),
    );
    const attributes = await this.client.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }));
    const queue = await this.client.send(
      new CreateQueueCommand({
        QueueName: this.queueName(seedName),
        Attributes: {
          VisibilityTimeout: String(this.visibility),
          MessageRetentionPeriod: String(4 * 24 * 3600),
          ReceiveMessageWaitTimeSeconds: '20',
          SqsManagedSseEnabled: 'true',
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: attributes.Attributes?.QueueArn, maxReceiveCount: MAX_RECEIVE_COUNT }),
        },
        tags: { 'gardenless.io/seed': seedName },
      }),
    );
    if (!queue.QueueUrl) throw new Error(`CreateQueue returned no URL for ${this.queueName(seedName)}`);
    this.urls.set(seedName, queue.QueueUrl);
    return { commandQueueUrl: queue.QueueUrl };
  }

  async deprovision(seedName: string): Promise<void> {
    for (const name of [this.queueName(seedName), `${this.queueName(seedName)}-dlq`]) {
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

  /** Sends one command (a JSON document) to a seed's queue. */
  async send(seedName: string, command: Record<string, unknown>): Promise<string> {
    const url = this.urls.get(seedName) ?? (await this.client.send(new GetQueueUrlCommand({ QueueName: this.queueName(seedName) }))).QueueUrl;
    if (!url) throw new Error(`no command queue for seed ${seedName}`);
    this.urls.set(seedName, url);
    const res = await this.client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(command) }));
    return res.MessageId ?? '';
  }
}
