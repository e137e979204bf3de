import type { Etcd3, IWatchResponse } from 'etcd3';

export interface WatchAllHandlers {
  data(res: IWatchResponse): void;
  /** The watch is over for good (cancelled by etcd, for example its revisions compacted). */
  error(error: unknown): void;
}

export interface WatchAll {
  /** Cancels a watch etcd has not ended; bounded, since a stream that broke never answers. */
  cancel(): Promise<void>;
}

const CANCEL_TIMEOUT_MS = 2_000;

/**
 * A watch of every key from `fromRevision`. Its handlers are attached before etcd can answer: etcd
 * cancels a watch of compacted revisions right after creating it, and the client library's `create()`
 * hands that error to a listener of its own, so its caller would wait for events that never come. And
 * a cancel of a watch etcd already ended waits for an answer that never comes either. `prevKv` asks for
 * each event's previous key-value.
 */
export async function watchAll(
  client: Etcd3,
  fromRevision: number,
  handlers: WatchAllHandlers,
  options: { prevKv?: boolean } = {},
): Promise<WatchAll> {
  const builder = client
    .watch()
    .inRange({ start: Buffer.from([0]), end: Buffer.from([0]) })
    .startRevision(String(fromRevision));
  // The previous key-value of each event: what the key-space digest takes out (`KeySpaceTracker`).
  const watcher = (options.prevKv ? builder.withPreviousKV() : builder).watcher();
  let ended = false;
  watcher.on('data', (res: IWatchResponse) => handlers.data(res));
  watcher.on('end', () => (ended = true));
  watcher.on('error', (error: unknown) => {
    ended = true;
    handlers.error(error);
  });
  const handle: WatchAll = {
    async cancel() {
      if (ended) return;
      ended = true;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, CANCEL_TIMEOUT_MS)));
      await Promise.race([watcher.cancel().catch(() => undefined), timeout]);
      clearTimeout(timer);
    },
  };
  await new Promise<void>((resolve, reject) => {
    watcher.once('connected', () => resolve());
    watcher.once('error', reject);
  });
  return handle;
}
