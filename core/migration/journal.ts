import { parseFailureCause } from '../commands/protocol.js';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Clock, EventSink } from '../garden/context.js';
import { discardEvents, systemClock } from '../garden/context.js';
import type { GardenRepository } from '../garden/repository.js';
import type { Shoot } from '../model/shoot.js';
import { holdsLock } from './lock.js';
import { migrationLastOperation, migrationProgress, withCurrentSteps, type MigrationRecord } from './record.js';
import type { MigrationStepId } from './steps.js';
import type { MigrationStore } from './store.js';

/** Which migration a step belongs to; every step Lambda gets it. */
export interface MigrationRef {
  project: string;
  name: string;
  migrationId: string;
}

export interface MigrationJournalOptions {
  garden: GardenRepository;
  migrations: MigrationStore;
  events?: EventSink;
  clock?: Clock;
}

/**
 * The one migration record every role of a migration works on: it reads the current migration of a
 * shoot, writes it only under the migration's lock, and mirrors it onto the shoot (`lastOperation`,
 * `status.migration`) so that the API shows every step.
 */
export class MigrationJournal {
  readonly garden: GardenRepository;
  readonly migrations: MigrationStore;
  readonly events: EventSink;
  readonly clock: Clock;

  constructor(options: MigrationJournalOptions) {
    this.garden = options.garden;
    this.migrations = options.migrations;
    this.events = options.events ?? discardEvents;
    this.clock = options.clock ?? systemClock;
  }

  now(): Date {
    return this.clock.now();
  }

  /** The migration `ref` names, while it is the shoot's current one (else the step lost its lock). */
  async current(ref: MigrationRef): Promise<MigrationRecord> {
    const record = await this.migrations.get(ref.project, ref.name);
    if (!record || record.id !== ref.migrationId)
      throw new ConflictError(
        `migration ${ref.migrationId} is not the current migration of ${ref.project}/${ref.name}`,
        { code: 'MigrationLockLost' },
      );
    return withCurrentSteps(record);
  }

  async shoot(project: string, name: string): Promise<Shoot> {
    const shoot = await this.garden.getShoot(project, name);
    if (!shoot) throw new NotFoundError(`shoot "${project}/${name}" not found`);
    return shoot;
  }

  /** Writes under the lock, then shows the migration on the shoot. */
  async save(record: MigrationRecord): Promise<MigrationRecord> {
    await this.migrations.put({ ...record, updatedAt: this.now().toISOString() }, holdsLock(record.id));
    await this.mirror(record);
    return record;
  }

  /** Shows the migration on the shoot: `lastOperation` and `status.migration`. */
  async mirror(record: MigrationRecord): Promise<void> {
    const step = record.steps.find((s) => s.state === 'running')?.id ?? record.lastCompletedStep;
    const migration = {
      id: record.id,
      state: record.state,
      path: record.path ?? null,
      source: record.source.name,
      destination: record.destination.name,
      step: step ?? null,
      progress: migrationProgress(record),
    };
    await this.amendShootStatus(record.shoot, {
      lastOperation: { ...migrationLastOperation(record, this.now()), lastUpdateTime: this.now().toISOString() },
      migration,
    });
  }

  /**
   * Writes fields of the shoot's status, conditional on the version read; a concurrent writer (the API,
   * the audit) makes it read again, up to five times. A shoot that is gone is left alone.
   */
  async amendShootStatus(shoot: { project: string; name: string }, fields: Partial<Shoot['status']>): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.garden.getShoot(shoot.project, shoot.name);
      if (!current) return;
      try {
        await this.garden.updateShoot(
          { ...current, status: { ...current.status, ...fields } },
          current.metadata.resourceVersion,
        );
        return;
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
  }
}

export function stepOf(record: MigrationRecord, id: MigrationStepId) {
  return record.steps.find((s) => s.id === id)!;
}

/** A Step Functions error (`{Error, Cause}`) or a thrown error, in one line for operators. */
export function describeError(error: unknown): string {
  const e = error as { Error?: string; Cause?: string } | undefined;
  if (e && typeof e === 'object' && typeof e.Error === 'string') {
    const agent = parseFailureCause(e.Cause);
    if (agent) return `${e.Error}: ${agent.message}`;
    let cause = e.Cause ?? '';
    try {
      const parsed = JSON.parse(cause) as { errorMessage?: string };
      if (parsed.errorMessage) cause = parsed.errorMessage;
    } catch {
      // Cause is plain text (timeouts, service errors): use it as it is.
    }
    if (e.Error === 'States.Timeout')
      return `States.Timeout: the seed did not answer in time${cause ? ` (${cause})` : ''}`;
    return `${e.Error}${cause ? `: ${cause}` : ''}`.slice(0, 2000);
  }
  return messageOf(error);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
