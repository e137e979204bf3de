import { NotFoundError } from '../errors.js';
import type { OwnershipTimings } from '../ownership/timings.js';
import { stepOf, type MigrationJournal, type MigrationRef } from './journal.js';
import { completeStep, startStep } from './record.js';

export interface CopyStepsOptions {
  journal: MigrationJournal;
  /** The seeds' ownership timings, for the copy's fence bound. */
  ownershipTimings?: Partial<OwnershipTimings>;
  /** How long the copy waits for the source's final snapshot; never shorter than the fence bound (the copy refuses otherwise). Default: the copy's own. */
  copyWaitForFinalMs?: number;
}

export interface CopyInput {
  technicalID: string;
  sourceBucket: string;
  destinationBucket: string;
  ownerChangedAt: number;
  sourceHibernated: boolean;
  fenceTimings?: Partial<OwnershipTimings>;
  waitForFinalTimeoutMs?: number;
}

export interface CopyOutput {
  copied?: number;
  skipped?: number;
  bytes?: number;
  finalFound?: boolean;
  lastRevision?: number;
}

/** copy-snapshots, the child state machine: its input from the migration, and its result into the migration. */
export class CopySteps {
  private readonly journal: MigrationJournal;

  constructor(private readonly options: CopyStepsOptions) {
    this.journal = options.journal;
  }

  /** copy-snapshots starts: the input of the copy-snapshots state machine. */
  async beginCopy(ref: MigrationRef): Promise<CopyInput> {
    const record = await this.journal.save(startStep(await this.journal.current(ref), { step: 'copy-snapshots', now: this.journal.now() }));
    const sourceBucket = record.source.backupBucket;
    const destinationBucket = record.destination.backupBucket;
    if (!sourceBucket || !destinationBucket) throw new NotFoundError('both seeds need a backup bucket to copy snapshots');
    const ownerChangedAt = Date.parse(stepOf(record, 'set-owner-destination').endedAt ?? this.journal.now().toISOString());
    return {
      technicalID: record.shoot.technicalID, sourceBucket, destinationBucket, ownerChangedAt, sourceHibernated: record.guards.hibernated,
      ...(this.options.ownershipTimings ? { fenceTimings: this.options.ownershipTimings } : {}),
      ...(this.options.copyWaitForFinalMs === undefined ? {} : { waitForFinalTimeoutMs: this.options.copyWaitForFinalMs }),
    };
  }

  async completeCopy(ref: MigrationRef, output: CopyOutput): Promise<{ final: boolean; expectedLastRevision?: number }> {
    const record = await this.journal.current(ref);
    const message = `${output.copied ?? 0} copied, ${output.skipped ?? 0} skipped, ${output.bytes ?? 0} bytes, ${output.finalFound ? 'final snapshot' : 'no final snapshot (latest used)'}, last revision ${output.lastRevision ?? '?'}`;
    const copy = { final: output.finalFound === true, ...(output.lastRevision === undefined ? {} : { lastRevision: output.lastRevision }) };
    await this.journal.save({ ...completeStep(record, { step: 'copy-snapshots', now: this.journal.now(), message }), copy });
    await this.journal.events.publish('SnapshotsCopied', { project: ref.project, shoot: ref.name, migrationId: ref.migrationId, ...output });
    return { final: output.finalFound === true, ...(output.lastRevision === undefined ? {} : { expectedLastRevision: output.lastRevision }) };
  }
}
