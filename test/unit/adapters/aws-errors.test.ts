import { InvalidChangeBatch, ThrottlingException } from '@aws-sdk/client-route-53';
import { NoSuchBucket, NoSuchKey, NotFound, S3ServiceException } from '@aws-sdk/client-s3';
import { TaskDoesNotExist } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import {
  awsErrorName,
  awsHttpStatus,
  isMissingS3Key,
  isThrottled,
  s3Failure,
  type S3Failure,
} from '../../../adapters/aws-errors.js';
import type { S3Api } from '../../../adapters/s3/s3-api.js';
import { S3BlobStore } from '../../../adapters/s3/blob-store.js';
import { S3SnapshotStore } from '../../../adapters/s3/snapshot-store.js';
import { BlobNotFoundError, BlobStoreError } from '../../../core/shootstate/index.js';
import { SnapshotNotFoundError, SnapshotStoreError } from '../../../core/snapshots/index.js';

const meta = (httpStatusCode?: number) => ({ $metadata: httpStatusCode === undefined ? {} : { httpStatusCode } });

/** An S3 error as the SDK builds it when the service names a code it has no class for. */
function s3Error(name: string, httpStatusCode?: number): S3ServiceException {
  return new S3ServiceException({ name, message: `${name} happened`, $fault: 'client', ...meta(httpStatusCode) });
}

/** The shapes a failed SDK call takes, and what every adapter must read from each. */
const SHAPES: {
  shape: string;
  error: unknown;
  name: string;
  status?: number;
  failure: S3Failure;
  missingKey?: true;
}[] = [
  {
    shape: 'modelled NoSuchKey',
    error: new NoSuchKey({ message: 'm', ...meta(404) }),
    name: 'NoSuchKey',
    status: 404,
    failure: 'Unavailable',
    missingKey: true,
  },
  {
    shape: "HeadObject's bare 404",
    error: new NotFound({ message: '', ...meta(404) }),
    name: 'NotFound',
    status: 404,
    failure: 'Unavailable',
    missingKey: true,
  },
  {
    shape: 'NotFound without a status',
    error: new NotFound({ message: '', ...meta() }),
    name: 'NotFound',
    failure: 'Unavailable',
  },
  {
    shape: 'modelled NoSuchBucket',
    error: new NoSuchBucket({ message: 'm', ...meta(404) }),
    name: 'NoSuchBucket',
    status: 404,
    failure: 'MissingBucket',
  },
  {
    shape: 'unmodelled AccessDenied',
    error: s3Error('AccessDenied', 403),
    name: 'AccessDenied',
    status: 403,
    failure: 'AccessDenied',
  },
  { shape: 'a bare 403', error: s3Error('Forbidden', 403), name: 'Forbidden', status: 403, failure: 'AccessDenied' },
  {
    shape: 'AllAccessDisabled',
    error: s3Error('AllAccessDisabled', 403),
    name: 'AllAccessDisabled',
    status: 403,
    failure: 'AccessDenied',
  },
  {
    shape: 'a KMS key it may not use',
    error: s3Error('KMS.AccessDeniedException', 400),
    name: 'KMS.AccessDeniedException',
    status: 400,
    failure: 'AccessDenied',
  },
  { shape: 'SlowDown', error: s3Error('SlowDown', 503), name: 'SlowDown', status: 503, failure: 'Throttled' },
  {
    shape: 'a bare 503',
    error: s3Error('ServiceUnavailable', 503),
    name: 'ServiceUnavailable',
    status: 503,
    failure: 'Throttled',
  },
  {
    shape: 'a 429',
    error: s3Error('TooManyRequests', 429),
    name: 'TooManyRequests',
    status: 429,
    failure: 'Throttled',
  },
  {
    shape: "Route 53's ThrottlingException",
    error: new ThrottlingException({ message: 'Rate exceeded', ...meta(400) }),
    name: 'ThrottlingException',
    status: 400,
    failure: 'Throttled',
  },
  {
    shape: 'RequestLimitExceeded',
    error: s3Error('RequestLimitExceeded', 400),
    name: 'RequestLimitExceeded',
    status: 400,
    failure: 'Throttled',
  },
  {
    shape: 'an XML-parsed error with Code',
    error: Object.assign(new Error('x'), { Code: 'SlowDown' }),
    name: 'SlowDown',
    failure: 'Throttled',
  },
  {
    shape: 'InternalError',
    error: s3Error('InternalError', 500),
    name: 'InternalError',
    status: 500,
    failure: 'Unavailable',
  },
  {
    shape: "Route 53's InvalidChangeBatch",
    error: new InvalidChangeBatch({ message: 'not found', ...meta(400) }),
    name: 'InvalidChangeBatch',
    status: 400,
    failure: 'Unavailable',
  },
  {
    shape: "Step Functions' TaskDoesNotExist",
    error: new TaskDoesNotExist({ message: 'gone', ...meta(400) }),
    name: 'TaskDoesNotExist',
    status: 400,
    failure: 'Unavailable',
  },
  {
    shape: 'the SDK timing out',
    error: Object.assign(new Error('timed out'), { name: 'TimeoutError' }),
    name: 'TimeoutError',
    failure: 'Unavailable',
  },
  {
    shape: 'a reset connection',
    error: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    name: 'ECONNRESET',
    failure: 'Unavailable',
  },
  { shape: 'a plain Error', error: new Error('boom'), name: 'Error', failure: 'Unavailable' },
  { shape: 'a thrown string', error: 'boom', name: 'Error', failure: 'Unavailable' },
  { shape: 'undefined', error: undefined, name: 'Error', failure: 'Unavailable' },
];

