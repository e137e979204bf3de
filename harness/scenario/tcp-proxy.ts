import { connect, createServer, type Server, type Socket } from 'node:net';
import { LinkDirection, validateLinkModel, type LinkModel } from './link-model.js';

/**
 * A loopback TCP proxy to one upstream that a test can cut and restore. Cut means what a broken
 * network means to the client: open connections die at once (so a long poll fails now, not at its
 * timeout) and new ones are reset on accept, until `restore()`.
 */

export interface TcpProxyOptions {
  /** Where the traffic goes, e.g. the emulator's host and port. */
  readonly upstream: { readonly host: string; readonly port: number };
  /** Connections held open at once; more are reset, so a runaway client cannot exhaust the test host. */
  readonly maxConnections?: number;
  /** Used in error messages only. */
  readonly label?: string;
  /** Shape every connection, each direction on its own (see link-model.ts); absent: bytes pass at once. */
  readonly link?: LinkModel;
}

export interface TcpProxy {
  readonly port: number;
  readonly label: string;
  /** True between `cut()` and `restore()`. */
  readonly isCut: boolean;
  /** Connections currently open (both sides count as one). */
  readonly openConnections: number;
  cut(): void;
  restore(): void;
  /** Closes the listener and every connection; idempotent. */
  stop(): Promise<void>;
}

export class TcpProxyError extends Error {
  override readonly name = 'TcpProxyError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

const defaultMaxConnections = 256;

export async function startTcpProxy(options: TcpProxyOptions): Promise<TcpProxy> {
  const label = options.label ?? `${options.upstream.host}:${options.upstream.port}`;
  const maxConnections = options.maxConnections ?? defaultMaxConnections;
  const link = options.link && validateLinkModel(options.link);
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let cut = false;
  let stopped: Promise<void> | undefined;

  const server: Server = createServer((client) => {
    client.on('error', () => undefined); // A reset from either side is the normal end of a cut connection.
    if (cut || stopped || pairs.size >= maxConnections) return void client.resetAndDestroy();
    const upstream = connect(options.upstream.port, options.upstream.host);
    upstream.on('error', () => undefined);
    const pair = { client, upstream };
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    if (link) {
      // A side's close waits for what it sent to cross the link: the response before it, then the end.
      shapedPipe(client, upstream, new LinkDirection(link), close);
      shapedPipe(upstream, client, new LinkDirection(link), close);
    } else {
      client.on('close', close);
      upstream.on('close', close);
      client.pipe(upstream).pipe(client);
    }
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (cause) => reject(new TcpProxyError(`proxy ${label}: cannot listen on 127.0.0.1`, { cause })));
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null)
    throw new TcpProxyError(`proxy ${label}: no address after listen`);

  const destroyAll = () => {
    for (const { client, upstream } of pairs) {
      // A reset, not a FIN: the client sees a broken connection, not a clean end of response.
      if (!client.destroyed) client.resetAndDestroy();
      upstream.destroy();
    }
    pairs.clear();
  };

  return {
    port: address.port,
    label,
    get isCut() {
      return cut;
    },
    get openConnections() {
      return pairs.size;
    },
    cut() {
      cut = true;
      destroyAll();
    },
    restore() {
      cut = false;
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        destroyAll();
      });
      return stopped;
    },
  };
}

/** Bytes waiting in one direction before reading pauses: more than 100 MB/s can have in flight over 60 ms. */
const shapedHighWater = 8 * 1024 * 1024;

/**
 * Forwards `from` to `to` with each chunk delivered when `direction` says, in order, one timer at a
 * time. Reading pauses while more than the link can have in flight waits, so a fast sender is held to
 * the rate instead of filling the proxy's memory; delivery waits for `to` to drain. `from`'s end
 * reaches `to` after its last chunk; `done` runs once everything `from` sent was delivered.
 */
function shapedPipe(from: Socket, to: Socket, direction: LinkDirection, done: () => void): void {
  const queue: { at: number; chunk: Buffer | undefined }[] = [];
  let waiting = 0;
  let timer: NodeJS.Timeout | undefined;
  let draining = false;
  let closed = false;
  const deliver = () => {
    timer = undefined;
    while (queue.length > 0 && !draining && !to.destroyed) {
      const head = queue[0]!;
      const now = performance.now();
      if (head.at > now) {
        timer = setTimeout(deliver, head.at - now);
        return;
      }
      queue.shift();
      if (head.chunk === undefined) {
        to.end();
        continue;
      }
      waiting -= head.chunk.length;
      if (from.isPaused() && waiting <= shapedHighWater / 2) from.resume();
      if (!to.write(head.chunk)) {
        draining = true;
        to.once('drain', () => {
          draining = false;
          deliver();
        });
      }
    }
    if (closed && queue.length === 0) done();
  };
  const enqueue = (chunk: Buffer | undefined) => {
    queue.push({ at: direction.send(performance.now(), chunk?.length ?? 0), chunk });
    if (timer === undefined && !draining) deliver();
  };
  from.on('data', (chunk: Buffer) => {
    waiting += chunk.length;
    if (waiting > shapedHighWater) from.pause();
    enqueue(chunk);
  });
  from.on('end', () => enqueue(undefined));
  from.on('close', (hadError: boolean) => {
    closed = true;
    if (hadError || to.destroyed) {
      if (timer) clearTimeout(timer);
      done();
    } else if (timer === undefined && !draining) deliver();
  });
  to.on('close', () => timer && clearTimeout(timer));
}
