import { NotFoundError } from '../errors.js';
import { expiredLease } from '../garden/lease-monitor.js';
import type { Seed } from '../model/seed.js';
import { durationMs } from '../model/duration.js';
import type { OwnershipTimings } from '../ownership/timings.js';
import { finalWait, type FinalWait } from '../snapshots/final-wait.js';
import { stepOf, type MigrationJournal, type MigrationRef } from './journal.js';
import { completeStep, startStep, type MigrationRecord } from './record.js';

export interface CopyStepsOptions {
  journal: MigrationJournal;
  /** The seeds' ownership timings, for the copy's fence bound. */
  ownershipTimings?: Partial<OwnershipTimings>;
  /**
   * The fixed wait for the final snapshot of a source that reported no settings of its sidecars, from the
   * copy's start; never shorter than the fence bound. Default 10 minutes.
   */
  copyWaitForFinalMs?: number;
}

export interface CopyInput {
  technicalID: string;
  sourceBucket: string;
  destinationBucket: string;
  ownerChangedAt: number;
  sourceHibernated: boolean;
  fenceTimings?: Partial<OwnershipTimings>;
  /** Epoch ms from which the copy proceeds without the final snapshot (`finalWait`). */
  proceedWithoutFinalAt: number;
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

/**
 * The copy's wait for this migration: the source's bounds when its last heartbeat reported the settings of
 * this shoot's sidecars (counted from its lease's loss when that came before the owner change), else the
 * fixed wait; the operator's `finalSnapshotWait` when longer.
 */
export function copyWaitOf(input: {
  record: Pick<MigrationRecord, 'shoot' | 'finalSnapshotWait'>;
  /** The source seed as read now, its lease joined in. */
  source: Seed | undefined;
  ownerChangedAt: number;
  now: Date;
  timings?: Partial<OwnershipTimings>;
  fixedWaitMs?: number;
}): FinalWait {
  const plane = input.source?.status.controlPlanes?.find((c) => c.technicalID === input.record.shoot.technicalID);
  const lease = input.source ? expiredLease(input.source, input.now) : undefined;
  return finalWait({
    ownerChangedAt: input.ownerChangedAt,
    copyStartedAt: input.now.getTime(),
    timings: input.timings,
    fixedWaitMs: input.fixedWaitMs,
    reported: plane?.sidecarSettings,
    leaseLostAt: lease ? Date.parse(lease.expiredAt) : undefined,
    explicitWaitMs: input.record.finalSnapshotWait ? durationMs(input.record.finalSnapshotWait) : undefined,
  });
}

/** copy-snapshots, the child state machine: its input from the migration, and its result into the migration. */
export class CopySteps {
  private readonly journal: MigrationJournal;

  constructor(private readonly options: CopyStepsOptions) {
    this.journal = options.journal;
  }

  /**
   * copy-snapshots starts: the input of the copy-snapshots state machine, with how long it waits for the
   * source's final snapshot, decided here from the source's lease and what its last heartbeat said this
   * shoot's sidecars run with (`finalWait`), and recorded on the migration (`copyWait`).
   */
  async beginCopy(ref: MigrationRef): Promise<CopyInput> {
    const now = this.journal.now();
    const started = startStep(await this.journal.current(ref), { step: 'copy-snapshots', now });
    const sourceBucket = started.source.backupBucket;
    const destinationBucket = started.destination.backupBucket;
    if (!sourceBucket || !destinationBucket)
      throw new NotFoundError('both seeds need a backup bucket to copy snapshots');
    const ownerChangedAt = firstOwnerChange(started) ?? now.getTime();
    const wait = copyWaitOf({
      record: started,
      source: await this.journal.garden.getSeed(started.source.name),
      ownerChangedAt,
      now,
      ...(this.options.ownershipTimings ? { timings: this.options.ownershipTimings } : {}),
      ...(this.options.copyWaitForFinalMs === undefined ? {} : { fixedWaitMs: this.options.copyWaitForFinalMs }),
    });
    const proceedAt = new Date(wait.proceedAt).toISOString();
    const record = await this.journal.save({
      ...started,
      steps: started.steps.map((step) =>
        step.id === 'copy-snapshots' && step.state === 'running'
          ? {
              ...step,
              message: `waiting for the source's final snapshot until ${proceedAt} (${wait.reason}), then copying the latest`,
            }
          : step,
      ),
      copyWait: {
        proceedAt,
        floorAt: new Date(wait.floorAt).toISOString(),
        basis: wait.basis,
        reason: wait.reason,
        fenceBoundMs: wait.fenceBoundMs,
        ...(wait.lossBoundMs === null ? {} : { lossBoundMs: wait.lossBoundMs }),
      },
    });
    return {
      technicalID: record.shoot.technicalID,
      sourceBucket,
      destinationBucket,
      ownerChangedAt,
      sourceHibernated: record.guards.hibernated,
      fenceTimings: wait.timings,
      proceedWithoutFinalAt: wait.proceedAt,
    };
  }

  async completeCopy(
    ref: MigrationRef,
    output: CopyOutput,
  ): Promise<{ final: boolean; expectedLastRevision?: number }> {
    const record = await this.journal.current(ref);
    const final = output.finalFound
      ? 'final snapshot'
      : `no final snapshot (latest used${record.copyWait ? ` from ${record.copyWait.proceedAt}: ${record.copyWait.reason}` : ''})`;
    const message = `${output.copied ?? 0} copied, ${output.skipped ?? 0} skipped, ${output.bytes ?? 0} bytes, ${final}, last revision ${output.lastRevision ?? '?'}`;
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
