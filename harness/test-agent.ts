import { Route53Client } from '@aws-sdk/client-route-53';
import type { AwsCredentialIdentity } from '@smithy/types';
import { GardenClient } from '../adapters/http/garden-client.js';
import { route53Api, Route53OwnerRecords } from '../adapters/route53/owner-records.js';
import {
  COMMAND_API_VERSION,
  commandFailure,
  commandSuccess,
  readCommand,
  type CommandFailureName,
  type CommandType,
} from '../core/commands/index.js';
import type { ActuatorSet, MemoryExtensionWorld } from '../core/extensions/index.js';
import { ownerRecordName } from '../core/ownership/index.js';
import type { Deployment } from '../local/deploy.js';
import type { SeedAgent } from '../seed/agent/agent.js';
import { awsSeedAgent } from '../seed/agent/aws-agent.js';
import type { ControlPlaneRuntime } from '../seed/agent/control-plane-runtime.js';
import type { CommandInbox, InboxMessage } from '../seed/agent/inbox.js';
import { MemoryHosting } from '../seed/agent/memory-hosting.js';
import type { SeedRuntime } from '../seed/agent/runtime.js';
import type { TaskAnswers } from '../seed/agent/task-answers.js';
import { AgentControls, controlledKind, type ControlledKind } from './agent/controls.js';
import { emulatorCredentials } from '../local/aws-env.js';
import { until } from './until.js';

export interface TestAgentOptions {
  /** The seed this agent runs in (it must be registered, so that its queue exists). */
  seed: string;
  garden: GardenClient;
  aws: {
    endpoint?: string;
    region: string;
    credentials?: AwsCredentialIdentity | (() => Promise<AwsCredentialIdentity>);
  };
  /** The world outside the seeds; pass the same one to every agent of a test to see restores adopt. */
  world?: MemoryExtensionWorld;
  actuators?: ActuatorSet;
  /** Seed heartbeats to the garden API; default 2000 ms. */
  heartbeatIntervalMs?: number;
  /** SQS long-poll wait per receive; short, so that stop() is quick. Default 1 s. */
  pollWaitSeconds?: number;
  /**
   * Restores answer NotOwner unless the owner record (read through the Route 53 API) names this seed, and a
   * create of a control plane not hosted here while it names another. Default: no check.
   */
  ownership?: { hostedZoneId: string; internalDomain: string };
  /**
   * What becomes of a restore ahead (the pre-copy's `restore` with `etcd.ahead`): `decline` answers it here
   * with `ahead: false`, as a runtime that does not restore ahead does (the migration's restore-etcd then
   * restores in full); `agent` hands it to the agent like any command. Default `decline`, until the memory
   * runtime restores ahead.
   */
  restoreAhead?: 'decline' | 'agent';
}

/** How a received message was handled. */
export type Disposition =
  'run' | 'attached' | 'replayed' | 'injected-failure' | 'ignored' | 'declined-ahead' | 'invalid' | 'dropped-stopped';

export interface ReceivedCommand {
  type: CommandType | undefined;
  commandId: string | undefined;
  technicalID: string | undefined;
  migrationId: string | undefined;
  taskToken: string | undefined;
  receivedAt: Date;
  disposition: Disposition;
  /** Set when this delivery's token was answered. */
  answer?: { kind: 'success' | 'failure'; error?: CommandFailureName; at: Date };
  /** Step Functions refused the answer (TaskTimedOut, InvalidToken: the garden moved on). */
  answerRejected?: string;
  /** SendTaskHeartbeat calls accepted for this delivery's token while the command ran. */
  heartbeats?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The real seed agent (`SeedAgent` with the `ControlPlaneRuntime` on `MemoryHosting`) on a seed of the
 * deployed stack, with test controls at its seams: the command inbox applies the fault controls
 * (`failOn`, `silenceAfter`) before the agent sees a command, the task answers are recorded (and dropped
 * once the agent is stopped), and `delayMs` holds each command back. `received` records every delivery
 * with what became of it.
 */
export class TestAgent {
  readonly agent: SeedAgent;
  readonly hosting = new MemoryHosting({ loadBalancer: false });
  readonly controls = new AgentControls();
  /** Every message received, in order. */
  readonly received: ReceivedCommand[] = [];
  private controlPlaneRuntime: ControlPlaneRuntime | undefined;
  private taskAnswers: TaskAnswers | undefined;
  /** Deliveries handed to the agent and not yet decided: it decides them one at a time, in order. */
  private readonly undecided: ReceivedCommand[] = [];
  private live = false;

  constructor(private readonly options: TestAgentOptions) {
    this.agent = awsSeedAgent({
      seed: options.seed,
      garden: options.garden,
      aws: options.aws,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 2000,
      pollWaitSeconds: options.pollWaitSeconds ?? 1,
      ...(options.ownership ? { owner: { mode: 'api' as const, ...options.ownership } } : {}),
      hosting: () => this.hosting,
      ...(options.world ? { world: options.world } : {}),
      ...(options.actuators ? { actuators: options.actuators } : {}),
      log: (entry) => this.decided(entry),
      wrap: {
        inbox: (inbox) => this.controlled(inbox),
        answers: (answers) => this.recorded(answers),
        runtime: (runtime) => this.delayed(runtime as ControlPlaneRuntime),
      },
    });
  }

