import { createHash } from 'node:crypto';
import { BlobIntegrityError, BlobNotFoundError, BlobStoreError, type BlobStoreFailure } from './errors.js';
import type { BlobRef } from './types.js';

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The state bucket as a seam: whole objects by key, each written with its sha256 and verified on every
 * read. A mismatch (a corrupted or replaced object) is a `BlobIntegrityError`, never data.
 */
export interface BlobStore {
  /** The bucket name, when there is one; put into the references it returns. */
  readonly bucket?: string;
  /** Writes (or overwrites) the object; returns the reference to keep. */
  put(key: string, body: Uint8Array): Promise<BlobRef>;
  /** The object's bytes, after checking them against `ref.sha256` (and `ref.size`). */
  get(ref: Pick<BlobRef, 'key' | 'sha256'> & { size?: number }): Promise<Uint8Array>;
  /** Removes an object; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
}

/** The check every implementation applies to what it read. */
export function verifyBlob(ref: Pick<BlobRef, 'key' | 'sha256'> & { size?: number }, bytes: Uint8Array): Uint8Array {
  const actual = sha256Hex(bytes);
  if (actual !== ref.sha256.toLowerCase() || (ref.size !== undefined && ref.size !== bytes.byteLength)) {
    throw new BlobIntegrityError(
      `blob ${ref.key} does not match its reference: sha256 ${actual} (${bytes.byteLength} bytes), expected ${ref.sha256}${ref.size === undefined ? '' : ` (${ref.size} bytes)`}`,
      {
        key: ref.key,
        expectedSha256: ref.sha256,
        actualSha256: actual,
        ...(ref.size === undefined ? {} : { expectedSize: ref.size }),
        actualSize: bytes.byteLength,
      },
    );
  }
  return bytes;
}

/** A bucket in memory; copies bytes in and out so callers cannot alias them. `corrupt` is for integrity tests. */
export class InMemoryBlobStore implements BlobStore {
  private readonly objects = new Map<string, Uint8Array>();
  constructor(readonly bucket?: string) {}

  async put(key: string, body: Uint8Array): Promise<BlobRef> {
    this.objects.set(key, new Uint8Array(body));
    return {
      ...(this.bucket === undefined ? {} : { bucket: this.bucket }),
      key,
      sha256: sha256Hex(body),
      size: body.byteLength,
    };
  }

  async get(ref: Pick<BlobRef, 'key' | 'sha256'> & { size?: number }): Promise<Uint8Array> {
    const bytes = this.objects.get(ref.key);
    if (bytes === undefined) throw new BlobNotFoundError(`no blob ${ref.key}`, ref.key);
    return verifyBlob(ref, new Uint8Array(bytes));
  }

  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }

  keys(): string[] {
    return [...this.objects.keys()].sort();
  }

  /** Replaces the stored bytes behind the store's back (a tampered or damaged object). */
  corrupt(key: string, bytes: Uint8Array = new TextEncoder().encode('"corrupted"')): void {
    this.objects.set(key, new Uint8Array(bytes));
  }
}

/** A store whose every call fails: for fault tests. */
export class FailingBlobStore implements BlobStore {
  constructor(private readonly options: { reason?: BlobStoreFailure; message?: string } = {}) {}

  private fail(operation: string, key: string): never {
    const reason = this.options.reason ?? 'Unavailable';
    throw new BlobStoreError(this.options.message ?? `blob store ${operation} ${key} failed: ${reason}`, reason);
  }
  async put(key: string): Promise<BlobRef> {
    return this.fail('put', key);
  }
  async get(ref: { key: string }): Promise<Uint8Array> {
    return this.fail('get', ref.key);
  }
  async delete(key: string): Promise<void> {
    return this.fail('delete', key);
  }
}