describe('AWS error classification', () => {
  it.each(SHAPES)('reads $shape as $name', ({ error, name, status }) => {
    expect(awsErrorName(error)).toBe(name);
    expect(awsHttpStatus(error)).toBe(status);
  });

  it.each(SHAPES)('classifies $shape as $failure', ({ error, failure, missingKey }) => {
    expect(s3Failure(error)).toBe(failure);
    expect(isThrottled(error)).toBe(failure === 'Throttled');
    expect(isMissingS3Key(error)).toBe(missingKey === true);
  });

  it("reads HeadBucket's bare 404 as a missing bucket, and only HeadBucket's", () => {
    const bare404 = new NotFound({ message: '', ...meta(404) });
    expect(s3Failure(bare404, { bucketCheck: true })).toBe('MissingBucket');
    expect(s3Failure(bare404)).toBe('Unavailable');
  });
});

/** An S3 API whose every call throws `error`. */
function failing(error: unknown): S3Api {
  const fail = async (): Promise<never> => {
    throw error;
  };
  return new Proxy({} as S3Api, { get: () => fail });
}

describe('the S3 stores classify alike', () => {
  it.each(SHAPES)(
    '$shape: the snapshot store and the blob store give the same answer',
    async ({ error, failure, missingKey }) => {
      const snapshots = new S3SnapshotStore({ bucket: 'gl-backup-x', api: failing(error) });
      const blobs = new S3BlobStore({ bucket: 'gl-state-x', api: failing(error) });

      const fromSnapshots = await snapshots.get('k').catch((e: unknown) => e);
      const fromBlobs = await blobs.get({ key: 'k', sha256: '00' }).catch((e: unknown) => e);

      if (missingKey) {
        expect(fromSnapshots).toBeInstanceOf(SnapshotNotFoundError);
        expect(fromBlobs).toBeInstanceOf(BlobNotFoundError);
      } else {
        expect(fromSnapshots).toBeInstanceOf(SnapshotStoreError);
        expect(fromBlobs).toBeInstanceOf(BlobStoreError);
        expect((fromSnapshots as SnapshotStoreError).reason).toBe(failure);
        expect((fromBlobs as BlobStoreError).reason).toBe(failure);
        expect((fromBlobs as Error).cause).toBe(error);
      }
    },
  );
});
