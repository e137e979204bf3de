import type { GardenClient } from '../../adapters/http/garden-client.js';
import { buildCommand } from '../../core/commands/build.js';
import {
  commandFailure,
  commandSuccess,
  parseFailureCause,
  readCommand,
  type SeedCommand,
} from '../../core/commands/index.js';
import type { Condition } from '../../core/model/common.js';
import type { HostedControlPlane } from '../../core/model/seed.js';
import { AgentCommandError, asError, messageOf, SeedAgentConfigError } from './errors.js';
import type { AgentProgress } from './health.js';
import type { CommandInbox, InboxMessage } from './inbox.js';
import { CommandLedger, type CommandAnswer } from './ledger.js';
import type { SeedRuntime } from './runtime.js';
import { sendAnswer, type TaskAnswers } from './task-answers.js';

export interface SeedAgentOptions {
  seed: string;
  garden: GardenClient;
  /** The seed's command queue, once the agent knows its URL (SQS in production, in memory in tests). */
  inbox: (queueUrl: string) => CommandInbox;
  answers: TaskAnswers;
  /** Built once the first heartbeat told the agent its identity (the owner records' value). */
  runtime: (context: { identity: string }) => SeedRuntime;
  /** Default: learned from the first heartbeat's answer (`commandQueueUrl`). */
  queueUrl?: string;
  /** Default 10 s. */
  heartbeatIntervalMs?: number;
  /** Extra conditions; GardenletReady and BackupBucketsReady are the agent's own. */
  conditions?: () => Condition[];
  /** Whether the seed's backup bucket answers; default: assumed. */
  backupBucketReady?: () => Promise<boolean>;
  /**
   * One structured entry per event. Command entries carry `event: 'command'`, `commandId` and the
   * ledger's `decision` (run, attached, replay); test harnesses read them to see what the agent did.
   */
  log?: (entry: Record<string, unknown>) => void;
}

/**
 * The seed agent (gardenlet's role in a seed): heartbeats the seed with its conditions and hosted
 * control planes, long-polls its FIFO command queue, runs each command once (ledger by commandId; one at
 * a time per shoot, shoots in parallel), calls SendTaskHeartbeat while it works and answers the task
 * token(s). A message is deleted once accepted: redeliveries are the ledger's business, not SQS's.
 */
export class SeedAgent {
  identity: string | undefined;
  queueUrl: string | undefined;
  /** Failures of the agent's own loops (receive, heartbeat, answer), for tests that assert none. */
  readonly errors: Error[] = [];
  private runtimeInstance: SeedRuntime | undefined;
  private readonly ledger = new CommandLedger();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly running = new Map<string, { tokens: Set<string>; aborts: AbortController }>();
  /** Leftovers being removed, so that a heartbeat during the removal does not queue it again. */
  private readonly releasing = new Set<string>();
  /** When a command of each shoot last arrived (`performance.now()`): a release older than it waits. */
  private readonly commandSeenAt = new Map<string, number>();
  private active = false;
  private poll: Promise<void> | undefined;
  private abort: AbortController | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private lastHeartbeat: Promise<void> = Promise.resolve();
  private heartbeating = false;
  /** What the health endpoint reads (`progress()`), in `performance.now()` ms. */
  private heartbeatRoundAt: number | undefined;
  private heartbeatAcceptedAt: number | undefined;
  private pollRound: { waitMs: number; at: number } | undefined;
  private adoption: AgentProgress['adoption'] = { state: 'pending' };
  private readonly log: (entry: Record<string, unknown>) => void;

