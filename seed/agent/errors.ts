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

/** A component did not get where a flow waited for it (serving, or gone) in time. */
export class ComponentWaitError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ComponentWaitError';
  }
}

/** A restore ahead's catch-up failed; `refused` names why when the snapshots themselves do not restore (not worth a restore from scratch). */
export class CatchUpError extends Error {
  constructor(
    message: string,
    readonly refused?: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(message, options);
    this.name = 'CatchUpError';
    this.details = options?.details;
  }

  /** What the sidecar said of its refusal (a digest mismatch: both digests). */
  readonly details: Record<string, unknown> | undefined;
}

/**
 * A sidecar refused to serve what it restored at its start (`restore-refused` on its stdout, then exit):
 * the snapshots do not restore to the revision or to the key space the source named. Not a runtime fault:
 * another attempt restores the same snapshots.
 */
export class RestoreRefusedError extends Error {
  constructor(
    message: string,
    readonly refused: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'RestoreRefusedError';
  }
}

/** The store of the plane records could not be read or written (`FailingPlaneStore`, for fault tests). */
export class PlaneStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PlaneStoreError';
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
