import { ConflictError } from '../errors.js';
import { describeError, type MigrationJournal, type MigrationRef } from './journal.js';
import { completeStep, failStep, resumePoint, startStep, type MigrationRecord } from './record.js';

/** How a migration ends: the shoot moves to the destination, or the migration ends in Error to be resumed. */
export class FinalizeSteps {
  constructor(private readonly journal: MigrationJournal) {}

  /** finalize: the shoot moves to the destination (counts too), lastOperation Restore Succeeded, lock released. */
  async finalize(ref: MigrationRef): Promise<{ seedName: string }> {
    const { journal } = this;
    let record = await journal.save(startStep(await journal.current(ref), { step: 'finalize', now: journal.now() }));
    for (let attempt = 0; ; attempt++) {
      const shoot = await journal.shoot(ref.project, ref.name);
      if (shoot.status.seedName === record.destination.name) break;
      try {
        await journal.garden.moveShoot(
          {
            ...shoot,
            spec: { ...shoot.spec, seedName: record.destination.name },
            status: { ...shoot.status, seedName: record.destination.name },
          },
          {
            fromSeed: record.source.name,
            toSeed: record.destination.name,
            expectedVersion: shoot.metadata.resourceVersion,
          },
        );
        break;
      } catch (error) {
        if (!(error instanceof ConflictError) || error.code !== 'Conflict' || attempt >= 5) throw error;
      }
    }
    record = await journal.save(
      completeStep(record, {
        step: 'finalize',
        now: journal.now(),
        message: `shoot placed on ${record.destination.name}`,
      }),
    );
    await journal.events.publish('MigrationSucceeded', {
      project: ref.project,
      shoot: ref.name,
      migrationId: ref.migrationId,
      source: record.source.name,
      destination: record.destination.name,
      path: record.path,
      switchedToBadPath: record.switchedToBadPathAt !== undefined,
      durationSeconds: durationSeconds(record, journal.now()),
    });
    return { seedName: record.destination.name };
  }

  /** A step failed for good: the migration ends in Error; calling migrate again resumes it. */
  async fail(ref: MigrationRef, error: unknown): Promise<void> {
    const { journal } = this;
    const record = await journal.current(ref);
    if (record.state !== 'Running') return;
    const failed = record.steps.find((s) => s.state === 'running')?.id ?? resumePoint(record) ?? 'finalize';
    const next = await journal.save(
      failStep(record, { step: failed, now: journal.now(), message: describeError(error) }),
    );
    await journal.events.publish('MigrationFailed', {
      project: ref.project,
      shoot: ref.name,
      migrationId: ref.migrationId,
      step: failed,
      error: next.error?.message,
      durationSeconds: durationSeconds(record, journal.now()),
    });
  }
}

/** From the first request to now, across resumed attempts: what the migration cost the operator. */
function durationSeconds(record: Pick<MigrationRecord, 'createdAt'>, now: Date): number {
  return Math.max(0, (now.getTime() - Date.parse(record.createdAt)) / 1_000);
}
