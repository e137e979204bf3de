import { createHash } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import {
  compareSnapshots,
  mapWithConcurrency,
  readBody,
  snapshotPrefix,
  SnapshotNotFoundError,
  SnapshotStoreError,
  tryParseSnapshotKey,
  type ObjectCopier,
  type ObjectHead,
  type SnapshotBody,
  type SnapshotStore,
  type SnapshotStoreFailure,
  type StoredSnapshot,
} from '../../core/snapshots/index.js';
import { awsErrorMessage, awsErrorName, isMissingS3Key, s3Failure } from '../aws-errors.js';
import { s3Api, type S3Api } from './s3-api.js';

/** The user metadata key that carries the content's sha256 (base64); CopyObject keeps user metadata. */
export const CHECKSUM_METADATA_KEY = 'sha256';
export const DEFAULT_MULTIPART_THRESHOLD_BYTES = 64 * 1024 * 1024;
/** S3's limits for UploadPartCopy: parts of 5 MiB to 5 GiB, at most 10,000 of them. */
const MIN_PART_BYTES = 5 * 1024 * 1024;
const MAX_PARTS = 10_000;

export interface S3SnapshotStoreOptions {
  readonly bucket: string;
  /** The narrow S3 interface; default a real client from the environment. */
  readonly api?: S3Api;
  /** Objects above this size are copied in parts with UploadPartCopy. Default 64 MiB. */
  readonly multipartThresholdBytes?: number;
  /** Part size of a multipart copy. Default: the threshold (at least 5 MiB), grown so that at most 10,000 parts are needed. */
  readonly partSizeBytes?: number;
  /** Parts copied at once. Default 8. */
  readonly partConcurrency?: number;
}

/**
 * A seed backup bucket as a `SnapshotStore`. Checksums are sha256 stored in user metadata on `put`, so
 * they stay comparable across copies (ETags are not: a multipart copy changes them). Objects written by
 * other tools carry no checksum: they are reported with `checksum: undefined` and copied again each time.
 */
export class S3SnapshotStore implements SnapshotStore {
  readonly bucket: string;
  private readonly api: S3Api;
  private readonly threshold: number;
  private readonly partSize: number | undefined;
  private readonly partConcurrency: number;

  constructor(options: S3SnapshotStoreOptions) {
    this.bucket = options.bucket;
    this.api = options.api ?? s3Api(defaultS3Client());
    this.threshold = options.multipartThresholdBytes ?? DEFAULT_MULTIPART_THRESHOLD_BYTES;
    this.partSize = options.partSizeBytes;
    this.partConcurrency = options.partConcurrency ?? 8;
    if (!(this.threshold >= MIN_PART_BYTES))
      throw new RangeError(`multipartThresholdBytes must be at least ${MIN_PART_BYTES}, got ${this.threshold}`);
  }

  /** This store as the destination of server-side copies from `source` (same credentials, any bucket they can read). */
  copierFrom(source: S3SnapshotStore): ObjectCopier {
    return { copy: (input) => this.copyFrom(source.bucket, input) };
  }

  /** Fails with MissingBucket or AccessDenied when the bucket cannot be used. */
  async checkBucket(): Promise<void> {
    await this.call('check bucket', this.bucket, () => this.api.headBucket({ Bucket: this.bucket }));
  }

