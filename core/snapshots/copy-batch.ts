import { CopyVerificationError } from './copy-errors.js';
import { SnapshotNotFoundError } from './errors.js';
import type { ObjectHead, SnapshotStore } from './store.js';

/**
 * Moves one object from a source store to the same key in a destination store. The S3 implementation
 * copies server-side (CopyObject, or UploadPartCopy above a size threshold) and keeps the checksum;
 * `storeCopier` streams through the caller for stores that cannot copy between themselves.
 */
export interface ObjectCopier {
  copy(input: { key: string; source: ObjectHead }): Promise<void>;
}

/** A copier that reads from one store and writes to the other: for in-memory stores and tests. */
export function storeCopier(source: SnapshotStore, destination: SnapshotStore): ObjectCopier {
  return {
    async copy({ key }) {
      await destination.put(key, await source.get(key));
    },
  };
}

export interface CopyBatchItem {
  readonly key: string;
  /** The size the plan saw; the source is read again before the copy. */
  readonly size: number;
}

export interface CopyBatchResult {
  readonly copied: number;
  readonly skipped: number;
  readonly bytesCopied: number;
  readonly bytesSkipped: number;
  /** Objects copied whose source carries no checksum: verified by size only, and copied again next time. */
  readonly sizeOnlyVerified: number;
}

export interface CopyBatchOptions {
  readonly source: SnapshotStore;
  readonly destination: SnapshotStore;
  readonly copier: ObjectCopier;
  readonly items: readonly CopyBatchItem[];
  /** Objects in flight at once. Default 4. */
  readonly concurrency?: number;
}

/**
 * Copies a batch idempotently: an object already in the destination with the same size and a known,
 * equal checksum is skipped; every copied object is read back (head) and must match the source, or the
 * batch fails with `CopyVerificationError` (safe to retry). A source object that vanished since the plan
 * is `SnapshotNotFoundError`.
 */
export async function copyBatch(options: CopyBatchOptions): Promise<CopyBatchResult> {
  const { source, destination, copier } = options;
  const outcomes = await mapWithConcurrency(options.items, options.concurrency ?? 4, async (item) => {
    const from = await source.head(item.key);
    if (from === undefined)
      throw new SnapshotNotFoundError(`source object ${item.key} disappeared after the copy was planned`, item.key);
    const present = await destination.head(item.key);
    if (present !== undefined && sameContent(from, present)) return { copied: false, size: from.size, sizeOnly: false };
    await copier.copy({ key: item.key, source: from });
    const after = await destination.head(item.key);
    if (
      after === undefined ||
      after.size !== from.size ||
      (from.checksum !== undefined && after.checksum !== from.checksum)
    ) {
      throw new CopyVerificationError(
        `copy of ${item.key} does not match its source: expected ${from.size} bytes ${from.checksum ?? '(no checksum)'}, found ${
          after === undefined ? 'nothing' : `${after.size} bytes ${after.checksum ?? '(no checksum)'}`
        }`,
        item.key,
      );
    }
    return { copied: true, size: from.size, sizeOnly: from.checksum === undefined };
  });
  let copied = 0;
  let skipped = 0;
  let bytesCopied = 0;
  let bytesSkipped = 0;
  let sizeOnlyVerified = 0;
  for (const o of outcomes) {
    if (o.copied) {
      copied += 1;
      bytesCopied += o.size;
      if (o.sizeOnly) sizeOnlyVerified += 1;
    } else {
      skipped += 1;
      bytesSkipped += o.size;
    }
  }
  return { copied, skipped, bytesCopied, bytesSkipped, sizeOnlyVerified };
}

/** Same size and a checksum both sides know and agree on. */
export function sameContent(a: ObjectHead, b: ObjectHead): boolean {
  return a.size === b.size && a.checksum !== undefined && a.checksum === b.checksum;
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results keep the input order; the first failure rejects. */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
