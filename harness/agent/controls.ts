import { COMMAND_FAILURES, type CommandFailureName, type CommandType } from '../../core/commands/index.js';

/**
 * What the controls tell apart: a command type, or `restore-ahead`, the pre-copy's restore ahead (a `restore`
 * with `etcd.ahead`), so that a test can fail or silence the one without the migration's normal restores.
 */
export type ControlledKind = CommandType | 'restore-ahead';

/** The kind the controls see a command as. */
export function controlledKind(command: { type: CommandType; etcd?: { ahead?: boolean } }): ControlledKind {
  return command.type === 'restore' && command.etcd?.ahead === true ? 'restore-ahead' : command.type;
}

/** What the test wants done with one received command, before the agent looks at it. */
export type ControlDecision =
  /** Received, deleted, never answered: a seed that stopped talking to the garden. */
  | { kind: 'ignore'; reason: string }
  /** Answered with SendTaskFailure and this error, without running anything. */
  | { kind: 'fail'; error: CommandFailureName; message: string }
  | { kind: 'run' };

export interface FailureRule {
  error: CommandFailureName;
  message?: string;
  /** How many commands it fails before it expires; undefined: until cleared. */
  times?: number;
}

/**
 * The fault controls of the test agent, as pure state: which commands fail with which error, and after
 * which command the agent goes silent. The agent asks `decide` once per received command.
 */
export class AgentControls {
  private readonly failures = new Map<ControlledKind, FailureRule>();
  private silenceAfterType: ControlledKind | undefined;
  private silencedBy: string | undefined;
  /** Extra time before each command's answer (heartbeats keep the task alive meanwhile). */
  delayMs = 0;

  /** Every later command of `type` fails with `error` (retryability as the protocol defines it). */
  failOn(type: ControlledKind, error: CommandFailureName, options: { message?: string; times?: number } = {}): void {
    if (!(error in COMMAND_FAILURES)) throw new RangeError(`${error} is not a failure name of the command protocol`);
    this.failures.set(type, { error, ...options });
  }

  /** Removes the failure of one type, or all of them. */
  clearFailures(type?: ControlledKind): void {
    if (type === undefined) this.failures.clear();
    else this.failures.delete(type);
  }

  /** The next command of `type` is answered as usual; every command received after it is ignored. */
  silenceAfter(type: ControlledKind): void {
    this.silenceAfterType = type;
  }

  /** Answers again (after `silenceAfter` took effect). */
  unsilence(): void {
    this.silenceAfterType = undefined;
    this.silencedBy = undefined;
  }

  /** The command id after which the agent went silent, if it has. */
  get silenced(): string | undefined {
    return this.silencedBy;
  }

  decide(command: { type: CommandType; commandId: string; etcd?: { ahead?: boolean } }): ControlDecision {
    if (this.silencedBy !== undefined && this.silencedBy !== command.commandId) {
      return { kind: 'ignore', reason: `silent since ${this.silencedBy}` };
    }
    const kind = controlledKind(command);
    const rule = this.failures.get(kind);
    if (rule !== undefined) {
      if (rule.times !== undefined) {
        rule.times -= 1;
        if (rule.times <= 0) this.failures.delete(kind);
      }
      return {
        kind: 'fail',
        error: rule.error,
        message: rule.message ?? `injected ${rule.error} for ${kind} ${command.commandId}`,
      };
    }
    if (this.silenceAfterType === kind && this.silencedBy === undefined) {
      // Silent from the next command on; this one still runs (and a redelivery of it is still answered).
      this.silencedBy = command.commandId;
    }
    return { kind: 'run' };
  }
}
