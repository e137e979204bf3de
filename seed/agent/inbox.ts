import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** One delivery of a command message; `receipt` deletes it. */
export interface InboxMessage {
  body: string;
  receipt: string;
}

/**
 * Where the agent's commands arrive (docs/design.md section 5: one FIFO queue per seed). `receive` waits up to a
 * poll interval and returns what arrived, possibly nothing; aborting the signal ends the wait. A message
 * that is not deleted comes back after its visibility timeout.
 */
export interface CommandInbox {
  /** The poll interval: how long one `receive` waits for a message (the agent's liveness bound counts in it). */
  readonly waitMs: number;
  receive(signal: AbortSignal): Promise<InboxMessage[]>;
  delete(message: InboxMessage): Promise<void>;
}

/** The seed's SQS command queue, long-polled. */
export function sqsCommandInbox(options: { client: SQSClient; queueUrl: string; waitSeconds?: number }): CommandInbox {
  const { client, queueUrl } = options;
  const waitSeconds = options.waitSeconds ?? 5;
  return {
    waitMs: waitSeconds * 1_000,
    async receive(signal) {
      const res = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: waitSeconds,
        }),
        { abortSignal: signal },
      );
      return (res.Messages ?? []).map((m) => ({ body: m.Body ?? '', receipt: m.ReceiptHandle ?? '' }));
    },
    async delete(message) {
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.receipt }));
    },
  };
}

/** An inbox in memory, for unit tests: `push` delivers, `deleted` records what the agent deleted. */
export class MemoryCommandInbox implements CommandInbox {
  readonly waitMs = 50;
  readonly deleted: string[] = [];
  private readonly queue: InboxMessage[] = [];
  private serial = 0;
  private wake: (() => void) | undefined;

  push(body: string): void {
    this.queue.push({ body, receipt: `r${++this.serial}` });
    this.wake?.();
  }

  async receive(signal: AbortSignal): Promise<InboxMessage[]> {
    if (this.queue.length === 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.waitMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
        signal.addEventListener('abort', this.wake, { once: true });
      });
      this.wake = undefined;
    }
    if (signal.aborted) throw signal.reason;
    return this.queue.splice(0);
  }

  async delete(message: InboxMessage): Promise<void> {
    this.deleted.push(message.receipt);
  }
}
