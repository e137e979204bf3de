import { Etcd3 } from 'etcd3';
import { DeltaBuffer, type PendingDelta } from './delta-buffer.js';
import { HistoryUnavailableError } from './errors.js';
import { KeySpaceTracker, type DigestAt } from './key-space.js';
import { currentRevision } from './replay.js';
import { watchAll, type WatchAll } from './watch-all.js';
import { watchEvents } from './watch-events.js';

export interface ReadHistoryOptions {
  /** An etcd no client writes to any more (a fenced one on its private address): its revision stays put. */
  readonly endpoint: string;
  /** The first revision wanted: one after the store's last. */
  readonly fromRevision: number;
  /** How long the watch may take to deliver them (default 30 s). */
  readonly timeoutMs?: number;
  /** The key-space digest at `fromRevision - 1` or later, if known: the delta then names the digest at its end. */
  readonly digestFrom?: DigestAt;
}

/** The delta, and the key-space digest at its last revision where `digestFrom` was given. */
export interface ReadDelta extends PendingDelta {
  readonly digest?: string;
}

/**
 * Every event of a fenced etcd from `fromRevision` to its current revision, as one delta. When the
 * store already holds the current revision (`fromRevision` is past it), the delta holds that revision's
 * events again: the restorer skips them, and the delta still marks where the history ends.
 */
export async function readHistory(options: ReadHistoryOptions): Promise<ReadDelta> {
  const client = new Etcd3({ hosts: options.endpoint });
  let watch: WatchAll | undefined;
  try {
    const current = await currentRevision(client);
    // An etcd that never took a write is at revision 1, which no event carries.
    if (current <= 1)
      return {
        startRevision: current,
        lastRevision: current,
        events: [],
        ...(options.digestFrom?.revision === current ? { digest: options.digestFrom.digest } : {}),
      };
    const from = Math.min(options.fromRevision, current);
    const buffer = new DeltaBuffer(from - 1);
    // Known at a revision the watch reaches (from - 1 or later): every event after it is applied.
    const tracker = new KeySpaceTracker(
      options.digestFrom !== undefined && options.digestFrom.revision >= from - 1 ? options.digestFrom : undefined,
    );
    let settled = false;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          done(
            new HistoryUnavailableError(
              `the watch from revision ${from} delivered no revision ${current} within ${options.timeoutMs ?? 30_000} ms`,
            ),
          ),
        options.timeoutMs ?? 30_000,
      );
      const done = (error?: Error) => {
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      watchAll(
        client,
        from,
        {
          data: (res) => {
            buffer.add(watchEvents(res));
            tracker.apply(res.events);
            const last = res.events.at(-1);
            if (last !== undefined && Number(last.kv.mod_revision) >= current) done();
          },
          error: (error) =>
            done(
              new HistoryUnavailableError(
                `etcd cannot deliver the events from revision ${from}: ${error instanceof Error ? error.message : String(error)}`,
                { cause: error },
              ),
            ),
        },
        { prevKv: true },
      ).then(
        (created) => {
          watch = created;
          // Timed out before etcd confirmed the watch: the finally block below has run already.
          if (settled) void created.cancel();
        },
        (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
      );
    });
    const cut = buffer.cut();
    if (cut.kind !== 'delta')
      throw new HistoryUnavailableError(
        `the watch from revision ${from} delivered ${cut.kind === 'gap' ? `revision ${cut.found} first` : 'nothing'}`,
      );
    // Events after `current` cannot exist on a fenced etcd; a delta never claims more than it was asked for.
    if (cut.delta.lastRevision !== current)
      throw new HistoryUnavailableError(
        `the watch ended at revision ${cut.delta.lastRevision}, etcd is at ${current}: is it still written to?`,
      );
    const digest = tracker.at(current);
    return { ...cut.delta, ...(digest === undefined ? {} : { digest }) };
  } finally {
    // Cancelled before the client closes: a watch whose stream the close breaks is retried by the client
    // library with backoff timers, which would keep the sidecar's process alive after its shutdown.
    await watch?.cancel();
    client.close();
  }
}
