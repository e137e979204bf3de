import { ConflictError, DomainError, NotFoundError, ValidationError } from '../errors.js';

/** An object key or name that is not an etcd-backup-restore v2 snapshot name. */
export class SnapshotNameError extends ValidationError {
  constructor(
    message: string,
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(message, { code: 'InvalidSnapshotName', field: 'key', ...options });
  }
}

/** The store holds no full snapshot to restore from (empty source, or only deltas). */
export class NoFullSnapshotError extends NotFoundError {
  constructor(
    message: string,
    readonly technicalID: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The deltas after the latest full snapshot do not cover every revision: restoring would silently
 * lose the writes in the gap, so the plan refuses instead.
 */
export class RestorePlanGapError extends ConflictError {
  constructor(
    message: string,
    readonly gap: { afterRevision: number; nextStartRevision: number; missingFrom: number; missingTo: number },
    options?: { cause?: unknown },
  ) {
    super(message, { code: 'RestorePlanGap', ...options });
  }
}

/** The plan ends before the revision the caller expects (for example the final snapshot's). */
export class RestorePlanIncompleteError extends ConflictError {
  constructor(
    message: string,
    readonly revisions: { expected: number; available: number },
    options?: { cause?: unknown },
  ) {
    super(message, { code: 'RestorePlanIncomplete', ...options });
  }
}

/** A key the store does not hold. */
export class SnapshotNotFoundError extends NotFoundError {
  constructor(
    message: string,
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The store could not be reached or refused the call (missing bucket, access denied, throttling,
 * network). `reason` lets callers tell "try again" from "fix the configuration".
 */
export class SnapshotStoreError extends DomainError {
  constructor(
    message: string,
    readonly reason: SnapshotStoreFailure,
    options?: { cause?: unknown },
  ) {
    super(message, `SnapshotStore${reason}`, options);
  }
}

export type SnapshotStoreFailure = 'Unavailable' | 'MissingBucket' | 'AccessDenied' | 'Throttled';
