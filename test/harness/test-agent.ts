import { Route53Client } from '@aws-sdk/client-route-53';
import { S3Client } from '@aws-sdk/client-s3';
import { SendTaskFailureCommand, SendTaskHeartbeatCommand, SendTaskSuccessCommand, SFNClient } from '@aws-sdk/client-sfn';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { AwsCredentialIdentity } from '@smithy/types';
import { GardenClient } from '../../adapters/http/garden-client.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { S3BlobStore } from '../../adapters/s3/blob-store.js';
import { s3Api } from '../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import {
  commandFailure,
  commandSuccess,
  InvalidCommandError,
  parseCommand,
  type CommandFailureName,
  type CommandType,
  type SeedCommand,
} from '../../core/commands/index.js';
import type { ActuatorSet, MemoryExtensionWorld } from '../../core/extensions/index.js';
import type { Condition } from '../../core/model/common.js';
import { ownerRecordName } from '../../core/ownership/index.js';
import type { Deployment } from '../../local/deploy.js';
import { AgentControls } from './agent/controls.js';
import { CommandLedger, type CommandAnswer } from './agent/ledger.js';
import { AgentCommandError, TestSeedRuntime, type OwnerCheck } from './agent/runtime.js';

export interface AwsConfig {
  /** The emulator's endpoint; absent for real AWS. */
  endpoint?: string;
  region: string;
  credentials?: AwsCredentialIdentity | (() => Promise<AwsCredentialIdentity>);
}

export interface TestAgentOptions {
  /** The seed this agent runs in (it must be registered, so that its queue exists). */
  seed: string;
  garden: GardenClient;
  aws: AwsConfig;
  /** Default: learned from the first heartbeat's answer. */
  queueUrl?: string;
  /** The world outside the seeds; pass the same one to every agent of a test to see restores adopt. */
  world?: MemoryExtensionWorld;
  actuators?: ActuatorSet;
  /** See TestSeedRuntimeOptions.adoptUnknownShoots; default true. */
  adoptUnknownShoots?: boolean;
  /** Seed heartbeats to the garden API; default 2000 ms. */
  heartbeatIntervalMs?: number;
  /** SQS long-poll wait per receive; short, so that stop() is quick. Default 1 s. */
  pollWaitSeconds?: number;
  /**
   * Restores check the owner record through the Route 53 API (the emulator serves no DNS) and answer
   * NotOwner unless it names this seed's identity. Default: no check.
   */
  ownership?: { hostedZoneId: string; internalDomain: string };
  /** Replaces the default conditions (GardenletReady and BackupBucketsReady True). */
  conditions?: () => Condition[];
}

/** How a received message was handled. */
export type Disposition = 'run' | 'attached' | 'replayed' | 'injected-failure' | 'ignored' | 'invalid' | 'dropped-stopped';

export interface ReceivedCommand {
  type: CommandType | undefined;
  commandId: string | undefined;
  technicalID: string | undefined;
  migrationId: string | undefined;
  taskToken: string | undefined;
  receivedAt: Date;
  disposition: Disposition;
  /** Set when this delivery's token was answered. */
  answer?: { kind: CommandAnswer['kind']; error?: CommandFailureName; at: Date };
  /** Step Functions refused the answer (TaskTimedOut, InvalidToken: the garden moved on). */
  answerRejected?: string;
  /** SendTaskHeartbeat calls accepted for this delivery's token while the command ran. */
  heartbeats?: number;
}

const DEFAULT_CONDITIONS = (): Condition[] => [
  { type: 'GardenletReady', status: 'True', reason: 'TestAgentRunning', message: 'the test seed agent is running' },
  { type: 'BackupBucketsReady', status: 'True', reason: 'TestAgentRunning', message: 'backup buckets are reachable' },
];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A seed agent for the migration integration tests: speaks the seed command protocol v1 on the seed's
 * FIFO queue, answers task tokens, heartbeats the seed, and runs its control planes in memory
 * (`TestSeedRuntime`). The fault controls (`failOn`, `silenceAfter`, `delayMs`, `stop`) act on commands
 * as the tests need them; `received` records every delivery.
 */
