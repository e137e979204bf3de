import { ConflictError, DomainError, ValidationError } from '../errors.js';
import type { ApiRecord } from './record.js';

/** A shoot, project or external domain that does not make a legal DNS name for the API domain. */
export class ApiDomainNameError extends ValidationError {
  constructor(message: string, options?: { field?: string; cause?: unknown }) {
    super(message, { code: 'InvalidApiDomainName', ...options });
  }
}

/** A load balancer address that is neither an IP address nor a host name. */
export class ApiAddressError extends ValidationError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { code: 'InvalidApiAddress', field: 'externalUrl', ...options });
  }
}

/**
 * A conditional change of the API record found another target than expected: someone else changed it
 * in between. Carries the record as it is now (undefined: it does not exist).
 */
export class ApiRecordConflictError extends ConflictError<ApiRecord | undefined> {
  constructor(message: string, options: { current: ApiRecord | undefined; cause?: unknown }) {
    super(message, { code: 'ApiRecordConflict', ...options });
  }
}

/** The API records could not be read or written (throttling, access denied, network). Try again later. */
export class ApiRecordsUnavailableError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'ApiRecordsUnavailable', options);
  }
}

/**
 * The destination does not serve the control plane yet (no fresh heartbeat reports it active with a load
 * balancer address): the switch waits. The state machine retries this error; it never means "switch anyway".
 */
export class DestinationNotServingError extends DomainError {
  constructor(message: string) {
    super(message, 'DestinationNotServing');
  }
}