  /** An agent for a seed of the stack the integration setup deployed, with the emulator's test credentials. */
  static onDeployment(
    deployment: Deployment,
    options: Omit<TestAgentOptions, 'garden' | 'aws'> & { ownerCheck?: boolean },
  ): TestAgent {
    const { ownerCheck, ...rest } = options;
    return new TestAgent({
      ...rest,
      garden: new GardenClient({
        apiUrl: deployment.apiUrl,
        region: deployment.region,
        credentials: emulatorCredentials(),
      }),
      aws: { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() },
      ...(ownerCheck
        ? {
            ownership: {
              hostedZoneId: deployment.outputs.HostedZoneId,
              internalDomain: deployment.outputs.InternalDomain,
            },
          }
        : {}),
    });
  }

  get seed(): string {
    return this.options.seed;
  }
  get identity(): string | undefined {
    return this.agent.identity;
  }
  get queueUrl(): string | undefined {
    return this.agent.queueUrl;
  }
  /** Failures of the agent's own loops (receive, heartbeat, answer), for tests that assert none. */
  get errors(): Error[] {
    return this.agent.errors;
  }
  /** The agent's runtime (available once started). */
  get runtime(): ControlPlaneRuntime {
    if (!this.controlPlaneRuntime) throw new Error(`the agent of seed ${this.seed} has not started`);
    return this.controlPlaneRuntime;
  }

  get delayMs(): number {
    return this.controls.delayMs;
  }
  set delayMs(ms: number) {
    this.controls.delayMs = ms;
  }

  failOn(type: ControlledKind, error: CommandFailureName, options: { message?: string; times?: number } = {}): this {
    this.controls.failOn(type, error, options);
    return this;
  }
  clearFailures(type?: ControlledKind): this {
    this.controls.clearFailures(type);
    return this;
  }
  silenceAfter(type: ControlledKind): this {
    this.controls.silenceAfter(type);
    return this;
  }

  async start(): Promise<void> {
    this.live = true;
    await this.agent.start();
  }

  /** The seed goes dark: no more receives or heartbeats; answers of commands still running are not sent. */
  async stop(): Promise<void> {
    this.live = false;
    await this.agent.stop();
  }

  async idle(): Promise<void> {
    await this.agent.idle();
  }

  async heartbeat(): Promise<void> {
    await this.agent.heartbeat();
  }

