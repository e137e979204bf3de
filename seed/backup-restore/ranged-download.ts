import { open } from 'node:fs/promises';
import { mapWithConcurrency } from '../../core/snapshots/index.js';

/**
 * Reads byte ranges of a stored object. S3 serves ranges of one object in parallel much faster than one
 * stream, and the download is most of a large restore; the `SnapshotStore` seam streams whole objects only.
 */
export interface RangedObjectReader {
  /** Bytes `first..last` (inclusive) of `key`. */
  readRange(input: { key: string; first: number; last: number }): Promise<AsyncIterable<Uint8Array>>;
}

export interface ParallelDownloadOptions {
  readonly reader: RangedObjectReader;
  readonly key: string;
  readonly size: number;
  readonly file: string;
  /** Default 16 MiB. */
  readonly partBytes?: number;
  /** Default 8. */
  readonly concurrency?: number;
}

/** Downloads an object into `file` in parallel ranges, each written at its offset. */
export async function parallelDownload(options: ParallelDownloadOptions): Promise<void> {
  const partBytes = options.partBytes ?? 16 * 1024 * 1024;
  const file = await open(options.file, 'w');
  try {
    const ranges: { first: number; last: number }[] = [];
    for (let first = 0; first < options.size; first += partBytes)
      ranges.push({ first, last: Math.min(options.size, first + partBytes) - 1 });
    await mapWithConcurrency(ranges, options.concurrency ?? 8, async ({ first, last }) => {
      let at = first;
      for await (const chunk of await options.reader.readRange({ key: options.key, first, last })) {
        await file.write(chunk, 0, chunk.byteLength, at);
        at += chunk.byteLength;
      }
      if (at !== last + 1)
        throw new RangeError(`range ${first}-${last} of ${options.key} ended after ${at - first} bytes`);
    });
  } finally {
    await file.close();
  }
}