  constructor(private readonly options: SeedAgentOptions) {
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(options.seed))
      throw new SeedAgentConfigError(`"${options.seed}" is not a seed name`, 'seed');
    this.queueUrl = options.queueUrl;
    this.log = options.log ?? (() => undefined);
  }

  get seed(): string {
    return this.options.seed;
  }

  get runtime(): SeedRuntime {
    if (this.runtimeInstance === undefined)
      throw new SeedAgentConfigError('the agent has not started: its runtime needs the seed identity', 'runtime');
    return this.runtimeInstance;
  }

  /** Heartbeats once (learning identity and queue), then polls and heartbeats until stop(). */
  async start(): Promise<void> {
    if (this.active) return;
    // The start is the heartbeat loop's first round: a start that hangs is a loop that does not go round.
    this.heartbeatRoundAt = performance.now();
    await this.heartbeat({ required: true });
    if (this.identity === undefined)
      throw new SeedAgentConfigError(
        `the heartbeat of seed ${this.seed} returned no identity; is it registered?`,
        'seed',
      );
    if (this.queueUrl === undefined)
      throw new SeedAgentConfigError(
        `seed ${this.seed} has no command queue (commandQueueUrl); is it registered?`,
        'queueUrl',
      );
    this.runtimeInstance ??= this.options.runtime({ identity: this.identity });
    await this.adoptRecorded();
    this.startListening(this.queueUrl);
    this.log({ event: 'started', seed: this.seed, identity: this.identity, queueUrl: this.queueUrl });
  }

  /**
   * Stops receiving and heartbeating while the runtime's processes (etcd with its sidecar) keep running:
   * what a frozen or partitioned agent looks like to the garden. `resume()` picks up again.
   */
  async pause(): Promise<void> {
    if (!this.active) return;
    await this.stopListening();
    await this.lastHeartbeat;
  }

  async resume(): Promise<void> {
    if (this.active || this.runtimeInstance === undefined || this.queueUrl === undefined) return;
    this.startListening(this.queueUrl);
    // A woken agent says so at once rather than one interval later.
    this.lastHeartbeat = this.heartbeat({ required: false });
  }

  /** Receives commands from the seed's queue and heartbeats every interval, until stopListening(). */
  private startListening(queueUrl: string): void {
    this.active = true;
    this.abort = new AbortController();
    this.poll = this.pollLoop(this.options.inbox(queueUrl), this.abort.signal);
    this.heartbeatTimer = setInterval(() => {
      // One heartbeat at a time, as a kubelet's node status loop: a garden that answers slower than the
      // interval (a cold Lambda on a loaded machine) gets the next one when it answered, not a pile of them,
      // each of which would start another worker and slow the garden further.
      if (this.heartbeating) return;
      this.heartbeating = true;
      this.lastHeartbeat = this.heartbeat({ required: false }).finally(() => (this.heartbeating = false));
    }, this.heartbeatIntervalMs);
  }

  /** No more heartbeats and no more receiving; commands already running go on. */
  private async stopListening(): Promise<void> {
    this.active = false;
    clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    this.abort?.abort();
    await this.poll;
    this.poll = undefined;
    this.pollRound = undefined;
  }

  /** Stops receiving and heartbeating, aborts running commands, waits for them, then stops every process of the runtime. */
  async stop(): Promise<void> {
    await this.stopListening();
    for (const r of this.running.values()) r.aborts.abort();
    await this.idle();
    await this.lastHeartbeat;
    await this.runtimeInstance?.stop();
    this.log({ event: 'stopped', seed: this.seed });
  }

  /** Waits until every accepted command has finished. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /**
   * When the loops last went round, what the garden last accepted and how far adoption got: what the
   * health endpoint answers from (seed/agent/health.ts).
   */
  progress(): AgentProgress {
    const intervalMs = this.heartbeatIntervalMs;
    return {
      leaseMs: leaseDuration(intervalMs) * 1_000,
      heartbeat:
        this.heartbeatRoundAt === undefined
          ? undefined
          : { intervalMs, lastRoundAt: this.heartbeatRoundAt, lastAcceptedAt: this.heartbeatAcceptedAt },
      poll: this.pollRound && { waitMs: this.pollRound.waitMs, lastRoundAt: this.pollRound.at },
      adoption: this.adoption,
    };
  }

  private get heartbeatIntervalMs(): number {
    return this.options.heartbeatIntervalMs ?? 10_000;
  }

  /** Sends one seed heartbeat now (with the runtime's observations, when it runs). */
  async heartbeat(options: { required?: boolean } = {}): Promise<void> {
    // The lease runs from when the garden received it, no earlier than this.
    const sentAt = performance.now();
    try {
      const controlPlanes: HostedControlPlane[] = this.runtimeInstance
        ? await this.runtimeInstance.controlPlanes()
        : [];
      const res = await this.options.garden.request<{
        identity?: string;
        commandQueueUrl?: string;
        release?: { technicalID: string; reason: string }[];
      }>('POST', `/seeds/${this.seed}/heartbeat`, {
        body: {
          conditions: await this.conditions(),
          controlPlanes,
          capabilities: this.runtimeInstance?.capabilities?.() ?? [],
          agentVersion: 'seed-agent/local',
          leaseDurationSeconds: leaseDuration(this.heartbeatIntervalMs),
        },
      });
      if (res.status !== 200)
        throw new Error(`heartbeat of seed ${this.seed} answered ${res.status}: ${JSON.stringify(res.body)}`);
      this.heartbeatAcceptedAt = sentAt;
      this.identity ??= res.body.identity;
      this.queueUrl ??= res.body.commandQueueUrl;
      if (res.body.release) this.releaseLeftovers(res.body.release, controlPlanes, sentAt);
    } catch (error) {
      if (options.required) throw error;
      this.errors.push(asError(error));
      this.log({ event: 'heartbeat-failed', error: messageOf(error) });
    } finally {
      this.heartbeatRoundAt = performance.now();
    }
  }

  private async conditions(): Promise<Condition[]> {
    const bucketReady = this.options.backupBucketReady
      ? await this.options.backupBucketReady().catch(() => false)
      : true;
    return [
      {
        type: 'GardenletReady',
        status: 'True',
        reason: 'AgentRunning',
        message: 'the seed agent is running and polling its command queue',
      },
      {
        type: 'BackupBucketsReady',
        status: bucketReady ? 'True' : 'False',
        reason: bucketReady ? 'BucketReachable' : 'BucketUnreachable',
        message: bucketReady ? 'the backup bucket answers' : 'the backup bucket does not answer',
      },
      ...(this.options.conditions?.() ?? []),
    ];
  }

  private async pollLoop(inbox: CommandInbox, signal: AbortSignal): Promise<void> {
    while (this.active) {
      // A round begun is the last one finished, its receive answered or failed.
      this.pollRound = { waitMs: inbox.waitMs, at: performance.now() };
      let messages: InboxMessage[];
      try {
        messages = await inbox.receive(signal);
      } catch (error) {
        if (signal.aborted) return;
        this.errors.push(asError(error));
        await sleep(500);
        continue;
      }
      for (const message of messages) await this.accept(inbox, message);
    }
  }

  private async accept(inbox: CommandInbox, message: InboxMessage): Promise<void> {
    const { command, invalid } = readCommand(message.body, { seed: this.seed });
    await this.deleteMessage(inbox, message);
    if (invalid) {
      const token = looseToken(message.body);
      this.log({ event: 'invalid-command', error: invalid.message });
      if (token)
        await this.answer(token, {
          kind: 'failure',
          ...commandFailure({ error: 'InvalidCommand', message: invalid.message, seed: this.seed }),
        });
      return;
    }
    if (command.type === 'check-owner' || command.type === 'hand-over') return this.notice(command);
    this.commandSeenAt.set(command.shoot.technicalID, performance.now());
    const decision = this.ledger.begin(command.commandId, command.taskToken);
    this.log({
      event: 'command',
      type: command.type,
      commandId: command.commandId,
      shoot: command.shoot.technicalID,
      decision: decision.action,
    });
    if (decision.action === 'replay') {
      if (command.taskToken) await this.answer(command.taskToken, decision.answer);
      return;
    }
    if (decision.action === 'attached') {
      if (command.taskToken) this.running.get(command.commandId)?.tokens.add(command.taskToken);
      return;
    }
    this.schedule(command);
  }

  /**
   * The control planes a previous agent left (a restart after a crash or a kill): each is adopted in its
   * shoot's chain, ahead of any command the queue holds for it, while the agent already heartbeats and
   * takes commands for other shoots. One that cannot be started stays known, reported not ready, for
   * the next Reconcile to retry.
   */
  private async adoptRecorded(): Promise<void> {
    const runtime = this.runtime;
    this.adoption = { state: 'pending' };
    if (!runtime.recorded || !runtime.adopt) {
      this.adoption = { state: 'settled' };
      return;
    }
    let recorded: string[];
    try {
      recorded = await runtime.recorded();
    } catch (error) {
      this.adoption = { state: 'failed' };
      this.log({ event: 'adopt-failed', error: messageOf(error) });
      return;
    }
    this.adoption = { state: 'running', planes: recorded.length };
    const adopted = recorded.map((id) =>
      this.chain(id, async () => {
        try {
          if (await runtime.adopt!(id)) this.log({ event: 'adopted', shoot: id });
        } catch (error) {
          this.log({ event: 'adopt-failed', shoot: id, error: messageOf(error) });
        }
      }),
    );
    void Promise.allSettled(adopted).then(() => (this.adoption = { state: 'settled' }));
  }

  /** One command at a time per shoot, in queue order; shoots run in parallel. */
  private schedule(command: SeedCommand, after?: () => void): void {
    this.running.set(command.commandId, {
      tokens: new Set(command.taskToken ? [command.taskToken] : []),
      aborts: new AbortController(),
    });
    this.chain(command.shoot.technicalID, () => this.run(command), after);
  }

  /** Runs a job after every job queued before for the same shoot; resolves when it has. */
  private chain(id: string, job: () => Promise<void>, after?: () => void): Promise<void> {
    const next = (this.chains.get(id) ?? Promise.resolve()).then(job);
    this.chains.set(id, next);
    this.inFlight.add(next);
    void next.finally(() => {
      this.inFlight.delete(next);
      if (this.chains.get(id) === next) this.chains.delete(id);
      after?.();
    });
    return next;
  }

  /**
   * A notice: an owner change (the sidecars check the owner record now) or a hand-over (the load balancer
   * passes the shoot's new connections on to where it moved). Not queued behind the shoot's other commands
   * and not in the ledger: it changes nothing the agent keeps, a repeat only does the same again, and it is
   * never answered (no task token).
   */
  private notice(command: Extract<SeedCommand, { type: 'check-owner' | 'hand-over' }>): void {
    const event = command.type === 'check-owner' ? 'owner-notice' : 'hand-over';
    const detail =
      command.type === 'check-owner' ? { change: command.change } : { target: command.target, until: command.until };
    const run = this.runtime
      .execute(command)
      .then((result) =>
        this.log({ event, shoot: command.shoot.technicalID, commandId: command.commandId, ...detail, ...result }),
      )
      .catch((error: unknown) =>
        this.log({
          event: `${event}-failed`,
          shoot: command.shoot.technicalID,
          commandId: command.commandId,
          error: messageOf(error),
        }),
      );
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }

  /**
   * The garden released leftovers (control planes this seed no longer owns, whose shoots are placed
   * elsewhere or gone): each is deleted like after a migration (backups and external resources stay),
   * and only if this seed's own owner check still says `not-owner` (the runtime refuses otherwise).
   */
  private releaseLeftovers(
    release: readonly { technicalID: string; reason: string }[],
    planes: readonly HostedControlPlane[],
    observedAt: number,
  ): void {
    if (!this.active) return;
    for (const r of release) {
      const plane = planes.find((p) => p.technicalID === r.technicalID);
      if (!plane?.shoot || this.releasing.has(r.technicalID)) continue;
      // The release judged the plane as the heartbeat saw it; a command since (a migration back here that
      // restores etcd ahead, not owning the shoot yet) may have made it one the garden would keep. The next
      // heartbeat reports it as it is now.
      if ((this.commandSeenAt.get(r.technicalID) ?? -Infinity) >= observedAt) {
        this.log({ event: 'leftover-release-deferred', shoot: r.technicalID, reason: 'a command since the heartbeat' });
        continue;
      }
      this.releasing.add(r.technicalID);
      const command = buildCommand<'delete-control-plane'>(
        {
          shoot: { ...plane.shoot, technicalID: r.technicalID },
          seed: this.seed,
          commandId: `release/${r.technicalID}/${Date.now()}`,
          issuedAt: new Date(),
        },
        { type: 'delete-control-plane', keepBackups: true, keepExternalResources: true, ifNotOwner: true },
      );
      this.log({ event: 'leftover-release', shoot: r.technicalID, reason: r.reason, commandId: command.commandId });
      this.ledger.begin(command.commandId, undefined);
      this.schedule(command, () => this.releasing.delete(r.technicalID));
    }
  }

  private async run(command: SeedCommand): Promise<void> {
    const state = this.running.get(command.commandId)!;
    // Heartbeat every token attached so far: a retried step's new token must stay alive too.
    const beat = () => {
      for (const token of state.tokens)
        void this.options.answers
          .heartbeat(token)
          .catch((error: unknown) =>
            this.log({ event: 'task-heartbeat-refused', commandId: command.commandId, error: messageOf(error) }),
          );
    };
    const timer = command.heartbeatSeconds ? setInterval(beat, command.heartbeatSeconds * 1000) : undefined;
    let answer: CommandAnswer;
    try {
      const result = await this.runtime.execute(command, state.aborts.signal);
      answer = { kind: 'success', output: commandSuccess(command, result as never, new Date()) };
    } catch (error) {
      const failure =
        error instanceof AgentCommandError
          ? commandFailure({
              error: error.failure,
              message: error.message,
              seed: this.seed,
              command,
              ...(error.details ? { details: error.details } : {}),
            })
          : commandFailure({
              error: 'RuntimeUnavailable',
              message: `the runtime failed: ${messageOf(error)}`,
              seed: this.seed,
              command,
            });
      answer = { kind: 'failure', ...failure };
    } finally {
      clearInterval(timer);
      this.running.delete(command.commandId);
    }
    this.log({
      event: 'command-done',
      type: command.type,
      commandId: command.commandId,
      outcome: answer.kind,
      // Why, too: the seed's own log is where an operator looks first.
      ...(answer.kind === 'failure' ? { error: answer.error, message: parseFailureCause(answer.cause)?.message } : {}),
    });
    // What a restore started is reported before the garden hears it is done: the migration's next step
    // (the API record's switch) reads the seed's report, and would otherwise wait up to an interval for it.
    if (answer.kind === 'success' && (command.type === 'restore' || command.type === 'live-walk'))
      await this.reportNow();
    const tokens = this.ledger.finish(command.commandId, answer);
    for (const token of new Set([...tokens, ...state.tokens])) await this.answer(token, answer);
  }

  /** One heartbeat now, after the one in flight (whose observations may be older than the caller's change). */
  private async reportNow(): Promise<void> {
    while (this.heartbeating) await this.lastHeartbeat;
    if (!this.active) return;
    this.heartbeating = true;
    this.lastHeartbeat = this.heartbeat({ required: false }).finally(() => (this.heartbeating = false));
    await this.lastHeartbeat;
  }

  private async answer(token: string, answer: CommandAnswer): Promise<void> {
    try {
      await sendAnswer(this.options.answers, token, answer);
    } catch (error) {
      // TaskTimedOut or InvalidToken: the garden moved on, which the protocol allows.
      this.log({ event: 'answer-refused', error: messageOf(error) });
    }
  }

  private async deleteMessage(inbox: CommandInbox, message: InboxMessage): Promise<void> {
    try {
      await inbox.delete(message);
    } catch (error) {
      // A failed delete means a redelivery later, which the ledger answers without running again.
      this.errors.push(asError(error));
    }
  }
}

/** The task token of a message that is not a valid command, so that its task fails at once instead of timing out. */
function looseToken(body: string): string | undefined {
  try {
    const value = JSON.parse(body) as { taskToken?: unknown } | null;
    return typeof value?.taskToken === 'string' ? value.taskToken : undefined;
  } catch {
    // Not JSON: no token to answer.
    return undefined;
  }
}

/** A heartbeat holds for three intervals (docs/design.md section 11): one lost heartbeat does not make the seed unready. */
function leaseDuration(intervalMs: number): number {
  return Math.max(1, Math.ceil((3 * intervalMs) / 1_000));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
