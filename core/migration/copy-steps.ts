import { NotFoundError } from '../errors.js';
import type { OwnershipTimings } from '../ownership/timings.js';
import { stepOf, type MigrationJournal, type MigrationRef } from './journal.js';
import { completeStep, startStep, type MigrationRecord } from './record.js';

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

/**
 * When this migration first took the shoot from the source: on the good path the owner record's
 * deletion (the source's sidecar learns `not-owner` from it, fences and takes its final snapshot), else
 * the record set to the destination. The copy counts both its fence bound and the age a final snapshot
 * may have from it. Counted from the later change instead, a final snapshot that took longer than the
 * clock-lag allowance to be taken, uploaded and found (a 500 MB full snapshot took 35 s, and the delete of
 * the source's control plane came on top) was taken for an older migration's, and the copy waited its
 * whole timeout for another.
 */
export function firstOwnerChange(record: MigrationRecord): number | undefined {
  for (const id of ['delete-owner-record', 'set-owner-destination'] as const) {
    const step = stepOf(record, id);
    if (step.state === 'succeeded' && step.endedAt !== undefined) return Date.parse(step.endedAt);
  }
  return undefined;
}

/** copy-snapshots, the child state machine: its input from the migration, and its result into the migration. */
export class CopySteps {
  private readonly journal: MigrationJournal;

  constructor(private readonly options: CopyStepsOptions) {
    this.journal = options.journal;
  }

  /** copy-snapshots starts: the input of the copy-snapshots state machine. */
  async beginCopy(ref: MigrationRef): Promise<CopyInput> {
    const record = await this.journal.save(
      startStep(await this.journal.current(ref), { step: 'copy-snapshots', now: this.journal.now() }),
    );
    const sourceBucket = record.source.backupBucket;
    const destinationBucket = record.destination.backupBucket;
    if (!sourceBucket || !destinationBucket)
      throw new NotFoundError('both seeds need a backup bucket to copy snapshots');
    const ownerChangedAt = firstOwnerChange(record) ?? this.journal.now().getTime();
    return {
      technicalID: record.shoot.technicalID,
      sourceBucket,
      destinationBucket,
      ownerChangedAt,
      sourceHibernated: record.guards.hibernated,
      ...(this.options.ownershipTimings ? { fenceTimings: this.options.ownershipTimings } : {}),
      ...(this.options.copyWaitForFinalMs === undefined
        ? {}
        : { waitForFinalTimeoutMs: this.options.copyWaitForFinalMs }),
    };
  }

  async completeCopy(
    ref: MigrationRef,
    output: CopyOutput,
  ): Promise<{ final: boolean; expectedLastRevision?: number }> {
    const record = await this.journal.current(ref);
    const message = `${output.copied ?? 0} copied, ${output.skipped ?? 0} skipped, ${output.bytes ?? 0} bytes, ${output.finalFound ? 'final snapshot' : 'no final snapshot (latest used)'}, last revision ${output.lastRevision ?? '?'}`;
    const copy = {
      final: output.finalFound === true,
      ...(output.lastRevision === undefined ? {} : { lastRevision: output.lastRevision }),
    };
    await this.journal.save({
      ...completeStep(record, { step: 'copy-snapshots', now: this.journal.now(), message }),
      copy,
    });
    await this.journal.events.publish('SnapshotsCopied', {
      project: ref.project,
      shoot: ref.name,
      migrationId: ref.migrationId,
      ...output,
    });
    return {
      final: output.finalFound === true,
      ...(output.lastRevision === undefined ? {} : { expectedLastRevision: output.lastRevision }),
    };
  }
}
