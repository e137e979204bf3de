import type { MigrationRecord } from './record.js';

/**
 * One migration per shoot, as data. The shoot's migration record is the lock: one item per shoot holds
 * its current or last migration, and every write to it is conditional. The adapter uses `expression`
 * (DynamoDB condition syntax, with `names` and `values`) on the item; `permits` is the same rule as code,
 * for in-memory stores and for tests that keep the two in agreement.
 */
export interface LockCondition {
  readonly kind: 'acquire' | 'resume' | 'update';
  readonly description: string;
  readonly expression: string;
  readonly names: Readonly<Record<string, string>>;
  readonly values: Readonly<Record<string, string>>;
  /** Whether a write under this condition succeeds on the stored record (undefined: none stored). */
  permits(current: Pick<MigrationRecord, 'id' | 'state'> | undefined): boolean;
}

const NAMES = { '#id': 'migrationId', '#state': 'state' } as const;

/** Start a new migration: nothing stored, or the last migration has ended (Succeeded or Error). */
export function acquireLock(): LockCondition {
  return {
    kind: 'acquire',
    description: 'no migration of this shoot is running',
    expression: 'attribute_not_exists(#id) OR #state <> :running',
    names: NAMES,
    values: { ':running': 'Running' },
    permits: (current) => current === undefined || current.state !== 'Running',
  };
}

/** Resume: the stored migration is this one and it ended in Error (a concurrent resume loses). */
export function resumeLock(migrationId: string): LockCondition {
  return {
    kind: 'resume',
    description: `migration ${migrationId} is the shoot's migration and ended in Error`,
    expression: '#id = :id AND #state = :error',
    names: NAMES,
    values: { ':id': migrationId, ':error': 'Error' },
    permits: (current) => current?.id === migrationId && current.state === 'Error',
  };
}

/**
 * Every step's write, including the one that ends it (Succeeded or Error releases the lock): the stored
 * migration is still this one and still running, so a late Lambda of an older migration cannot write.
 */
export function holdsLock(migrationId: string): LockCondition {
  return {
    kind: 'update',
    description: `migration ${migrationId} is the shoot's running migration`,
    expression: '#id = :id AND #state = :running',
    names: NAMES,
    values: { ':id': migrationId, ':running': 'Running' },
    permits: (current) => current?.id === migrationId && current.state === 'Running',
  };
}

/** The condition for writing an admission's record. */
export function admissionLock(admission: {
  action: 'start' | 'resume';
  record: Pick<MigrationRecord, 'id'>;
}): LockCondition {
  return admission.action === 'start' ? acquireLock() : resumeLock(admission.record.id);
}
