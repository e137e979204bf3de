import { s3SnapshotStores } from '../../adapters/s3/snapshot-store.js';
import type { CopyConfig } from '../../core/snapshots/index.js';

const DEFAULT_THRESHOLD = process.env.MULTIPART_THRESHOLD_BYTES
  ? Number(process.env.MULTIPART_THRESHOLD_BYTES)
  : undefined;

/** The source and destination stores of one copy, with the execution's or the function's multipart threshold. */
export function storesFor(config: CopyConfig) {
  const threshold = config.multipartThresholdBytes ?? DEFAULT_THRESHOLD;
  return s3SnapshotStores({
    sourceBucket: config.sourceBucket,
    destinationBucket: config.destinationBucket,
    ...(threshold === undefined ? {} : { multipartThresholdBytes: threshold }),
  });
}
