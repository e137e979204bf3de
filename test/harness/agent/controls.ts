import { COMMAND_FAILURES, type CommandFailureName, type CommandType } from '../../../core/commands/index.js';

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
  private readonly failures = new Map<CommandType, FailureRule>();
  private silenceAfterType: CommandType | undefined;
  private silencedBy: string | undefined;
  /** Extra time before each command's answer (heartbeats keep the task alive meanwhile). */
  delayMs = 0;

  /** Every later command of `type` fails with `error` (retryability as the protocol defines it). */
  failOn(type: CommandType, error: CommandFailureName, options: { message?: string; times?: number } = {}): void {
    if (!(error in COMMAND_FAILURES)) throw new RangeError(`${error} is not a failure name of the command protocol`);
    this.failures.set(type, { error, ...options });
  }

  /** Removes the failure of one type, or all of them. */
  clearFailures(type?: CommandType): void {
    if (type === undefined) this.failures.clear();
    else this.failures.delete(type);
  }

  /** The next command of `type` is answered as usual; every command received after it is ignored. */
  silenceAfter(type: CommandType): void {
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

  decide(command: { type: CommandType; commandId: string }): ControlDecision {
    if (this.silencedBy !== undefined && this.silencedBy !== command.commandId) {
      return { kind: 'ignore', reason: `silent since ${this.silencedBy}` };
    }
    const rule = this.failures.get(command.type);
    if (rule !== undefined) {
      if (rule.times !== undefined) {
        rule.times -= 1;
        if (rule.times <= 0) this.failures.delete(command.type);
      }
      return { kind: 'fail', error: rule.error, message: rule.message ?? `injected ${rule.error} for ${command.type} ${command.commandId}` };
    }
    if (this.silenceAfterType === command.type && this.silencedBy === undefined) {
      // Silent from the next command on; this one still runs (and a redelivery of it is still answered).
      this.silencedBy = command.commandId;
    }
    return { kind: 'run' };
  }
}
