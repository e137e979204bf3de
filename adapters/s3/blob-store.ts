import { S3Client, type ServerSideEncryption } from '@aws-sdk/client-s3';
import {
  BlobIntegrityError,
  BlobNotFoundError,
  BlobStoreError,
  sha256Hex,
  verifyBlob,
  type BlobRef,
  type BlobStore,
} from '../../core/shootstate/index.js';
import { awsErrorMessage, awsErrorName, isMissingS3Key, s3Failure } from '../aws-errors.js';
import { s3Api, type S3Api } from './s3-api.js';

/** The user metadata key that carries the content's sha256 (lowercase hex). */
export const BLOB_SHA256_METADATA_KEY = 'sha256';

/** Every S3 call the blob store makes: its IAM policy is s3:PutObject, s3:GetObject and s3:DeleteObject on the state bucket. */
export type BlobS3Api = Pick<S3Api, 'putObject' | 'getObject' | 'deleteObject'>;

export interface S3BlobStoreOptions {
  bucket: string;
  /** The narrow S3 interface; default a real client from the environment. */
  api?: BlobS3Api;
  /** Server-side encryption of every object written: SSE-S3 (`AES256`, the default) or SSE-KMS with an optional key. */
  encryption?: { type: 'AES256' } | { type: 'aws:kms'; keyId?: string };
}

/**
 * The state bucket as a `BlobStore`: objects written with server-side encryption and their sha256 in
 * user metadata; every read hashes the bytes and compares them with the reference and the metadata, so
 * a replaced or damaged object is a `BlobIntegrityError`, never state.
 */
export class S3BlobStore implements BlobStore {
  readonly bucket: string;
  private readonly api: BlobS3Api;
  private readonly encryption: NonNullable<S3BlobStoreOptions['encryption']>;

  constructor(options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.api = options.api ?? s3Api(new S3Client({ forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL) }));
    this.encryption = options.encryption ?? { type: 'AES256' };
  }

  async put(key: string, body: Uint8Array): Promise<BlobRef> {
    const sha256 = sha256Hex(body);
    const sse = this.encryption.type as ServerSideEncryption;
    await this.call('put', key, () =>
      this.api.putObject({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentLength: body.byteLength,
        ContentType: 'application/json',
        Metadata: { [BLOB_SHA256_METADATA_KEY]: sha256 },
        ServerSideEncryption: sse,
        ...(this.encryption.type === 'aws:kms' && this.encryption.keyId ? { SSEKMSKeyId: this.encryption.keyId } : {}),
      }),
    );
    return { bucket: this.bucket, key, sha256, size: body.byteLength };
  }

  async get(ref: Pick<BlobRef, 'key' | 'sha256'> & { size?: number }): Promise<Uint8Array> {
    const res = await this.call('get', ref.key, () => this.api.getObject({ Bucket: this.bucket, Key: ref.key }), {
      missingKey: true,
    });
    const bytes = res.Body === undefined ? new Uint8Array() : await res.Body.transformToByteArray();
    const recorded = res.Metadata?.[BLOB_SHA256_METADATA_KEY];
    if (recorded !== undefined && recorded.toLowerCase() !== ref.sha256.toLowerCase()) {
      throw new BlobIntegrityError(
        `blob ${ref.key} in bucket ${this.bucket} was written as sha256 ${recorded}, the reference expects ${ref.sha256}: it was replaced`,
        {
          key: ref.key,
          expectedSha256: ref.sha256,
          actualSha256: sha256Hex(bytes),
          ...(ref.size === undefined ? {} : { expectedSize: ref.size }),
          actualSize: bytes.byteLength,
        },
      );
    }
    return verifyBlob(ref, bytes);
  }

  async delete(key: string): Promise<void> {
    await this.call('delete', key, () => this.api.deleteObject({ Bucket: this.bucket, Key: key }));
  }

  private async call<T>(
    operation: string,
    key: string,
    fn: () => Promise<T>,
    options: { missingKey?: boolean } = {},
  ): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (options.missingKey && isMissingS3Key(error)) {
        throw new BlobNotFoundError(`no blob ${key} in bucket ${this.bucket}`, key, { cause: error });
      }
      const reason = s3Failure(error);
      throw new BlobStoreError(
        `${operation} ${key} in bucket ${this.bucket} failed: ${reason} (${awsErrorName(error)}: ${awsErrorMessage(error)})`,
        reason,
        { cause: error },
      );
    }
  }
}
