import type { Snapshot } from './name.js';

/** What a store knows about one object without reading it. */
export interface ObjectHead {
  readonly key: string;
  readonly size: number;
  /**
   * A content checksum comparable across stores (`sha256:<base64>`), or undefined when the store cannot
   * tell. Copies only skip objects whose checksums are known and equal: an unknown checksum is copied again.
   */
  readonly checksum: string | undefined;
}

/**
 * A snapshot as a store lists it. `storedAt` is when the store wrote the object (S3's LastModified, epoch
 * ms), on the store's one clock: unlike a snapshot's `createdOn`, which is the clock of whichever seed took
 * it, it orders a copy made into this bucket before the snapshots this bucket's own seed took afterwards.
 */
export type StoredSnapshot = Snapshot & ObjectHead & { readonly storedAt?: number };

export type SnapshotBody = Uint8Array | AsyncIterable<Uint8Array>;

/**
 * The seam between the snapshot logic and a bucket (S3, in memory, always failing), modelled on
 * etcd-backup-restore's `SnapStore`. One store is one bucket; keys are full object keys
 * (`<technicalID>/v2/<name>`). Failures are `SnapshotStoreError`; a missing key is `SnapshotNotFoundError`.
 */
export interface SnapshotStore {
  /** Every snapshot of one etcd, sorted by revision (`compareSnapshots`). Objects that are not snapshots are left out. */
  list(technicalID: string): Promise<StoredSnapshot[]>;
  /** The object's bytes. Use `fetch` for large snapshots. */
  get(key: string): Promise<Uint8Array>;
  /** The object's content as a stream of chunks. */
  fetch(key: string): Promise<AsyncIterable<Uint8Array>>;
  /** Writes (or overwrites) an object and returns what `head` will report for it. */
  put(key: string, body: SnapshotBody): Promise<ObjectHead>;
  /** Removes an object; removing a missing key is not an error (Step Functions retries deletes). */
  delete(key: string): Promise<void>;
  /** Size and checksum, or undefined when the key does not exist. */
  head(key: string): Promise<ObjectHead | undefined>;
}
