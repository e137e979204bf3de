import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * The public client address of a single etcd, owned by the sidecar: while open it forwards every
 * connection to etcd's private address, byte for byte; while closed nothing listens there, so clients
 * are refused exactly as by an etcd that is gone. Serving and fencing then move no etcd between
 * addresses: etcd keeps running on the private address and only the gate opens or closes, which takes
 * no time that grows with etcd's size (a restart of etcd 3.4 rebuilds its index from the whole
 * database). Closing cuts every connection the gate forwards: a response etcd sends after that reaches
 * no client, so nothing acknowledged can follow a close.
 */
export class PublicGate {
  private server: Server | undefined;
  private readonly connections = new Set<Socket>();

  constructor(
    private readonly options: { readonly host: string; readonly port: number; readonly targetPort: number },
  ) {}

  get isOpen(): boolean {
    return this.server !== undefined;
  }

  /** Listens on the public address (a no-op when open). */
  async open(): Promise<void> {
    if (this.server) return;
    const server = createServer({ noDelay: true }, (client) => this.forward(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: this.options.host, port: this.options.port, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
  }

  /** Stops listening and cuts every forwarded connection; resolves once the address is free again. */
  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.connections) socket.destroy();
    this.connections.clear();
    await closed;
  }

  private forward(client: Socket): void {
    if (this.server === undefined) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: this.options.host, port: this.options.targetPort, noDelay: true });
    for (const socket of [client, upstream]) {
      this.connections.add(socket);
      // Either side ending or failing ends both: a half-open pair would hold a client on a dead etcd.
      socket.once('close', () => {
        this.connections.delete(socket);
        client.destroy();
        upstream.destroy();
      });
      socket.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