export class TestAgent {
  readonly runtime: TestSeedRuntime;
  readonly controls = new AgentControls();
  /** Every message received, in order. */
  readonly received: ReceivedCommand[] = [];
  /** Failures of the agent's own loops (receive, heartbeat, answer), for tests that assert none. */
  readonly errors: Error[] = [];
  /** The seed's identity, from the first heartbeat. */
  identity: string | undefined;
  queueUrl: string | undefined;

  private readonly sqs: SQSClient;
  private readonly sfn: SFNClient;
  private readonly ledger = new CommandLedger();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  private poll: Promise<void> | undefined;
  private abort: AbortController | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: TestAgentOptions) {
    const aws = { region: options.aws.region, ...(options.aws.endpoint ? { endpoint: options.aws.endpoint } : {}), ...(options.aws.credentials ? { credentials: options.aws.credentials } : {}) };
    this.sqs = new SQSClient(aws);
    this.sfn = new SFNClient(aws);
    const s3 = s3Api(new S3Client({ ...aws, forcePathStyle: options.aws.endpoint !== undefined }));
    this.queueUrl = options.queueUrl;
    this.runtime = new TestSeedRuntime({
      seed: options.seed,
      ...(options.world ? { world: options.world } : {}),
      ...(options.actuators ? { actuators: options.actuators } : {}),
      ...(options.adoptUnknownShoots === undefined ? {} : { adoptUnknownShoots: options.adoptUnknownShoots }),
      blobStore: (bucket) => new S3BlobStore({ bucket, api: s3 }),
      snapshotStore: (bucket) => new S3SnapshotStore({ bucket, api: s3 }),
      ...(options.ownership ? { ownerCheck: this.ownerCheck(options.ownership, new Route53Client(aws)) } : {}),
    });
  }

  /** An agent for a seed of the stack the integration setup deployed, with the emulator's test credentials. */
  static onDeployment(deployment: Deployment, options: Omit<TestAgentOptions, 'garden' | 'aws'> & { ownerCheck?: boolean }): TestAgent {
    const credentials = async () => ({ accessKeyId: 'test', secretAccessKey: 'test' });
    const { ownerCheck, ...rest } = options;
    return new TestAgent({
      ...rest,
      garden: new GardenClient({ apiUrl: deployment.apiUrl, region: deployment.region, credentials }),
      aws: { endpoint: deployment.awsEndpoint, region: deployment.region, credentials },
      ...(ownerCheck ? { ownership: { hostedZoneId: deployment.outputs.HostedZoneId, internalDomain: deployment.outputs.InternalDomain } } : {}),
    });
  }

  get seed(): string {
    return this.options.seed;
  }

  get delayMs(): number {
    return this.controls.delayMs;
  }
  set delayMs(ms: number) {
    this.controls.delayMs = ms;
  }

  failOn(type: CommandType, error: CommandFailureName, options: { message?: string; times?: number } = {}): this {
    this.controls.failOn(type, error, options);
    return this;
  }
  clearFailures(type?: CommandType): this {
    this.controls.clearFailures(type);
    return this;
  }
  silenceAfter(type: CommandType): this {
    this.controls.silenceAfter(type);
    return this;
  }

  /** Heartbeats once (learning the queue URL and identity), then polls and heartbeats until stop(). */
  async start(): Promise<void> {
    if (this.running) return;
    await this.heartbeat({ required: true });
    if (this.queueUrl === undefined) throw new Error(`seed ${this.seed} has no command queue (status.commandQueueUrl); is it registered?`);
    this.running = true;
    this.abort = new AbortController();
    this.poll = this.pollLoop(this.queueUrl, this.abort.signal);
    this.heartbeatTimer = setInterval(() => void this.heartbeat({ required: false }), this.options.heartbeatIntervalMs ?? 2000);
  }

  /**
   * The seed goes dark: no more receives, no more heartbeats, and answers of commands still running are
   * not sent (their outcome is still recorded, so a redelivery after start() replays it).
   */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    this.abort?.abort();
    await this.poll;
    this.poll = undefined;
  }

  /** Waits until every accepted command has finished. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Waits until a delivery matching `match` has been received (and returns it). */
  async waitForCommand(match: Partial<Pick<ReceivedCommand, 'type' | 'commandId' | 'technicalID' | 'disposition'>>, options: { timeoutMs?: number } = {}): Promise<ReceivedCommand> {
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    for (;;) {
      const found = this.received.find((r) => Object.entries(match).every(([k, v]) => r[k as keyof ReceivedCommand] === v));
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`seed ${this.seed}: no command matching ${JSON.stringify(match)} within ${options.timeoutMs ?? 30_000} ms (received: ${this.received.map((r) => `${r.type}:${r.commandId}`).join(', ') || 'none'})`);
      await sleep(50);
    }
  }

  /** Sends one seed heartbeat now. */
  async heartbeat(options: { required?: boolean } = {}): Promise<void> {
    try {
      const res = await this.options.garden.request<{ identity?: string; commandQueueUrl?: string; code?: string; message?: string }>('POST', `/seeds/${this.seed}/heartbeat`, {
        body: { conditions: (this.options.conditions ?? DEFAULT_CONDITIONS)(), controlPlanes: this.runtime.controlPlanes(), agentVersion: 'test-agent' },
      });
      if (res.status !== 200) throw new Error(`heartbeat of seed ${this.seed} answered ${res.status}: ${JSON.stringify(res.body)}`);
      this.identity = res.body.identity ?? this.identity;
      this.queueUrl ??= res.body.commandQueueUrl;
    } catch (error) {
      if (options.required) throw error;
      this.errors.push(asError(error));
    }
  }

  private async pollLoop(queueUrl: string, signal: AbortSignal): Promise<void> {
    while (this.running) {
      let messages: Message[];
      try {
        const res = await this.sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: this.options.pollWaitSeconds ?? 1 }), { abortSignal: signal });
        messages = res.Messages ?? [];
      } catch (error) {
        if (signal.aborted) return;
        this.errors.push(asError(error));
        await sleep(250);
        continue;
      }
      for (const message of messages) await this.accept(queueUrl, message);
    }
  }

  /** Decides what to do with one message and deletes it: accepted commands are never delivered twice by SQS. */
  private async accept(queueUrl: string, message: Message): Promise<void> {
    const receivedAt = new Date();
    let command: SeedCommand;
    try {
      command = parseCommand(message.Body ?? '', { seed: this.seed });
    } catch (error) {
      if (!(error instanceof InvalidCommandError)) throw error;
      const raw = looseFields(message.Body);
      const entry = this.record({ ...raw, receivedAt, disposition: 'invalid' });
      await this.deleteMessage(queueUrl, message);
      if (raw.taskToken) await this.answer(entry, raw.taskToken, { kind: 'failure', ...commandFailure({ error: 'InvalidCommand', message: error.message, seed: this.seed }) });
      return;
    }
    const fields = { type: command.type, commandId: command.commandId, technicalID: command.shoot.technicalID, migrationId: command.migrationId, taskToken: command.taskToken, receivedAt };
    const decision = this.controls.decide(command);
    await this.deleteMessage(queueUrl, message);
    if (decision.kind === 'ignore') {
      this.record({ ...fields, disposition: 'ignored' });
      return;
    }
    if (decision.kind === 'fail') {
      const entry = this.record({ ...fields, disposition: 'injected-failure' });
      if (command.taskToken) await this.answer(entry, command.taskToken, { kind: 'failure', ...commandFailure({ error: decision.error, message: decision.message, seed: this.seed, command }) });
      return;
    }
    const ledger = this.ledger.begin(command.commandId, command.taskToken);
    if (ledger.action === 'replay') {
      const entry = this.record({ ...fields, disposition: 'replayed' });
      if (command.taskToken) await this.answer(entry, command.taskToken, ledger.answer);
      return;
    }
    if (ledger.action === 'attached') {
      this.record({ ...fields, disposition: 'attached' });
      return;
    }
    this.record({ ...fields, disposition: 'run' });
    // One command at a time per shoot, in queue order; shoots run in parallel.
    const previous = this.chains.get(command.shoot.technicalID) ?? Promise.resolve();
    const next = previous.then(() => this.run(command));
    this.chains.set(command.shoot.technicalID, next);
    this.inFlight.add(next);
    void next.finally(() => {
      this.inFlight.delete(next);
      if (this.chains.get(command.shoot.technicalID) === next) this.chains.delete(command.shoot.technicalID);
    });
  }

  private async run(command: SeedCommand): Promise<void> {
    const heartbeats = command.taskToken && command.heartbeatSeconds ? setInterval(() => void this.taskHeartbeat(command.commandId), command.heartbeatSeconds * 1000) : undefined;
    let answer: CommandAnswer;
    try {
      if (this.controls.delayMs > 0) await sleep(this.controls.delayMs);
      const result = await this.runtime.execute(command);
      answer = { kind: 'success', output: commandSuccess(command, result as never, new Date()) };
    } catch (error) {
      const failure =
        error instanceof AgentCommandError
          ? commandFailure({ error: error.failure, message: error.message, seed: this.seed, command, ...(error.details ? { details: error.details } : {}) })
          : commandFailure({ error: 'RuntimeUnavailable', message: `the test runtime failed: ${asError(error).message}`, seed: this.seed, command });
      answer = { kind: 'failure', ...failure };
    } finally {
      clearInterval(heartbeats);
    }
    const tokens = this.ledger.finish(command.commandId, answer);
    for (const token of tokens) {
      const entry = [...this.received].reverse().find((r) => r.taskToken === token) ?? this.record({ type: command.type, commandId: command.commandId, technicalID: command.shoot.technicalID, migrationId: command.migrationId, taskToken: token, receivedAt: new Date(), disposition: 'run' });
      if (!this.running) {
        entry.disposition = 'dropped-stopped';
        continue;
      }
      await this.answer(entry, token, answer);
    }
  }

  private async taskHeartbeat(commandId: string): Promise<void> {
    for (const entry of this.received) {
      if (entry.commandId !== commandId || entry.taskToken === undefined || entry.answer || !this.running) continue;
      try {
        await this.sfn.send(new SendTaskHeartbeatCommand({ taskToken: entry.taskToken }));
        entry.heartbeats = (entry.heartbeats ?? 0) + 1;
      } catch (error) {
        // TaskTimedOut / InvalidToken: the garden gave up on this token; the command may still finish for a later one.
        entry.answerRejected = asError(error).name;
      }
    }
  }

  private async answer(entry: ReceivedCommand, token: string, answer: CommandAnswer): Promise<void> {
    try {
      if (answer.kind === 'success') await this.sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: JSON.stringify(answer.output) }));
      else await this.sfn.send(new SendTaskFailureCommand({ taskToken: token, error: answer.error, cause: answer.cause }));
      entry.answer = { kind: answer.kind, ...(answer.kind === 'failure' ? { error: answer.error } : {}), at: new Date() };
    } catch (error) {
      // The task timed out or the token is stale: the garden moved on, which the protocol allows.
      entry.answerRejected = `${asError(error).name}: ${asError(error).message}`;
    }
  }

  private async deleteMessage(queueUrl: string, message: Message): Promise<void> {
    try {
      await this.sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
    } catch (error) {
      // A failed delete means a redelivery later, which the ledger answers without running again.
      this.errors.push(asError(error));
    }
  }

  private record(entry: ReceivedCommand): ReceivedCommand {
    this.received.push(entry);
    return entry;
  }

  private ownerCheck(ownership: { hostedZoneId: string; internalDomain: string }, client: Route53Client): OwnerCheck {
    const records = new Route53OwnerRecords({ hostedZoneId: ownership.hostedZoneId, api: route53Api(client) });
    return async (shoot) => {
      try {
        const record = await records.get(ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain: ownership.internalDomain }));
        return record !== undefined && this.identity !== undefined && record.value === this.identity ? 'owner' : 'not-owner';
      } catch {
        // Route 53 unreachable or throttled: not knowing is not owning (the runtime answers NotOwner, which is retried).
        return 'unknown';
      }
    };
  }
}

/** What can be read from a message that is not a valid command, to answer its token and record it. */
function looseFields(body: string | undefined): Omit<ReceivedCommand, 'receivedAt' | 'disposition'> {
  let value: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(body ?? '') as unknown;
    if (typeof parsed === 'object' && parsed !== null) value = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: nothing to read; the message is deleted and recorded as invalid.
    value = {};
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const shoot = value.shoot as { technicalID?: unknown } | undefined;
  return {
    type: str(value.type) as CommandType | undefined,
    commandId: str(value.commandId),
    technicalID: str(shoot?.technicalID),
    migrationId: str(value.migrationId),
    taskToken: str(value.taskToken),
  };
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
