import { ConflictError, DomainError, NotFoundError } from '../errors.js';

/** The copy waited until its deadline and the source store held no snapshot at all. */
export class NoSnapshotBeforeTimeoutError extends NotFoundError {
  constructor(
    message: string,
    readonly technicalID: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * After a copy, the destination object does not match the source (size or checksum): a torn or
 * concurrent write. Copies are idempotent, so the step may simply run again.
 */
export class CopyVerificationError extends DomainError {
  constructor(
    message: string,
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(message, 'CopyVerificationFailed', options);
  }
}

/** The plan names more objects than one workflow payload can carry. */
export class CopyPlanTooLargeError extends ConflictError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { code: 'CopyPlanTooLarge', ...options });
  }
}
