import { createServer, connect, type Server, type Socket } from 'node:net';

/** Closed: nothing listens. Holding: connections are taken and wait, unanswered. Open: they are forwarded. */
export type GateState = 'closed' | 'holding' | 'open';

/**
 * The public client address of a single etcd, owned by the sidecar: while open it forwards every
 * connection to etcd's private address, byte for byte; while closed nothing listens there, so clients
 * are refused exactly as by an etcd that is gone. Serving and fencing then move no etcd between
 * addresses: etcd keeps running on the private address and only the gate opens or closes, which takes
 * no time that grows with etcd's size (a restart of etcd 3.4 rebuilds its index from the whole
 * database). Closing cuts every connection the gate forwards: a response etcd sends after that reaches
 * no client, so nothing acknowledged can follow a close.
 *
 * The kube-apiserver's own address to etcd is a gate of the same kind that can also hold: it takes
 * connections and forwards nothing until it opens (or cuts them when it closes). A client's connection
 * attempt then completes the moment the gate opens, instead of after the gRPC reconnect back-off a
 * refused attempt starts (1 s, growing to two minutes).
 */
export class PublicGate {
  private server: Server | undefined;
  private state_: GateState = 'closed';
  private readonly connections = new Set<Socket>();
  private readonly held = new Set<Socket>();

  constructor(
    private readonly options: { readonly host: string; readonly port: number; readonly targetPort: number },
  ) {}

  get isOpen(): boolean {
    return this.state_ === 'open';
  }

  get state(): GateState {
    return this.state_;
  }

  /** Listens on the address (if it does not) and forwards every connection, those it held first. */
  async open(): Promise<void> {
    if (this.state_ === 'open') return;
    await this.listen();
    this.state_ = 'open';
    const held = [...this.held];
    this.held.clear();
    for (const client of held) this.forward(client);
  }

  /**
   * Listens on the address (if it does not) and holds every new connection unanswered; the connections it
   * forwarded are cut, so that nothing a client sends reaches etcd until the gate opens again.
   */
  async hold(): Promise<void> {
    if (this.state_ === 'holding') return;
    await this.listen();
    this.state_ = 'holding';
    this.cut(this.connections);
  }

  /** Stops listening and cuts every connection, forwarded or held; resolves once the address is free again. */
  async close(): Promise<void> {
    const server = this.server;
    this.state_ = 'closed';
    if (server === undefined) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    this.cut(this.connections);
    this.cut(this.held);
    await closed;
  }

  private async listen(): Promise<void> {
    if (this.server) return;
    const server = createServer({ noDelay: true }, (client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: this.options.host, port: this.options.port, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
  }

  private accept(client: Socket): void {
    if (this.state_ === 'open') return this.forward(client);
    if (this.state_ === 'closed') return void client.destroy();
    client.pause();
    this.held.add(client);
    client.on('error', () => undefined);
    client.once('close', () => this.held.delete(client));
  }

  private forward(client: Socket): void {
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
    client.resume();
  }

  private cut(sockets: Set<Socket>): void {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  }
}
