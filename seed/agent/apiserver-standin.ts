import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  connect,
  createServer as createTcpServer,
  type AddressInfo,
  type Server as TcpServer,
  type Socket,
} from 'node:net';

export interface ApiServerStandInOptions {
  technicalID: string;
  /** Whether etcd serves: the stand-in is healthy only while it does, as a kube-apiserver is. */
  etcdAvailable: () => Promise<boolean>;
  host?: string;
  /** The load balancer's address (default `host`): local seeds each take a loopback address of their own, so DNS can tell them apart. */
  externalHost?: string;
  /** The load balancer's port (default a free one): the same on every seed, as 443 is, lets a name alone choose the seed. */
  externalPort?: number;
  /** Which seed serves, shown by `/version`: what a client that resolved the API domain reached. */
  seed?: string;
}

/**
 * A kube-apiserver stand-in for one shoot: an HTTP server on its **internal** address (what the seed
 * agent probes from inside the seed) and a TCP proxy in front of it as the **external** address (the
 * load balancer the garden probes). Tests break either separately (`breakInternal`, `breakExternal`, or
 * `POST /_gardenless/break?address=internal|external&broken=true|false` on the internal address): a
 * broken load balancer with a healthy server behind it is exactly the case the dependency watchdog's
 * external probe exists for.
 */
export class ApiServerStandIn {
  private internalBroken = false;
  private externalBroken = false;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly options: ApiServerStandInOptions,
    private readonly http: Server,
    private readonly proxy: TcpServer,
    readonly internalUrl: string,
    readonly externalUrl: string,
  ) {}

  static async start(options: ApiServerStandInOptions): Promise<ApiServerStandIn> {
    const host = options.host ?? '127.0.0.1';
    // The servers' handlers need the instance, which needs the servers' ports: filled in below.
    const ref: { self?: ApiServerStandIn } = {};
    const http = createHttpServer((req, res) => void ref.self!.handle(req, res));
    await listen(http, host);
    const internalPort = (http.address() as AddressInfo).port;
    const proxy = createTcpServer((client) => ref.self!.forward(client, host, internalPort));
    const externalHost = options.externalHost ?? host;
    await listen(proxy, externalHost, options.externalPort ?? 0);
    const externalPort = (proxy.address() as AddressInfo).port;
    ref.self = new ApiServerStandIn(
      options,
      http,
      proxy,
      `http://${host}:${internalPort}`,
      `http://${externalHost}:${externalPort}`,
    );
    return ref.self;
  }

  breakInternal(broken = true): void {
    this.internalBroken = broken;
  }

  breakExternal(broken = true): void {
    this.externalBroken = broken;
    // A broken load balancer drops the connections it carries, not only new ones.
    if (broken) for (const s of this.sockets) s.destroy();
  }

  get broken(): { internal: boolean; external: boolean } {
    return { internal: this.internalBroken, external: this.externalBroken };
  }

  /** The dependency watchdog's internal probe: `/healthz` on the internal address, with a timeout. */
  async probeInternal(timeoutMs = 1_000): Promise<'Success' | 'Failure'> {
    try {
      const res = await fetch(`${this.internalUrl}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
      await res.arrayBuffer();
      return res.status === 200 ? 'Success' : 'Failure';
    } catch {
      // Refused, reset or timed out: the server is not reachable from inside the seed.
      return 'Failure';
    }
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.http.closeAllConnections();
    await Promise.all([close(this.http), close(this.proxy)]);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://standin');
    if (url.pathname === '/_gardenless/break' && req.method === 'POST') {
      const broken = url.searchParams.get('broken') !== 'false';
      const address = url.searchParams.get('address');
      if (address === 'internal') this.breakInternal(broken);
      else if (address === 'external') this.breakExternal(broken);
      else return send(res, 400, { error: 'address must be internal or external' });
      return send(res, 200, this.broken);
    }
    if (this.internalBroken) {
      // A hung or crashed server: the connection goes away without an answer.
      req.socket.destroy();
      return;
    }
    if (['/healthz', '/readyz', '/livez'].includes(url.pathname)) {
      const ok = await this.options.etcdAvailable().catch(() => false);
      return text(res, ok ? 200 : 500, ok ? 'ok' : '[-]etcd failed: etcd is not serving');
    }
    if (url.pathname === '/version') {
      return send(res, 200, {
        major: '1',
        minor: '31',
        gitVersion: 'v1.31.0-gardenless-standin',
        shoot: this.options.technicalID,
        ...(this.options.seed ? { seed: this.options.seed } : {}),
      });
    }
    send(res, 404, {
      kind: 'Status',
      status: 'Failure',
      code: 404,
      reason: 'NotFound',
      message: `the stand-in serves no ${url.pathname}`,
    });
  }

  private forward(client: Socket, host: string, port: number): void {
    if (this.externalBroken) {
      client.destroy();
      return;
    }
    const upstream = connect(port, host);
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
      // A reset on either side closes the pair; nothing to report.
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  }
}

function listen(server: Server | TcpServer, host: string, port = 0): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

function close(server: Server | TcpServer): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

function text(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
