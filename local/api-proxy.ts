import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, isIP, type AddressInfo, type Socket } from 'node:net';
import type { ApiRecord } from '../core/dns/index.js';

/** Reads one API record: the Route 53 zone of the external domain (`Route53ApiRecords.get`). */
export type ApiRecordLookup = (name: string) => Promise<ApiRecord | undefined>;

export interface ApiDomainProxyOptions {
  /** The external domain: only names under it are resolved and tunnelled (no open proxy). */
  domain: string;
  lookup: ApiRecordLookup;
  host?: string;
  /** 0: a free port. */
  port?: number;
  now?: () => number;
  log?: (entry: Record<string, unknown>) => void;
}

interface Resolved {
  address: string;
  expiresAt: number;
}

/** How many CNAMEs are followed before the name counts as unresolvable (a loop). */
const MAX_CNAME_DEPTH = 8;

/**
 * The local landscape's way to reach a shoot's API domain without touching the machine's resolver or
 * /etc/hosts: an HTTP CONNECT proxy that kubeconfigs name as `proxy-url` (client-go sends the host name
 * in the CONNECT line, so the name is resolved here, not by the client). It resolves the name as a caching
 * resolver in front of Route 53 would: from the API record in the zone, each answer reused for the
 * record's TTL, so after a migration switches the record, clients reach the new seed once the old answer
 * expires, as on AWS. Only names under the external domain are tunnelled.
 */
export class ApiDomainProxy {
  private readonly cache = new Map<string, Resolved>();
  private readonly inFlight = new Map<string, Promise<Resolved>>();
  private readonly sockets = new Set<Socket>();
  private readonly now: () => number;

  private constructor(
    private readonly server: Server,
    private readonly options: ApiDomainProxyOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
  }

  static async start(options: ApiDomainProxyOptions): Promise<ApiDomainProxy> {
    const server = createServer((_req, res) => {
      res.writeHead(405, { 'content-type': 'text/plain' });
      res.end('only CONNECT to a shoot API domain\n');
    });
    const proxy = new ApiDomainProxy(server, options);
    server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => void proxy.tunnel(req, client, head));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  /** `http://host:port`: what kubeconfigs name as `proxy-url`. */
  get url(): string {
    const { address, port } = this.server.address() as AddressInfo;
    return `http://${address}:${port}`;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async tunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    this.track(client);
    client.on('error', () => client.destroy());
    const target = parseAuthority(req.url ?? '');
    if (!target || !this.inDomain(target.host)) return refuse(client, 403, 'not a shoot API domain');
    let address: string;
    try {
      address = (await this.resolve(target.host)).address;
    } catch (error) {
      this.options.log?.({ event: 'api-proxy-unresolved', name: target.host, error: String(error) });
      return refuse(client, 502, `cannot resolve ${target.host}`);
    }
    const upstream = connect(target.port, address);
    this.track(upstream);
    let established = false;
    upstream.once('connect', () => {
      established = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    // Before the tunnel stands, the client is told why; after, a cut upstream cuts the client (as a TCP reset would).
    upstream.on('error', () => (established ? client.destroy() : refuse(client, 502, `cannot reach ${address}`)));
    upstream.once('close', () => established && client.destroy());
    client.once('close', () => upstream.destroy());
  }

  private inDomain(host: string): boolean {
    const name = host.toLowerCase().replace(/\.$/, '');
    return name.endsWith(`.${this.options.domain.toLowerCase()}`);
  }

  /** One lookup per name at a time; an answer is kept for its TTL, a failure not at all. */
  private resolve(name: string): Promise<Resolved> {
    const key = name.toLowerCase().replace(/\.$/, '');
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > this.now()) return Promise.resolve(cached);
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.lookup(key, 0).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async lookup(name: string, depth: number): Promise<Resolved> {
    const record = await this.options.lookup(name);
    if (!record) throw new Error(`no API record ${name}`);
    const expiresAt = this.now() + record.ttl * 1_000;
    let resolved: Resolved;
    if (record.type !== 'CNAME') resolved = { address: record.value, expiresAt };
    else if (depth >= MAX_CNAME_DEPTH || !this.inDomain(record.value))
      throw new Error(`${name} is a CNAME to ${record.value}, which this proxy does not resolve`);
    else {
      const next = await this.lookup(record.value, depth + 1);
      resolved = { address: next.address, expiresAt: Math.min(expiresAt, next.expiresAt) };
    }
    this.cache.set(name, resolved);
    return resolved;
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }
}

/** `host:port` or `[v6]:port` of a CONNECT line; undefined when it is not one. */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const host = match[1] ?? match[2]!;
  const port = Number(match[3]);
  if (port < 1 || port > 65_535 || (match[1] !== undefined && isIP(host) !== 6)) return undefined;
  return { host, port };
}

function refuse(client: Socket, status: 403 | 502, reason: string): void {
  const text = status === 403 ? 'Forbidden' : 'Bad Gateway';
  if (client.writable) client.end(`HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain\r\n\r\n${reason}\n`);
}
