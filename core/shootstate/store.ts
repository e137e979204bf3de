import { ShootStateConflictError, ShootStateStoreError } from './errors.js';
import type { PackedShootState, VersionedShootState } from './types.js';

export interface ShootStateKey {
  project: string;
  name: string;
}

export interface SaveShootStateOptions extends ShootStateKey {
  state: PackedShootState;
  /**
   * The version the caller read: the save succeeds only if the stored one is still that version.
   * `0` means "none stored yet"; undefined saves unconditionally (last writer wins).
   */
  expectedVersion?: number;
}

/**
 * Where the ShootState of each shoot is kept: one document per shoot with a version number that every
 * save increases by one; saves can be made conditional on that version (optimistic concurrency), and a
 * failed condition is a `ShootStateConflictError` carrying the current version.
 */
export interface ShootStateStore {
  load(key: ShootStateKey): Promise<VersionedShootState | undefined>;
  /** Returns the new version. */
  save(options: SaveShootStateOptions): Promise<number>;
  /** Removes it (when the shoot is deleted); conditional like `save`; removing a missing one is not an error without a condition. */
  delete(options: ShootStateKey & { expectedVersion?: number }): Promise<void>;
}

export function conflict(
  key: ShootStateKey,
  expectedVersion: number,
  currentVersion: number | undefined,
  cause?: unknown,
): ShootStateConflictError {
  const now = currentVersion === undefined ? 'none is stored' : `version ${currentVersion} is stored`;
  const wanted = expectedVersion === 0 ? 'none' : `version ${expectedVersion}`;
  return new ShootStateConflictError(
    `ShootState of ${key.project}/${key.name} changed concurrently: expected ${wanted}, but ${now}; load it again and retry`,
    { project: key.project, name: key.name, expectedVersion, currentVersion },
    cause === undefined ? undefined : { cause },
  );
}

/** The store in memory: for unit tests and the local landscape. Documents are cloned in and out. */
export class InMemoryShootStateStore implements ShootStateStore {
  private readonly items = new Map<string, VersionedShootState>();

  async load(key: ShootStateKey): Promise<VersionedShootState | undefined> {
    const item = this.items.get(id(key));
    return item === undefined ? undefined : structuredClone(item);
  }

  async save(options: SaveShootStateOptions): Promise<number> {
    const current = this.items.get(id(options))?.version;
    if (options.expectedVersion !== undefined && options.expectedVersion !== (current ?? 0))
      throw conflict(options, options.expectedVersion, current);
    const version = (current ?? 0) + 1;
    this.items.set(id(options), { state: structuredClone(options.state), version });
    return version;
  }

  async delete(options: ShootStateKey & { expectedVersion?: number }): Promise<void> {
    const current = this.items.get(id(options))?.version;
    if (options.expectedVersion !== undefined && options.expectedVersion !== (current ?? 0))
      throw conflict(options, options.expectedVersion, current);
    this.items.delete(id(options));
  }
}

/** A store whose every call fails: for fault tests. */
export class FailingShootStateStore implements ShootStateStore {
  constructor(private readonly message = 'ShootState store unavailable (failing store)') {}
  async load(_key: ShootStateKey): Promise<VersionedShootState | undefined> {
    throw new ShootStateStoreError(this.message);
  }
  async save(_options: SaveShootStateOptions): Promise<number> {
    throw new ShootStateStoreError(this.message);
  }
  async delete(_options: ShootStateKey & { expectedVersion?: number }): Promise<void> {
    throw new ShootStateStoreError(this.message);
  }
}

const id = (key: ShootStateKey) => `${key.project}/${key.name}`;
