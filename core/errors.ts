/**
 * Domain errors. Handlers map them to HTTP status codes; task Lambdas throw them by name so that
 * the state machines' Retry and Catch clauses can tell "not found" from "try again".
 */
export class DomainError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown; field?: string },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.field = options?.field;
  }
  readonly field: string | undefined;
}

/** The request itself is malformed: bad JSON, wrong types, unknown fields, bad names. HTTP 400. */
export class ValidationError extends DomainError {
  constructor(message: string, options?: { field?: string; code?: string; cause?: unknown }) {
    super(message, options?.code ?? 'Invalid', options);
  }
}

/** HTTP 404. */
export class NotFoundError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'NotFound', options);
  }
}

/** A concurrent change, a stale resourceVersion, or a state that forbids the operation now. HTTP 409. */
export class ConflictError<T = unknown> extends DomainError {
  constructor(message: string, options?: { code?: string; cause?: unknown; current?: T; field?: string }) {
    super(message, options?.code ?? 'Conflict', options);
    this.current = options?.current;
  }
  /** The record as it is now, when the store returned it (ALL_OLD on a failed condition). */
  readonly current: T | undefined;
}

/** The request is well formed but an admission rule rejects it. HTTP 422. */
export class AdmissionError extends DomainError {
  constructor(message: string, options?: { field?: string; code?: string; cause?: unknown }) {
    super(message, options?.code ?? 'Forbidden', options);
  }
}

/**
 * The operation could not complete now for reasons that are not the client's: an unconditional write that
 * kept colliding with concurrent writes past its retry budget. HTTP 503 with Retry-After; safe to retry.
 */
export class UnavailableError extends DomainError {
  constructor(message: string, options?: { code?: string; cause?: unknown }) {
    super(message, options?.code ?? 'Unavailable', options);
  }
}

/** The caller may not do this (its identity does not allow the operation on this resource). HTTP 403. */
export class ForbiddenError extends DomainError {
  constructor(message: string, options?: { code?: string; cause?: unknown }) {
    super(message, options?.code ?? 'Forbidden', options);
  }
}
