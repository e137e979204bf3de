/**
 * What the adapters read from a failed AWS SDK call. The SDK's errors come in several shapes: a modelled
 * exception (`name` is the AWS error code), an older or XML-parsed one with `Code`, a bare HTTP answer
 * with only `$metadata.httpStatusCode` (HEAD requests have no body), and Node's network errors (`code`,
 * e.g. ECONNRESET, with `name` "Error"). Every adapter classifies through here, so that a shape learnt
 * once is learnt everywhere.
 */

/** The AWS error code: `Code`, else the SDK's `name`, else Node's `code`; "Error" when none says more. */
export function awsErrorName(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const e = error as { name?: unknown; Code?: unknown; code?: unknown };
    if (typeof e.Code === 'string' && e.Code !== '') return e.Code;
    if (typeof e.name === 'string' && e.name !== '' && e.name !== 'Error') return e.name;
    if (typeof e.code === 'string' && e.code !== '') return e.code;
  }
  return 'Error';
}

/** The HTTP status of the answer, when one came. */
export function awsHttpStatus(error: unknown): number | undefined {
  const status = (error as { $metadata?: { httpStatusCode?: unknown } } | null | undefined)?.$metadata?.httpStatusCode;
  return typeof status === 'number' ? status : undefined;
}

export function awsErrorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Codes with which AWS services say "slow down" (S3's SlowDown, the query APIs' Throttling, ...). */
const THROTTLING = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'RequestThrottled',
]);

/** Throttled: a throttling code, or 429/503 (what S3 answers a HEAD it throttles, without a body). */
export function isThrottled(error: unknown): boolean {
  const status = awsHttpStatus(error);
  return THROTTLING.has(awsErrorName(error)) || status === 429 || status === 503;
}

const ACCESS_DENIED = new Set(['AccessDenied', 'Forbidden', 'AllAccessDisabled', 'KMS.AccessDeniedException']);

/** Why an S3 call failed, in the words of the stores' errors (`SnapshotStoreFailure`, `BlobStoreFailure`). */
export type S3Failure = 'MissingBucket' | 'AccessDenied' | 'Throttled' | 'Unavailable';

/**
 * The reason of a failed S3 call. `bucketCheck`: the call was HeadBucket, whose bare 404 means the
 * bucket is missing (of HeadObject, the key is: see `isMissingS3Key`). Anything not recognised is
 * `Unavailable`: the object may well be fine, and the caller tries again later.
 */
export function s3Failure(error: unknown, options: { bucketCheck?: boolean } = {}): S3Failure {
  const name = awsErrorName(error);
  const status = awsHttpStatus(error);
  if (name === 'NoSuchBucket') return 'MissingBucket';
  if (options.bucketCheck && status === 404) return 'MissingBucket';
  if (ACCESS_DENIED.has(name) || status === 403) return 'AccessDenied';
  if (isThrottled(error)) return 'Throttled';
  return 'Unavailable';
}

/** The key does not exist: GetObject's NoSuchKey, or HeadObject's bare 404 (which the SDK names NotFound). */
export function isMissingS3Key(error: unknown): boolean {
  const name = awsErrorName(error);
  return name === 'NoSuchKey' || (name === 'NotFound' && awsHttpStatus(error) === 404);
}
