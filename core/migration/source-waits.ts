import type { ExpiredLease } from '../garden/lease-monitor.js';
import { SourceLeaseExpiredError } from './errors.js';
import type { MigrationRecord } from './record.js';
import { stepDefinition, type MigrationStepId } from './steps.js';
import type { MigrationStore } from './store.js';

/** The error name the state machine catches on the good path's seed steps (see migrate-shoot.asl.json). */
export const SOURCE_LEASE_EXPIRED = 'SourceLeaseExpired';
/** The error name the state machine catches on the live walk's round, which waits on the destination. */
export const DESTINATION_LEASE_EXPIRED = 'DestinationLeaseExpired';

/**
 * A step waiting for a seed's agent whose lost lease should cut it short: a good-path step of a mode-auto
 * migration on the source, or the live walk's round on the destination (a walk held by a lost destination
 * may leave the shoot's etcd without a quorum until the garden takes the way back). The task token the
 * state machine waits on, kept apart from the migration record (which the API shows) and filed under that
 * seed, so that the lease monitor finds what waits on a seed whose lease expired without a scan.
 */
export interface SourceWait {
  seed: string;
  project: string;
  name: string;
  migrationId: string;
  step: MigrationStepId;
  taskToken: string;
  since: string;
}

/** One wait per shoot and source seed; a later step of the same shoot replaces it. */
export interface SourceWaitIndex {
  put(wait: SourceWait): Promise<void>;
  listForSeed(seed: string): Promise<SourceWait[]>;
  /** Removes the wait if it is still this step's of this migration (a newer one stays). */
  remove(wait: Pick<SourceWait, 'seed' | 'project' | 'name' | 'migrationId' | 'step'>): Promise<void>;
}

/** Fails a waiting task by its token; `gone` when the task is no longer waiting (answered, timed out). */
export interface TaskTokens {
  fail(options: { taskToken: string; error: string; cause: string }): Promise<'failed' | 'gone'>;
}

/** Whether the step is a good-path step done by the source's agent: the ones a lost source lease cuts short. */
export function waitsOnSource(step: MigrationStepId): boolean {
  const definition = stepDefinition(step);
  return definition.phase === 'good' && definition.actor === 'source' && definition.command !== undefined;
}

/** The live walk's round (`walk-live`, on the destination): the garden takes the way back once the destination is lost. */
export function waitsOnDestination(record: Pick<MigrationRecord, 'path'>, step: MigrationStepId): boolean {
  return record.path === 'live' && step === 'walk-live';
}

/** Only mode auto switches early: mode good was asked to use the source, and keeps today's timeout. */
export function switchesEarly(record: Pick<MigrationRecord, 'mode' | 'path'>, step: MigrationStepId): boolean {
  return record.mode === 'auto' && record.path === 'good' && waitsOnSource(step);
}

/** Why the step gave up, and who noticed (the dispatch step or the lease monitor), in the words the migration record and its events keep. */
export function sourceLeaseMessage(lease: ExpiredLease, by: 'dispatch' | 'lease monitor'): string {
  return `the source seed ${lease.seed}'s lease expired at ${lease.expiredAt} (last renewed ${lease.lastRenewTime}, valid ${lease.leaseDurationSeconds} s; seen by the ${by}): its agent is not heard from, so mode auto switches to the bad path without waiting for the command timeout`;
}

/** The dispatch step's error when the source's lease has already expired. */
export function sourceLeaseExpired(lease: ExpiredLease): SourceLeaseExpiredError {
  return new SourceLeaseExpiredError(sourceLeaseMessage(lease, 'dispatch'));
}

export type SourceWaitOutcome = 'failed' | 'gone' | 'stale';

/**
 * The early switch on the lease monitor's side: for a seed whose lease expired, fails the task of every
 * mode-auto migration still waiting on that seed's agent with `SourceLeaseExpired`, which the state machine
 * catches where it catches the command timeout, continuing on the bad path. A wait that no longer matches
 * its migration (the step finished, the migration moved on or ended) is only removed.
 */
export class SourceLeaseSwitch {
  constructor(private readonly options: { waits: SourceWaitIndex; migrations: MigrationStore; tasks: TaskTokens }) {}

  async failWaitsOn(
    lease: ExpiredLease,
  ): Promise<
    { project: string; name: string; migrationId: string; step: MigrationStepId; outcome: SourceWaitOutcome }[]
  > {
    const out: {
      project: string;
      name: string;
      migrationId: string;
      step: MigrationStepId;
      outcome: SourceWaitOutcome;
    }[] = [];
    for (const wait of await this.options.waits.listForSeed(lease.seed)) {
      const record = await this.options.migrations.get(wait.project, wait.name);
      let outcome: SourceWaitOutcome = 'stale';
      const on = record && stillWaitingOn(record, wait);
      if (on) {
        outcome = await this.options.tasks.fail({
          taskToken: wait.taskToken,
          ...(on === 'source'
            ? { error: SOURCE_LEASE_EXPIRED, cause: sourceLeaseMessage(lease, 'lease monitor') }
            : {
                error: DESTINATION_LEASE_EXPIRED,
                cause: `the destination seed ${lease.seed}'s lease expired at ${lease.expiredAt} (last renewed ${lease.lastRenewTime}, seen by the lease monitor): the live walk takes its way out without waiting for the round's timeout`,
              }),
        });
      }
      await this.options.waits.remove(wait);
      out.push({ project: wait.project, name: wait.name, migrationId: wait.migrationId, step: wait.step, outcome });
    }
    return out;
  }
}

/** Which of the migration's seeds the wait is still on, if any. */
function stillWaitingOn(record: MigrationRecord, wait: SourceWait): 'source' | 'destination' | undefined {
  if (
    record.id !== wait.migrationId ||
    record.state !== 'Running' ||
    !record.steps.some((s) => s.id === wait.step && s.state === 'running')
  )
    return undefined;
  if (record.source.name === wait.seed && switchesEarly(record, wait.step)) return 'source';
  if (record.destination.name === wait.seed && waitsOnDestination(record, wait.step)) return 'destination';
  return undefined;
}

/** In memory, for tests; the same replace and remove rules as the DynamoDB adapter. */
export class MemorySourceWaitIndex implements SourceWaitIndex {
  private readonly items = new Map<string, SourceWait>();

  async put(wait: SourceWait): Promise<void> {
    this.items.set(`${wait.seed}|${wait.project}/${wait.name}`, { ...wait });
  }

  async listForSeed(seed: string): Promise<SourceWait[]> {
    return [...this.items.values()].filter((w) => w.seed === seed).map((w) => ({ ...w }));
  }

  async remove(wait: Pick<SourceWait, 'seed' | 'project' | 'name' | 'migrationId' | 'step'>): Promise<void> {
    const key = `${wait.seed}|${wait.project}/${wait.name}`;
    const item = this.items.get(key);
    if (item?.migrationId === wait.migrationId && item.step === wait.step) this.items.delete(key);
  }
}
