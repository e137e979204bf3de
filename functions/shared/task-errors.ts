import type middy from '@middy/core';
import { ZodError } from 'zod';
import { AdmissionError, ConflictError, NotFoundError, ValidationError } from '../../core/errors.js';
import {
  ApiRecordConflictError,
  ApiRecordsUnavailableError,
  DestinationNotServingError,
} from '../../core/dns/index.js';
import {
  FenceBoundError,
  OwnerRecordConflictError,
  OwnerRecordsUnavailableError,
  OwnershipAssertionError,
} from '../../core/ownership/index.js';
import {
  CopyPlanTooLargeError,
  CopyVerificationError,
  NoFullSnapshotError,
  NoSnapshotBeforeTimeoutError,
  RestorePlanGapError,
  RestorePlanIncompleteError,
  SnapshotNameError,
  SnapshotNotFoundError,
  SnapshotStoreError,
} from '../../core/snapshots/index.js';
import { SourceLeaseExpiredError } from '../../core/migration/errors.js';
import { SecretsUnavailableError } from '../../core/shootstate/sealed.js';
import { logger } from './logger.js';

/**
 * The error names task Lambdas fail with. Step Functions matches them in Retry and Catch, so they are
 * part of the state machines' contract: keep `state-machines/*.asl.json` in step with this list.
 */
export const TRANSIENT_TASK_ERRORS = [
  'SnapshotStoreThrottled',
  'SnapshotStoreUnavailable',
  'CopyVerificationFailed',
  'OwnerRecordsUnavailable',
  'ApiRecordsUnavailable',
] as const;
export const PERMANENT_TASK_ERRORS = [
  'InvalidInput',
  'FenceBoundViolated',
  'SnapshotStoreMissingBucket',
  'SnapshotStoreAccessDenied',
  'EmptySource',
  'NoSnapshotBeforeTimeout',
  'RestorePlanGap',
  'RestorePlanIncomplete',
  'CopyPlanTooLarge',
  'SourceObjectMissing',
  'OwnershipAssertionFailed',
  'OwnerRecordConflict',
  'ApiRecordConflict',
  // Any other domain error, by its family: the message says which.
  'NotFound',
  'Conflict',
  'Refused',
] as const;
/**
 * Errors that end a good-path step early so that the flow switches to the bad path; only the states of the
 * source's seed steps (MigrateExtensions, DeleteSourceControlPlane) can fail with them, and they catch them;
 * and the live path's RetireSource, which a lost source skips.
 */
export const SWITCH_TASK_ERRORS = ['SourceLeaseExpired'] as const;
/**
 * Errors that mean "not yet": the step waits for something outside the garden (the destination to serve)
 * and is retried for a bounded time; only the state of that step retries and catches them.
 */
export const WAIT_TASK_ERRORS = ['DestinationNotServing'] as const;
/**
 * The shoot's secrets could not be sealed for the seed (KMS throttled or failed) while a seed step's command
 * was built: the command protocol's own retryable name for an unreadable ShootState, which the states that
 * send commands already retry and catch.
 */
export const SECRETS_TASK_ERRORS = ['ShootStateUnavailable'] as const;
export type TaskErrorName =
  | (typeof SECRETS_TASK_ERRORS)[number]
  | (typeof TRANSIENT_TASK_ERRORS)[number]
  | (typeof PERMANENT_TASK_ERRORS)[number]
  | (typeof SWITCH_TASK_ERRORS)[number]
  | (typeof WAIT_TASK_ERRORS)[number];

/** An error whose `name` is the one the state machine matches; the original stays in `cause`. */
export class TaskError extends Error {
  constructor(name: TaskErrorName, message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = name;
  }
}

const NAMES: readonly [new (...args: never[]) => Error, TaskErrorName | ((e: Error) => TaskErrorName)][] = [
  [SnapshotStoreError, (e) => `SnapshotStore${(e as SnapshotStoreError).reason}` as TaskErrorName],
  [NoSnapshotBeforeTimeoutError, 'NoSnapshotBeforeTimeout'],
  [NoFullSnapshotError, 'EmptySource'],
  [RestorePlanGapError, 'RestorePlanGap'],
  [RestorePlanIncompleteError, 'RestorePlanIncomplete'],
  [CopyPlanTooLargeError, 'CopyPlanTooLarge'],
  [CopyVerificationError, 'CopyVerificationFailed'],
  [SnapshotNotFoundError, 'SourceObjectMissing'],
  [FenceBoundError, 'FenceBoundViolated'],
  [SnapshotNameError, 'InvalidInput'],
  [OwnershipAssertionError, 'OwnershipAssertionFailed'],
  [SourceLeaseExpiredError, 'SourceLeaseExpired'],
  [OwnerRecordConflictError, 'OwnerRecordConflict'],
  [ApiRecordConflictError, 'ApiRecordConflict'],
  [ApiRecordsUnavailableError, 'ApiRecordsUnavailable'],
  [DestinationNotServingError, 'DestinationNotServing'],
  [OwnerRecordsUnavailableError, 'OwnerRecordsUnavailable'],
  [SecretsUnavailableError, 'ShootStateUnavailable'],
  [ValidationError, 'InvalidInput'],
  [NotFoundError, 'NotFound'],
  [ConflictError, 'Conflict'],
  [AdmissionError, 'Refused'],
];

/** The named task error for a domain error; anything else (a bug) is left as it is and fails the execution by its own name. */
export function toTaskError(error: unknown): unknown {
  if (error instanceof TaskError) return error;
  if (error instanceof ZodError) {
    const issue = error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'input';
    return new TaskError('InvalidInput', `${where}: ${issue?.message ?? 'invalid'}`, { cause: error });
  }
  if (!(error instanceof Error)) return error;
  for (const [type, name] of NAMES) {
    if (error instanceof type)
      return new TaskError(typeof name === 'function' ? name(error) : name, error.message, { cause: error });
  }
  return error;
}

/** middy middleware: logs the failure and rethrows it under its task error name. Never turns a failure into a response. */
export function namedTaskErrors(): middy.MiddlewareObj {
  return {
    onError: async function namedTaskErrorsOnError(request) {
      const named = toTaskError(request.error);
      const transient = named instanceof TaskError && (TRANSIENT_TASK_ERRORS as readonly string[]).includes(named.name);
      logger[transient ? 'warn' : 'error']('task failed', {
        error: request.error,
        taskError: named instanceof Error ? named.name : undefined,
      });
      request.error = named as Error;
    },
  };
}
