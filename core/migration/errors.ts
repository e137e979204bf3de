import { DomainError } from '../errors.js';

/** A flow definition that cannot run: a duplicate step, an unknown or later dependency. Thrown when the flow is built. */
export class FlowDefinitionError extends DomainError {
  constructor(message: string) {
    super(message, 'InvalidFlow');
  }
}

/**
 * A transition the record does not allow now: a step out of order, a switch from a step that is not on the
 * good path, a resume of a migration that has not failed. Task Lambdas throw it by name; it is not retried.
 */
export class MigrationTransitionError extends DomainError {
  constructor(
    message: string,
    readonly details: { migrationId: string; step?: string; state?: string },
    options?: { cause?: unknown },
  ) {
    super(message, 'InvalidMigrationTransition', options);
  }
}

/**
 * Mode auto, a good-path step that needs the source's agent, and the source's lease has expired: the step
 * gives up at once and the flow switches to the bad path instead of waiting for the command timeout.
 * The state machine catches it by this name (`SourceLeaseExpired`), as it catches States.Timeout there.
 */
export class SourceLeaseExpiredError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'SourceLeaseExpired', options);
  }
}
