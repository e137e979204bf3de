import { ConflictError, DomainError, ValidationError } from '../errors.js';
import type { OwnerRecord } from './owner-records.js';

/** A shoot, project or internal domain that does not make a legal DNS name for the owner record. */
export class OwnerRecordNameError extends ValidationError {
  constructor(message: string, options?: { field?: string; cause?: unknown }) {
    super(message, { code: 'InvalidOwnerRecordName', ...options });
  }
}

/**
 * A conditional change of the owner record found another value than expected: someone else moved
 * ownership in between. Carries the record as it is now (undefined: it does not exist).
 */
export class OwnerRecordConflictError extends ConflictError<OwnerRecord | undefined> {
  constructor(message: string, options: { current: OwnerRecord | undefined; cause?: unknown }) {
    super(message, { code: 'OwnerRecordConflict', ...options });
  }
}

/** The owner records could not be read or written (throttling, access denied, network). Try again later. */
export class OwnerRecordsUnavailableError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'OwnerRecordsUnavailable', options);
  }
}

/** A wait-for-final timeout shorter than the fence bound, or a fence bound input that makes no sense. */
export class FenceBoundError extends ValidationError {
  constructor(message: string, options?: { field?: string; cause?: unknown }) {
    super(message, { code: 'FenceBoundViolated', ...options });
  }
}
