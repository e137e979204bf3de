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
  const res = await client.kv.range({
    key: Buffer.from([0]),
    range_end: Buffer.from([0]),
    limit: '1',
    keys_only: true,
  });
  return Number(res.header.revision);
}

/**
 * The etcd a replay writes to. It may run with etcd's default request limits (a single member does,
 * so that it can serve without a restart once the replay is done): a revision larger than those (a
 * prefix delete, a lease's expiry: thousands of events in one revision) is refused whole, nothing of it
 * applied; then `raiseLimits` restarts etcd with `REPLAY_LIMIT_ARGS` and the replay goes on with a new
 * client. Without `raiseLimits`, etcd takes any revision already.
 */
export class ReplayTarget {
  private current: Etcd3;
  private raised: boolean;

  constructor(private readonly options: { readonly endpoint: string; readonly raiseLimits?: () => Promise<void> }) {
    this.current = new Etcd3({ hosts: options.endpoint });
    this.raised = options.raiseLimits === undefined;
  }

  get client(): Etcd3 {
    return this.current;
  }

  /** Where etcd answers (the same across a restart for the raised limits). */
  get endpoint(): string {
    return this.options.endpoint;
  }

  /** Whether etcd's limits were raised for `error` (then the refused request can be sent again). */
  async raiseFor(error: unknown): Promise<boolean> {
    if (this.raised || !refusedForSize(error)) return false;
    this.current.close();
    await this.options.raiseLimits!();
    this.current = new Etcd3({ hosts: this.options.endpoint });
    this.raised = true;
    return true;
  }

  close(): void {
    this.current.close();
  }
}

/** etcd's refusals of a request for its size: too many operations, too many bytes for etcd or for gRPC. */
export function refusedForSize(error: unknown): boolean {
  return (
    error instanceof Error &&
    /too many operations in txn request|request is too large|larger than max/i.test(error.message)
  );
}

/**
 * Replays delta events into a running etcd, one transaction per original revision, so every event lands
 * on exactly the revision it had. Events at or below the current revision are already there (the full
 * snapshot or an earlier delta holds them) and are skipped. A transaction that lands anywhere else means
 * a revision is missing or doubled: `RestoreRevisionError`, before anything else is written.
 */
export async function replayEvents(input: {
  target: ReplayTarget;
  events: readonly DeltaEvent[];
  fromRevision: number;
  /** Collects the keys (base64) of the events replayed: what changed since `fromRevision`. */
  touched?: Set<string>;
}): Promise<ReplayResult> {
  let revision = input.fromRevision;
  let transactions = 0;
  let skippedEvents = 0;
  for (const group of groupByRevision(input.events)) {
    if (group.revision <= revision) {
      skippedEvents += group.events.length;
      continue;
    }
    if (group.revision !== revision + 1) {
      throw new RestoreRevisionError(
        `the deltas jump from revision ${revision} to ${group.revision}: revisions in between are in no snapshot`,
        {
          expected: revision + 1,
          actual: group.revision,
        },
      );
    }
    const request = {
      compare: [],
      success: group.events.map((e) =>
        e.type === 'put'
          ? {
              request_put: {
                key: Buffer.from(e.key, 'base64'),
                value: Buffer.from(e.value ?? '', 'base64'),
                // The lease is granted before (LeaseReplay): the put attaches the key to it, as on the source.
                ...(e.lease === undefined ? {} : { lease: e.lease }),
              },
            }
          : { request_delete_range: { key: Buffer.from(e.key, 'base64') } },
      ),
    };
    const res = await input.target.client.kv.txn(request).catch(async (error: unknown) => {
      if (await input.target.raiseFor(error)) return input.target.client.kv.txn(request);
      throw error;
    });
    const landed = Number(res.header.revision);
    if (landed !== group.revision) {
      throw new RestoreRevisionError(`replayed revision ${group.revision} landed on revision ${landed}`, {
        expected: group.revision,
        actual: landed,
      });
    }
    revision = landed;
    transactions += 1;
    if (input.touched) for (const e of group.events) input.touched.add(e.key);
  }
  return { transactions, skippedEvents, revision };
}
