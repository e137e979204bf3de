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
