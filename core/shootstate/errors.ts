import { ConflictError, DomainError, NotFoundError } from '../errors.js';

/** A conditional save found another version than expected (or a ShootState where none was expected). */
export class ShootStateConflictError extends ConflictError<number | undefined> {
  constructor(
    message: string,
    readonly details: { project: string; name: string; expectedVersion: number; currentVersion: number | undefined },
    options?: { cause?: unknown },
  ) {
    super(message, { code: 'ShootStateConflict', current: details.currentVersion, ...options });
  }
}

/** A ShootState that cannot be kept in one item even with every state in the bucket. */
export class ShootStateTooLargeError extends DomainError {
  constructor(
    message: string,
    readonly size: number,
    options?: { cause?: unknown },
  ) {
    super(message, 'ShootStateTooLarge', options);
  }
}

/** Extension resources that cannot be collected (not migrated yet, or duplicated). */
export class ShootStateCollectError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'ShootStateIncomplete', options);
  }
}

export type BlobStoreFailure = 'Unavailable' | 'MissingBucket' | 'AccessDenied' | 'Throttled';

/** The blob store could not be used; `reason` tells "try again" from "fix the configuration". */
export class BlobStoreError extends DomainError {
  constructor(
    message: string,
    readonly reason: BlobStoreFailure,
    options?: { cause?: unknown },
  ) {
    super(message, `BlobStore${reason}`, options);
  }
}

export class BlobNotFoundError extends NotFoundError {
  constructor(
    message: string,
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The bytes read do not hash to the referenced sha256 (or have another size): never used, never retried into success. */
export class BlobIntegrityError extends DomainError {
  constructor(
    message: string,
    readonly details: {
      key: string;
      expectedSha256: string;
      actualSha256: string;
      expectedSize?: number;
      actualSize: number;
    },
    options?: { cause?: unknown },
  ) {
    super(message, 'BlobIntegrity', options);
  }
}

/** The store failed (for the failing implementation and for adapters' transient errors). */
export class ShootStateStoreError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'ShootStateStoreUnavailable', options);
  }
}
