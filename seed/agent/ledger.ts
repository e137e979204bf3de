import type { CommandFailureName, CommandSuccess } from '../../core/commands/index.js';

/** What the agent answered a command: the SendTaskSuccess output, or the SendTaskFailure error and cause. */
export type CommandAnswer =
  { kind: 'success'; output: CommandSuccess } | { kind: 'failure'; error: CommandFailureName; cause: string };

/** What to do with a delivery, decided by the ledger. */
export type LedgerDecision =
  /** First delivery (or a repeat after a failure): execute it. */
  | { action: 'run' }
  /** The command is running: the token was attached and is answered when it finishes. */
  | { action: 'attached' }
  /** The command succeeded before: answer this token with the recorded success. */
  | { action: 'replay'; answer: CommandAnswer };

type Entry = { state: 'running'; tokens: string[] } | { state: 'succeeded'; answer: CommandAnswer };

/**
 * The agent's record of commands by `commandId` (docs/command-protocol.md, "Idempotency"): a redelivered
 * or retried command is never executed twice while it runs or after it succeeded. A failure is not kept:
 * the migration builds command ids as `<migrationId>/<step>` and keeps them when it is resumed, so a
 * recorded failure would fail every resume; the operations are idempotent (the annotation stays on a
 * failed extension), so running a failed command again is what a retry means.
 */
export class CommandLedger {
  private readonly entries = new Map<string, Entry>();

  /** Registers a delivery; `token` is its task token (absent for fire-and-forget commands). */
  begin(commandId: string, token: string | undefined): LedgerDecision {
    const entry = this.entries.get(commandId);
    if (entry?.state === 'succeeded') return { action: 'replay', answer: entry.answer };
    if (entry?.state === 'running') {
      if (token !== undefined && !entry.tokens.includes(token)) entry.tokens.push(token);
      return { action: 'attached' };
    }
    this.entries.set(commandId, { state: 'running', tokens: token === undefined ? [] : [token] });
    return { action: 'run' };
  }

  /** Records the outcome; returns every token waiting for it (the first delivery's and those attached since). */
  finish(commandId: string, answer: CommandAnswer): string[] {
    const entry = this.entries.get(commandId);
    const tokens = entry?.state === 'running' ? entry.tokens : [];
    if (answer.kind === 'success') this.entries.set(commandId, { state: 'succeeded', answer });
    else this.entries.delete(commandId);
    return tokens;
  }

  /** The recorded success of a command, if any. */
  outcome(commandId: string): CommandAnswer | undefined {
    const entry = this.entries.get(commandId);
    return entry?.state === 'succeeded' ? entry.answer : undefined;
  }

  running(commandId: string): boolean {
    return this.entries.get(commandId)?.state === 'running';
  }
}
