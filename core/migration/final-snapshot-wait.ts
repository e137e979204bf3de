import { NotFoundError } from '../errors.js';
import { currentFinalSnapshot } from '../snapshots/lookup.js';
import type { SnapshotStore } from '../snapshots/store.js';
import { stepOf, type MigrationJournal, type MigrationRef } from './journal.js';
import { completeStep, startStep } from './record.js';

/** Seeds' clocks may lag the garden's a little; a final snapshot from before the owner change by more is an older migration's. */
const SEED_CLOCK_LAG_MS = 30_000;

export interface FinalSnapshotWaitOptions {
  journal: MigrationJournal;
  /** A seed's backup bucket as a snapshot store (the source's, to find its final snapshot). */
  snapshots: (bucket: string) => SnapshotStore;
  /** How long the good path waits for the source's final snapshot before switching to the bad path (default 10 min). */
  waitFinalSnapshotMs?: number;
}

/** wait-final-snapshot of the good path: looks into the source's backup bucket, list only. */
export class FinalSnapshotWait {
  private readonly journal: MigrationJournal;

  constructor(private readonly options: FinalSnapshotWaitOptions) {
    this.journal = options.journal;
  }

  /** One poll: whether the source's final snapshot (taken after the owner change) is there. */
  async waitFinalSnapshot(ref: MigrationRef): Promise<{ found: boolean; deadlinePassed: boolean; snapshot?: string }> {
    let record = await this.journal.current(ref);
    const now = this.journal.now();
    if (stepOf(record, 'wait-final-snapshot').state !== 'running') record = await this.journal.save(startStep(record, { step: 'wait-final-snapshot', now }));
    const ownerChangedAt = Date.parse(stepOf(record, 'delete-owner-record').endedAt ?? now.toISOString());
    const bucket = record.source.backupBucket;
    if (!bucket) throw new NotFoundError(`source seed ${record.source.name} has no backup bucket`);
    const snapshots = await this.options.snapshots(bucket).list(record.shoot.technicalID);
    const final = currentFinalSnapshot(snapshots, { notBefore: Math.floor((ownerChangedAt - SEED_CLOCK_LAG_MS) / 1000) });
    if (final) {
      await this.journal.save(completeStep(record, { step: 'wait-final-snapshot', now, message: `final snapshot ${final.name}` }));
      return { found: true, deadlinePassed: false, snapshot: final.name };
    }
    const started = Date.parse(stepOf(record, 'wait-final-snapshot').startedAt ?? now.toISOString());
    return { found: false, deadlinePassed: now.getTime() - started >= (this.options.waitFinalSnapshotMs ?? 600_000) };
  }
}