  /** Every snapshot under `<technicalID>/v2/`, paged with ListObjectsV2 (1,000 a page). Listings carry no checksum; LastModified is kept as `storedAt`. */
  async list(technicalID: string): Promise<StoredSnapshot[]> {
    const prefix = snapshotPrefix(technicalID);
    const out: StoredSnapshot[] = [];
    let token: string | undefined;
    do {
      const page = await this.call('list', prefix, () =>
        this.api.listObjectsV2({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        const snapshot = tryParseSnapshotKey(object.Key);
        if (snapshot !== undefined && snapshot.technicalID === technicalID)
          out.push({
            ...snapshot,
            size: object.Size ?? 0,
            checksum: undefined,
            ...(object.LastModified ? { storedAt: object.LastModified.getTime() } : {}),
          });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return out.sort(compareSnapshots);
  }

  async get(key: string): Promise<Uint8Array> {
    const res = await this.getObject(key);
    return res.Body === undefined ? new Uint8Array() : res.Body.transformToByteArray();
  }

  async fetch(key: string): Promise<AsyncIterable<Uint8Array>> {
    const res = await this.getObject(key);
    const body = res.Body;
    if (body === undefined) return (async function* empty() {})();
    return body as unknown as AsyncIterable<Uint8Array>;
  }

  /** Buffers a streamed body: the checksum must be known before the upload starts (it travels as metadata). */
  async put(key: string, body: SnapshotBody): Promise<ObjectHead> {
    const bytes = await readBody(body);
    const digest = createHash('sha256').update(bytes).digest('base64');
    await this.call('put', key, () =>
      this.api.putObject({
        Bucket: this.bucket,
        Key: key,
        Body: bytes,
        ContentLength: bytes.byteLength,
        Metadata: { [CHECKSUM_METADATA_KEY]: digest },
      }),
    );
    return { key, size: bytes.byteLength, checksum: `sha256:${digest}` };
  }

  async delete(key: string): Promise<void> {
    await this.call('delete', key, () => this.api.deleteObject({ Bucket: this.bucket, Key: key }));
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    try {
      const res = await this.call('head', key, () => this.api.headObject({ Bucket: this.bucket, Key: key }), {
        missingKey: true,
      });
      const digest = res.Metadata?.[CHECKSUM_METADATA_KEY];
      return { key, size: res.ContentLength ?? 0, checksum: digest ? `sha256:${digest}` : undefined };
    } catch (error) {
      if (error instanceof SnapshotNotFoundError) return undefined;
      throw error;
    }
  }

  /**
   * Copies `key` from another bucket into this one under the same key, server-side: CopyObject up to the
   * threshold, UploadPartCopy in parallel parts above it. User metadata (the checksum) is kept.
   */
  async copyFrom(from: string, input: { key: string; source: ObjectHead }): Promise<void> {
    const copySource = `${from}/${encodeKey(input.key)}`;
    if (input.source.size <= this.threshold) {
      await this.call(
        'copy',
        input.key,
        () =>
          this.api.copyObject({
            Bucket: this.bucket,
            Key: input.key,
            CopySource: copySource,
            MetadataDirective: 'COPY',
          }),
        {
          sourceBucket: from,
        },
      );
      return;
    }
    await this.multipartCopy(input.key, copySource, input.source, from);
  }

  private async multipartCopy(key: string, copySource: string, source: ObjectHead, from: string): Promise<void> {
    // CreateMultipartUpload does not copy metadata: carry the checksum over explicitly.
    const metadata: Record<string, string> = {};
    if (source.checksum?.startsWith('sha256:'))
      metadata[CHECKSUM_METADATA_KEY] = source.checksum.slice('sha256:'.length);
    const size = source.size;
    const partSize = Math.max(MIN_PART_BYTES, this.partSize ?? this.threshold, Math.ceil(size / MAX_PARTS));
    const created = await this.call('start multipart copy', key, () =>
      this.api.createMultipartUpload({ Bucket: this.bucket, Key: key, Metadata: metadata }),
    );
    const uploadId = created.UploadId;
    if (uploadId === undefined)
      throw new SnapshotStoreError(`S3 returned no upload id for ${key} in ${this.bucket}`, 'Unavailable');
    try {
      const ranges: { part: number; first: number; last: number }[] = [];
      for (let first = 0, part = 1; first < size; first += partSize, part++)
        ranges.push({ part, first, last: Math.min(size, first + partSize) - 1 });
      const parts = await mapWithConcurrency(ranges, this.partConcurrency, async ({ part, first, last }) => {
        const res = await this.call(
          'copy part',
          key,
          () =>
            this.api.uploadPartCopy({
              Bucket: this.bucket,
              Key: key,
              UploadId: uploadId,
              PartNumber: part,
              CopySource: copySource,
              CopySourceRange: `bytes=${first}-${last}`,
            }),
          { sourceBucket: from },
        );
        return { PartNumber: part, ETag: res.CopyPartResult?.ETag };
      });
      await this.call('complete multipart copy', key, () =>
        this.api.completeMultipartUpload({
          Bucket: this.bucket,
          Key: key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    } catch (error) {
      // Best effort: an upload left behind costs storage until a lifecycle rule removes it, never correctness.
      await this.api.abortMultipartUpload({ Bucket: this.bucket, Key: key, UploadId: uploadId }).catch(() => undefined);
      throw error;
    }
  }

  private getObject(key: string) {
    return this.call('get', key, () => this.api.getObject({ Bucket: this.bucket, Key: key }), { missingKey: true });
  }

  /** Runs one S3 call and turns its failure into the seam's errors. */
  private async call<T>(
    operation: string,
    key: string,
    fn: () => Promise<T>,
    options: { missingKey?: boolean; sourceBucket?: string } = {},
  ): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw this.translate(error, operation, key, options);
    }
  }

  private translate(
    error: unknown,
    operation: string,
    key: string,
    options: { missingKey?: boolean; sourceBucket?: string },
  ): Error {
    const where =
      options.sourceBucket === undefined
        ? `bucket ${this.bucket}`
        : `bucket ${this.bucket} (copying from ${options.sourceBucket})`;
    if (options.missingKey && isMissingS3Key(error)) {
      return new SnapshotNotFoundError(`no object ${key} in bucket ${this.bucket}`, key, { cause: error });
    }
    const reason = s3Failure(error, { bucketCheck: operation === 'check bucket' });
    const what: Record<SnapshotStoreFailure, string> = {
      MissingBucket: `${where} does not exist`,
      AccessDenied: `access to ${where} denied`,
      Throttled: `S3 throttled ${where}`,
      Unavailable: `S3 failed for ${where}`,
    };
    return new SnapshotStoreError(
      `${operation} ${key}: ${what[reason]} (${awsErrorName(error)}: ${awsErrorMessage(error)})`,
      reason,
      {
        cause: error,
      },
    );
  }
}

/** Path-style addressing when an emulator endpoint is set (bucket host names do not resolve there). */
export function defaultS3Client(): S3Client {
  return new S3Client({ forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL) });
}

/** A store and copier for a bucket with shared options: what the copy functions build per invocation. */
export function s3SnapshotStores(
  options: Omit<S3SnapshotStoreOptions, 'bucket'> & { sourceBucket: string; destinationBucket: string },
) {
  const { sourceBucket, destinationBucket, ...rest } = options;
  const source = new S3SnapshotStore({ ...rest, bucket: sourceBucket });
  const destination = new S3SnapshotStore({ ...rest, bucket: destinationBucket });
  return { source, destination, copier: destination.copierFrom(source) };
}

/** CopySource is `<bucket>/<url-encoded key>`; slashes may stay. */
function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}
