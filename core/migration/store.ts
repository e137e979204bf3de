import { ConflictError } from '../errors.js';
import type { LockCondition } from './lock.js';
import type { MigrationRecord } from './record.js';

/**
 * The shoot's current or last migration: one item per shoot, which is the per-shoot lock. Every write
 * names the condition it needs (see lock.ts) and fails with ConflictError (carrying the stored record)
 * when the condition does not hold.
 */
export interface MigrationStore {
  get(project: string, name: string): Promise<MigrationRecord | undefined>;
  put(record: MigrationRecord, condition: LockCondition): Promise<void>;
}

/** In memory, for unit tests; applies the same rule as the DynamoDB condition (`permits`). */
export class MemoryMigrationStore implements MigrationStore {
  private readonly items = new Map<string, MigrationRecord>();

  async get(project: string, name: string): Promise<MigrationRecord | undefined> {
    const item = this.items.get(`${project}/${name}`);
    return item ? structuredClone(item) : undefined;
  }

  async put(record: MigrationRecord, condition: LockCondition): Promise<void> {
    const key = `${record.shoot.project}/${record.shoot.name}`;
    const current = this.items.get(key);
    if (!condition.permits(current)) {
      throw new ConflictError(`migration of ${key}: ${condition.description} does not hold`, {
        code: 'MigrationLockLost',
        current: current ? structuredClone(current) : undefined,
      });
    }
    this.items.set(key, structuredClone(record));
  }
}
