import { Etcd3 } from 'etcd3';
import { groupByRevision, type DeltaEvent } from './delta-format.js';
import { RestoreRevisionError } from './errors.js';

export interface ReplayResult {
  /** Transactions written. */
  readonly transactions: number;
  /** Events skipped because the data already held their revision (an overlapping delta). */
  readonly skippedEvents: number;
  readonly revision: number;
}

/** The current revision of the etcd at `endpoint`. */
export async function currentRevision(client: Etcd3): Promise<number> {
  const res = await client.kv.range({ key: Buffer.from([0]), range_end: Buffer.from([0]), limit: '1', keys_only: true });
  return Number(res.header.revision);
}

/**
 * Replays delta events into a running etcd, one transaction per original revision, so every event lands
 * on exactly the revision it had. Events at or below the current revision are already there (the full
 * snapshot or an earlier delta holds them) and are skipped. A transaction that lands anywhere else means
 * a revision is missing or doubled: `RestoreRevisionError`, before anything else is written.
 */
export async function replayEvents(input: { client: Etcd3; events: readonly DeltaEvent[]; fromRevision: number }): Promise<ReplayResult> {
  let revision = input.fromRevision;
  let transactions = 0;
  let skippedEvents = 0;
  for (const group of groupByRevision(input.events)) {
    if (group.revision <= revision) {
      skippedEvents += group.events.length;
      continue;
    }
    if (group.revision !== revision + 1) {
      throw new RestoreRevisionError(`the deltas jump from revision ${revision} to ${group.revision}: revisions in between are in no snapshot`, {
        expected: revision + 1,
        actual: group.revision,
      });
    }
    const res = await input.client.kv.txn({
      compare: [],
      success: group.events.map((e) =>
        e.type === 'put'
          ? { request_put: { key: Buffer.from(e.key, 'base64'), value: Buffer.from(e.value ?? '', 'base64') } }
          : { request_delete_range: { key: Buffer.from(e.key, 'base64') } },
      ),
    });
    const landed = Number(res.header.revision);
    if (landed !== group.revision) {
      throw new RestoreRevisionError(`replayed revision ${group.revision} landed on revision ${landed}`, { expected: group.revision, actual: landed });
    }
    revision = landed;
    transactions += 1;
  }
  return { transactions, skippedEvents, revision };
}
