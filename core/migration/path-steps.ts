import { describeError, type MigrationJournal, type MigrationRef } from './journal.js';
import { choosePathForSource } from './path.js';
import {
  leaveLivePath,
  resumePoint,
  setPath,
  switchToBadPath,
  type MigrationPath,
  type MigrationRecord,
} from './record.js';
import { SOURCE_LEASE_EXPIRED, waitsOnSource, type SourceWaitIndex } from './source-waits.js';
import { PREPARE_STEPS, type MigrationStepId } from './steps.js';

/**
 * What choose-path answers the state machine: the path, and where the pre-copy starts (`none`: skipped, as
 * for a hibernated shoot, or settled already); a resume at a pre-copy step comes through choose-path too.
 */
export interface PathChoice {
  path: MigrationPath;
  hibernated: boolean;
  preCopyFrom: MigrationStepId | 'none';
}

export interface PathStepsOptions {
  journal: MigrationJournal;
  /** Seed agents' heartbeat interval, for choosing the path (default 10 s). */
  heartbeatIntervalMs?: number;
  /** Task tokens filed under the source seed; a switch removes the one of the step that gave up. */
  sourceWaits?: SourceWaitIndex;
}

/** Which path a migration takes (docs/design.md section 5, step 2) and the switch from the good path to the bad. */
export class PathSteps {
  private readonly journal: MigrationJournal;

  constructor(private readonly options: PathStepsOptions) {
    this.journal = options.journal;
  }

  /** choose-path: good while the source's heartbeat is fresh (mode auto), else bad. */
  async choosePath(ref: MigrationRef): Promise<PathChoice> {
    const record = await this.journal.current(ref);
    if (record.path) return pathChoice(record);
    const source = await this.journal.garden.getSeed(record.source.name);
    const now = this.journal.now();
    const decision = choosePathForSource({
      mode: record.mode,
      source,
      now,
      heartbeatInterval: this.options.heartbeatIntervalMs ?? 10_000,
    });
    return pathChoice(await this.journal.save(setPath(record, { ...decision, now })));
  }

  /**
   * The live walk's survey failed: nothing changed yet, so the migration goes on as on the good path (its
   * next step deletes the owner record, and the source fences as on any good path).
   */
  async leaveLivePath(ref: MigrationRef, error: unknown): Promise<{ path: 'good' }> {
    const record = await this.journal.current(ref);
    await this.journal.save(leaveLivePath(record, { reason: describeError(error), now: this.journal.now() }));
    return { path: 'good' };
  }

  /** A good-path step timed out or failed: continue at set-owner-destination. */
  async switchToBadPath(ref: MigrationRef, error: unknown): Promise<{ path: 'bad' }> {
    const record = await this.journal.current(ref);
    // The step that gave up is the one running; a wait that ran out has no error of its own.
    const failedStep =
      record.steps.find((s) => s.state === 'running')?.id ?? resumePoint(record) ?? 'migrate-extensions';
    const reason = describeError(error);
    const alreadySwitched = record.path === 'bad';
    await this.journal.save(switchToBadPath(record, { failedStep, reason, now: this.journal.now() }));
    if (waitsOnSource(failedStep))
      await this.options.sourceWaits?.remove({
        seed: record.source.name,
        project: ref.project,
        name: ref.name,
        migrationId: ref.migrationId,
        step: failedStep,
      });
    if (!alreadySwitched) {
      // `early`: the source's lease expired, so the flow did not wait for the command timeout.
      const early = (error as { Error?: unknown } | undefined)?.Error === SOURCE_LEASE_EXPIRED;
      await this.journal.events.publish('MigrationSwitchedToBadPath', {
        project: ref.project,
        shoot: ref.name,
        migrationId: ref.migrationId,
        failedStep,
        reason,
        early,
      });
    }
    return { path: 'bad' };
  }
}

function pathChoice(record: MigrationRecord): PathChoice {
  const next = resumePoint(record);
  return {
    path: record.path!,
    hibernated: record.guards.hibernated,
    preCopyFrom: next !== undefined && PREPARE_STEPS.includes(next) ? next : 'none',
  };
}
