import { S3BlobStore } from '../../adapters/s3/blob-store.js';
import type { S3Api } from '../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import type { SeedCommand } from '../../core/commands/index.js';
import { checkOwner, ownerRecordName, type OwnerCheckResult, type OwnerLookup } from '../../core/ownership/index.js';

/** A runtime's buckets on S3: the garden's state bucket as blobs, a backup bucket as snapshots. */
export function s3Stores(api: S3Api) {
  return {
    blobStore: (bucket: string) => new S3BlobStore({ bucket, api }),
    snapshotStore: (bucket: string) => new S3SnapshotStore({ bucket, api }),
  };
}

/** The restore's owner check: does the shoot's owner record name this seed's identity? */
export function ownerCheckBy(options: { lookup: OwnerLookup; internalDomain: string; identity: string }): (shoot: SeedCommand['shoot']) => Promise<OwnerCheckResult> {
  return async (shoot) => {
    const name = ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain: options.internalDomain });
    return checkOwner({ outcome: await options.lookup.lookup(name), identity: options.identity }).result;
  };
}
