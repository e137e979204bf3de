import { connect, createServer, type Server, type Socket } from 'node:net';

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
    client.on('close', close);
    upstream.on('close', close);
    client.pipe(upstream).pipe(client);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (cause) => reject(new TcpProxyError(`proxy ${label}: cannot listen on 127.0.0.1`, { cause })));
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new TcpProxyError(`proxy ${label}: no address after listen`);

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
