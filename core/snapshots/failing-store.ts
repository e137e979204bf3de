import { SnapshotStoreError, type SnapshotStoreFailure } from './errors.js';
import type { ObjectHead, SnapshotStore, StoredSnapshot } from './store.js';

/**
 * A store whose every call fails, like etcd-backup-restore's fake failed provider: for fault tests of
 * the copy, the restorer and the snapshotter.
 */
export class FailingSnapshotStore implements SnapshotStore {
  constructor(private readonly options: { reason?: SnapshotStoreFailure; message?: string } = {}) {}

  private fail(operation: string, key: string): never {
    const reason = this.options.reason ?? 'Unavailable';
    throw new SnapshotStoreError(
      this.options.message ?? `snapshot store ${operation} ${key} failed: ${reason}`,
      reason,
    );
  }

  async list(technicalID: string): Promise<StoredSnapshot[]> {
    return this.fail('list', technicalID);
  }
  async get(key: string): Promise<Uint8Array> {
    return this.fail('get', key);
  }
  async fetch(key: string): Promise<AsyncIterable<Uint8Array>> {
    return this.fail('fetch', key);
  }
  async put(key: string): Promise<ObjectHead> {
    return this.fail('put', key);
  }
  async delete(key: string): Promise<void> {
    return this.fail('delete', key);
  }
  async head(key: string): Promise<ObjectHead | undefined> {
    return this.fail('head', key);
  }
}
