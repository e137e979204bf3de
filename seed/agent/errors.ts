import type { CommandFailureName } from '../../core/commands/index.js';

/** A command the runtime refuses or fails, by its protocol failure name (the agent sends it as SendTaskFailure). */
export class AgentCommandError extends Error {
  constructor(
    readonly failure: CommandFailureName,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AgentCommandError';
  }
}

/** The agent or its runtime was configured in a way that cannot work; raised before anything starts. */
export class SeedAgentConfigError extends Error {
  constructor(
    message: string,
    readonly field: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SeedAgentConfigError';
  }
}

/** A process of the local runtime (sidecar, kube-apiserver stand-in) did not start or stop as asked. */
export class LocalProcessError extends Error {
  constructor(
    message: string,
    readonly technicalID: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LocalProcessError';
  }
}

/** A restore ahead's catch-up failed; `refused` names why when the snapshots themselves do not restore (not worth a restore from scratch). */
export class CatchUpError extends Error {
  constructor(
    message: string,
    readonly refused?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CatchUpError';
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