  /**
   * Creates a control plane here as create-control-plane does, without a command on the queue (a shoot
   * hosted before the test began). With the owner check on, the owner record names this seed first, as
   * the garden writes it before it sends a Create.
   */
  async host(
    shoot: { project: string; name: string; technicalID: string },
    options: { backupBucket?: string; hibernated?: boolean } = {},
  ): Promise<void> {
    const { ownership, aws } = this.options;
    if (ownership) {
      const records = new Route53OwnerRecords({
        hostedZoneId: ownership.hostedZoneId,
        api: route53Api(new Route53Client(aws)),
      });
      await records.set({
        name: ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain: ownership.internalDomain }),
        value: this.identity!,
      });
    }
    await this.runtime.execute({
      apiVersion: COMMAND_API_VERSION,
      commandId: `test-host/${shoot.technicalID}`,
      shoot,
      seed: this.seed,
      issuedAt: new Date().toISOString(),
      type: 'create-control-plane',
      controlPlane: {
        hibernated: options.hibernated ?? false,
        backup: { bucket: options.backupBucket ?? `gl-backup-${this.seed}` },
      },
    });
  }

  /** Waits until a delivery matching `match` has been received (and returns it). */
  async waitForCommand(
    match: Partial<Pick<ReceivedCommand, 'type' | 'commandId' | 'technicalID' | 'disposition'>>,
    options: { timeoutMs?: number } = {},
  ): Promise<ReceivedCommand> {
    return until(
      `seed ${this.seed} to receive a command matching ${JSON.stringify(match)}`,
      () => this.received.find((r) => Object.entries(match).every(([k, v]) => r[k as keyof ReceivedCommand] === v)),
      {
        timeoutMs: options.timeoutMs ?? 30_000,
        intervalMs: 50,
        explain: () => `received: ${this.received.map((r) => `${r.type}:${r.commandId}`).join(', ') || 'none'}`,
      },
    );
  }

  /** The fault controls act on each message before the agent sees it; what they let through waits for the agent's decision. */
  private controlled(inbox: CommandInbox): CommandInbox {
    return {
      waitMs: inbox.waitMs,
      receive: async (signal) => {
        const passed: InboxMessage[] = [];
        for (const message of await inbox.receive(signal)) {
          if (await this.intercept(inbox, message)) continue;
          passed.push(message);
        }
        return passed;
      },
      delete: (message) => inbox.delete(message),
    };
  }

  /** Records the delivery; answers it here (injected failure, ignore) and returns true, or leaves it to the agent. */
  private async intercept(inbox: CommandInbox, message: InboxMessage): Promise<boolean> {
    const { command, invalid } = readCommand(message.body, { seed: this.seed });
    if (invalid) {
      this.undecided.push(this.record({ ...looseFields(message.body), disposition: 'invalid' }));
      return false;
    }
    const entry = this.record({
      type: command.type,
      commandId: command.commandId,
      technicalID: command.shoot.technicalID,
      migrationId: command.migrationId,
      taskToken: command.taskToken,
      disposition: 'run',
    });
    const decision = this.controls.decide(command);
    const declineAhead =
      decision.kind === 'run' &&
      command.type === 'restore' &&
      controlledKind(command) === 'restore-ahead' &&
      (this.options.restoreAhead ?? 'decline') === 'decline';
    if (decision.kind === 'run' && !declineAhead) {
      this.undecided.push(entry);
      return false;
    }
    await inbox.delete(message);
    entry.disposition =
      decision.kind === 'ignore' ? 'ignored' : decision.kind === 'fail' ? 'injected-failure' : 'declined-ahead';
    if (decision.kind === 'fail' && command.taskToken) {
      const failure = commandFailure({ error: decision.error, message: decision.message, seed: this.seed, command });
      await this.taskAnswers?.failure(command.taskToken, failure.error, failure.cause).catch(() => undefined);
    }
    if (declineAhead && command.type === 'restore' && command.taskToken) {
      // What a runtime that does not restore ahead answers: nothing restored, the normal restore does all of it.
      const output = commandSuccess(
        command,
        { etcd: { restoredRevision: 0, snapshots: 0, final: false, ahead: false } },
        new Date(),
      );
      await this.taskAnswers?.success(command.taskToken, JSON.stringify(output)).catch(() => undefined);
    }
    return true;
  }

  /** The agent logs its ledger decision for each delivery, in the order it received them. */
  private decided(entry: Record<string, unknown>): void {
    if (entry.event !== 'command' && entry.event !== 'invalid-command') return;
    const delivery = this.undecided.shift();
    if (delivery && entry.event === 'command')
      delivery.disposition = DISPOSITIONS[entry.decision as keyof typeof DISPOSITIONS];
  }

  private recorded(answers: TaskAnswers): TaskAnswers {
    this.taskAnswers = {
      success: (token, output) => this.answer(token, { kind: 'success' }, () => answers.success(token, output)),
      failure: (token, error, cause) =>
        this.answer(token, { kind: 'failure', error: error as CommandFailureName }, () =>
          answers.failure(token, error, cause),
        ),
      heartbeat: async (token) => {
        const entry = this.delivery(token);
        try {
          await answers.heartbeat(token);
          if (entry) entry.heartbeats = (entry.heartbeats ?? 0) + 1;
        } catch (error) {
          if (entry) entry.answerRejected = (error as Error).name;
          throw error;
        }
      },
    };
    return this.taskAnswers;
  }

  private async answer(
    token: string,
    answer: { kind: 'success' | 'failure'; error?: CommandFailureName },
    send: () => Promise<void>,
  ): Promise<void> {
    const entry = this.delivery(token);
    if (!this.live) {
      if (entry) entry.disposition = 'dropped-stopped';
      return;
    }
    try {
      await send();
      if (entry) entry.answer = { ...answer, at: new Date() };
    } catch (error) {
      if (entry) entry.answerRejected = `${(error as Error).name}: ${(error as Error).message}`;
      throw error;
    }
  }

  private delayed(runtime: ControlPlaneRuntime): SeedRuntime {
    this.controlPlaneRuntime = runtime;
    return {
      execute: async (command, signal) => {
        if (this.controls.delayMs > 0) await sleep(this.controls.delayMs);
        return runtime.execute(command, signal);
      },
      controlPlanes: () => runtime.controlPlanes(),
      capabilities: () => runtime.capabilities(),
      stop: () => runtime.stop(),
    };
  }

  private delivery(token: string): ReceivedCommand | undefined {
    return this.received.findLast((r) => r.taskToken === token);
  }

  private record(entry: Omit<ReceivedCommand, 'receivedAt'>): ReceivedCommand {
    const recorded = { ...entry, receivedAt: new Date() };
    this.received.push(recorded);
    return recorded;
  }
}

const DISPOSITIONS = { run: 'run', attached: 'attached', replay: 'replayed' } as const;

/** What can be read from a message that is not a valid command, to record it. */
function looseFields(body: string): Omit<ReceivedCommand, 'receivedAt' | 'disposition'> {
  let value: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(body) as unknown;
    if (typeof parsed === 'object' && parsed !== null) value = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: nothing to read; the agent answers nothing and deletes it.
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
