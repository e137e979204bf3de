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
  /**
   * How long one call keeps looking before it answers "not yet" (default 20 s, well inside the task
   * function's timeout), and how often it lists the bucket meanwhile (default 250 ms). The final
   * snapshot is a small delta uploaded within a second of the fence: the state machine's wait between
   * calls (5 s) would be most of the migration's downtime.
   */
  lookForMs?: number;
  lookEveryMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** A monotonic clock in ms for the look's while (default `performance.now`). */
  elapsed?: () => number;
}

export const DEFAULT_FINAL_SNAPSHOT_LOOK_FOR_MS = 20_000;
export const DEFAULT_FINAL_SNAPSHOT_LOOK_EVERY_MS = 250;

/** wait-final-snapshot of the good path: looks into the source's backup bucket, list only. */
export class FinalSnapshotWait {
  private readonly journal: MigrationJournal;

  constructor(private readonly options: FinalSnapshotWaitOptions) {
    this.journal = options.journal;
  }

  /** One call: whether the source's final snapshot (taken after the owner change) is there, looking for a while. */
  async waitFinalSnapshot(ref: MigrationRef): Promise<{ found: boolean; deadlinePassed: boolean; snapshot?: string }> {
    let record = await this.journal.current(ref);
    if (stepOf(record, 'wait-final-snapshot').state !== 'running')
      record = await this.journal.save(startStep(record, { step: 'wait-final-snapshot', now: this.journal.now() }));
    const ownerChangedAt = Date.parse(
      stepOf(record, 'delete-owner-record').endedAt ?? this.journal.now().toISOString(),
    );
    const bucket = record.source.backupBucket;
    if (!bucket) throw new NotFoundError(`source seed ${record.source.name} has no backup bucket`);
    const store = this.options.snapshots(bucket);
    const notBefore = Math.floor((ownerChangedAt - SEED_CLOCK_LAG_MS) / 1000);
    const every = this.options.lookEveryMs ?? DEFAULT_FINAL_SNAPSHOT_LOOK_EVERY_MS;
    const wait = this.options.waitFinalSnapshotMs ?? 600_000;
    const started = Date.parse(stepOf(record, 'wait-final-snapshot').startedAt ?? this.journal.now().toISOString());
    const left = wait - (this.journal.now().getTime() - started);
    const lookFor = Math.max(0, Math.min(this.options.lookForMs ?? DEFAULT_FINAL_SNAPSHOT_LOOK_FOR_MS, left));
    const elapsed = this.options.elapsed ?? (() => performance.now());
    const sleep = this.options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    // By the clock, not by a count of looks: a slow listing must not stretch the call towards the function's timeout.
    const until = elapsed() + lookFor;
    for (;;) {
      const final = currentFinalSnapshot(await store.list(record.shoot.technicalID), { notBefore });
      if (final) {
        // Read again: the record may have changed while this call looked (the journal's save is conditional).
        await this.journal.save(
          completeStep(await this.journal.current(ref), {
            step: 'wait-final-snapshot',
            now: this.journal.now(),
            message: `final snapshot ${final.name}`,
          }),
        );
        return { found: true, deadlinePassed: false, snapshot: final.name };
      }
      const remaining = until - elapsed();
      if (remaining <= 0) break;
      await sleep(Math.min(every, remaining));
    }
    // A look the deadline cut short has used the wait up: no second call for the rest of a millisecond.
    return { found: false, deadlinePassed: lookFor === left || this.journal.now().getTime() - started >= wait };
  }
}
