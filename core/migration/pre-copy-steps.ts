import { NotFoundError } from '../errors.js';
import { describeError, type MigrationJournal, type MigrationRef } from './journal.js';
import { completeStep, continueWithoutStep, resumePoint, startStep, type MigrationRecord } from './record.js';
import { PREPARE_STEPS, type MigrationStepId } from './steps.js';

/** The input of the copy-snapshots state machine for a pre-copy: no owner change yet, so no wait and no gate. */
export interface PreCopyInput {
  technicalID: string;
  sourceBucket: string;
  destinationBucket: string;
  precopy: true;
}

/** What copy-snapshots reports back (its summary); only these fields are read. */
export interface PreCopyOutput {
  copied: number;
  skipped: number;
  bytes: number;
  lastRevision: number;
}

/**
 * The pre-copy (docs/design.md section 5): before the owner record changes, the snapshots the restore needs
 * go to the destination bucket, and the destination restores etcd ahead from them without serving. Both
 * are best effort: whatever goes wrong is recorded and the migration goes on as it would without them.
 */
export class PreCopySteps {
  constructor(private readonly journal: MigrationJournal) {}

  /** pre-copy-snapshots starts: the input of the copy-snapshots state machine. */
  async beginPreCopy(ref: MigrationRef): Promise<PreCopyInput> {
    const record = await this.journal.save(
      startStep(await this.journal.current(ref), { step: 'pre-copy-snapshots', now: this.journal.now() }),
    );
    const sourceBucket = record.source.backupBucket;
    const destinationBucket = record.destination.backupBucket;
    if (!sourceBucket || !destinationBucket)
      throw new NotFoundError('both seeds need a backup bucket to pre-copy snapshots');
    return { technicalID: record.shoot.technicalID, sourceBucket, destinationBucket, precopy: true };
  }

  async completePreCopy(ref: MigrationRef, output: PreCopyOutput): Promise<{ message: string; lastRevision: number }> {
    const record = await this.journal.current(ref);
    const there = output.skipped > 0 ? ` (${output.skipped} intact there already)` : '';
    const message = `pre-copied ${output.copied} objects, ${megabytes(output.bytes)}, up to revision ${output.lastRevision}${there}`;
    const preCopy = {
      copied: output.copied,
      skipped: output.skipped,
      bytes: output.bytes,
      lastRevision: output.lastRevision,
    };
    await this.journal.save({
      ...completeStep(record, { step: 'pre-copy-snapshots', now: this.journal.now(), message }),
      preCopy,
    });
    return { message, lastRevision: output.lastRevision };
  }

  /**
   * A pre-copy step failed or timed out (any error the state machine caught there): the step is recorded as
   * failed with the reason, and the flow goes on without it. The step is the one running, else the pre-copy
   * step the flow is at; with none (both settled already, a retried call), nothing changes.
   */
  async continueWithout(
    ref: MigrationRef,
    error: unknown,
  ): Promise<{ step: MigrationStepId | null; message: string | null }> {
    const record = await this.journal.current(ref);
    const step = failedPreCopyStep(record);
    if (step === undefined) return { step: null, message: null };
    const next = await this.journal.save(
      continueWithoutStep(record, { step, now: this.journal.now(), outcome: 'failed', reason: describeError(error) }),
    );
    return { step, message: next.steps.find((s) => s.id === step)?.message ?? null };
  }
}

function failedPreCopyStep(record: MigrationRecord): MigrationStepId | undefined {
  const running = record.steps.find((s) => s.state === 'running' && PREPARE_STEPS.includes(s.id));
  if (running) return running.id;
  const next = resumePoint(record);
  return next !== undefined && PREPARE_STEPS.includes(next) ? next : undefined;
}

/** 512 MB, 1.5 MB, 0.12 MB, 97 bytes: what an operator compares with the size of etcd. */
function megabytes(bytes: number): string {
  if (bytes < 10_000) return `${bytes} bytes`;
  const mb = bytes / 1_000_000;
  return `${mb >= 10 ? Math.round(mb) : Number(mb.toPrecision(2))} MB`;
}
