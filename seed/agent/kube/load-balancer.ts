import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { MAX_HELLO_BYTES, readSni } from './sni.js';

export interface LoadBalancerRoute {
  /** The name clients ask for (the shoot's API domain), as SNI. */
  serverName: string;
  /** The kube-apiserver's internal address. */
  backend: { host: string; port: number };
  /**
   * Whether the control plane may serve: its etcd serves as this seed's, unfenced. Asked every
   * `checkIntervalMs`; a route forwards only while the last answer was yes and is at most `leaseMs` old.
   * Undefined (or a throw): nobody answered, which changes nothing until the lease runs out.
   */
  serving: () => Promise<boolean | undefined>;
}

export interface SniLoadBalancerOptions {
  host: string;
  /** The landscape's one port for every seed's load balancer (0: a free one). */
  port: number;
  checkIntervalMs?: number;
  leaseMs?: number;
  /** How long a client may take to send its ClientHello. */
  helloTimeoutMs?: number;
  log?: (entry: Record<string, unknown>) => void;
}

interface RouteState extends LoadBalancerRoute {
  technicalID: string;
  lastOkAt: number;
  ok: boolean;
  broken: boolean;
  timer?: NodeJS.Timeout;
  checking: boolean;
  sockets: Set<Socket>;
}

/**
 * A seed's load balancer for its shoots' kube-apiservers: one address and port for every shoot (a real
 * seed's ingress IP on 443), TLS passed through untouched and routed by the name the client asks for, so
 * that the API domain alone chooses the shoot and the API record alone chooses the seed.
 *
 * A fenced control plane serves nothing (docs/design.md section 4): a route forwards only while its
 * control plane's etcd serves as this seed's, checked every `checkIntervalMs` (250 ms), and only on a yes
 * at most `leaseMs` (2.5 s) old. The moment a check says no, every connection of the route is cut, so
 * a kube-apiserver whose etcd was fenced (whose watch cache would go on answering) is off the load balancer
 * within a check of the fence; a check nobody answered (a sidecar's status late on a loaded machine) cuts
 * nothing, and only the lease bounds how long the route goes on without a yes; and a load balancer whose
 * process was frozen forwards nothing when it thaws before a fresh check allowed it, since every chunk in
 * either direction is checked against the lease.
 */
export class SniLoadBalancer {
  private readonly routes = new Map<string, RouteState>();
  private readonly byName = new Map<string, RouteState>();
  /** Names handed over to another load balancer (the shoot moved), until when. */
  private readonly handedOver = new Map<string, { target: { host: string; port: number }; until: number }>();
  private readonly pending = new Set<Socket>();

  private constructor(
    private readonly options: SniLoadBalancerOptions,
    private readonly server: Server,
  ) {}

  static async start(options: SniLoadBalancerOptions): Promise<SniLoadBalancer> {
    const ref: { self?: SniLoadBalancer } = {};
    const server = createServer((client) => ref.self!.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
    ref.self = new SniLoadBalancer(options, server);
    return ref.self;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get host(): string {
    return this.options.host;
  }

  /** What the garden points API records at and probes: `https://<address>:<port>`. */
  get url(): string {
    return `https://${this.options.host}:${this.port}`;
  }

  /**
   * Routes the shoot's name to its kube-apiserver, replacing an earlier route of the shoot. The same route
   * again (a control plane started anew around a kube-apiserver that runs) keeps its connections.
   */
  route(technicalID: string, route: LoadBalancerRoute): void {
    const existing = this.routes.get(technicalID);
    if (
      existing?.serverName === route.serverName.toLowerCase() &&
      existing.backend.host === route.backend.host &&
      existing.backend.port === route.backend.port
    ) {
      existing.serving = route.serving;
      return;
    }
    this.unroute(technicalID);
    const state: RouteState = {
      ...route,
      serverName: route.serverName.toLowerCase(),
      technicalID,
      lastOkAt: 0,
      ok: false,
      broken: false,
      checking: false,
      sockets: new Set(),
    };
    this.routes.set(technicalID, state);
    this.byName.set(state.serverName, state);
    void this.check(state);
  }

  /** Takes the shoot off: no new connection, every open one cut. */
  unroute(technicalID: string): void {
    const state = this.routes.get(technicalID);
    if (!state) return;
    clearTimeout(state.timer);
    this.routes.delete(technicalID);
    if (this.byName.get(state.serverName) === state) this.byName.delete(state.serverName);
    cut(state);
  }

  /**
   * The shoot moved to the load balancer at `target` (the API record names it now): until `until`, a new
   * connection for `serverName` that no open route here takes is passed on to it untouched. Nothing here
   * serves it: TLS runs end to end, and the target admits the connection only while its own control plane
   * serves. A target that is this load balancer is refused (a loop).
   */
  handOver(serverName: string, target: { host: string; port: number }, until: Date): boolean {
    if (target.host === this.options.host && target.port === this.port) return false;
    this.handedOver.set(serverName.toLowerCase(), { target, until: until.getTime() });
    this.options.log?.({ event: 'lb-hand-over', serverName, target: `${target.host}:${target.port}`, until });
    return true;
  }

  /** Whether a shoot's route forwards now. */
  forwarding(technicalID: string): boolean {
    const state = this.routes.get(technicalID);
    return state !== undefined && this.open(state);
  }

  /** A test seam: a broken load balancer refuses the shoot's connections and drops those it carries. */
  break(technicalID: string, broken: boolean): void {
    const state = this.routes.get(technicalID);
    if (!state) return;
    state.broken = broken;
    if (broken) cut(state);
  }

  async stop(): Promise<void> {
    for (const id of [...this.routes.keys()]) this.unroute(id);
    for (const s of this.pending) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private open(state: RouteState): boolean {
    return state.ok && !state.broken && Date.now() - state.lastOkAt <= (this.options.leaseMs ?? DEFAULT_LEASE_MS);
  }

  private async check(state: RouteState): Promise<void> {
    if (this.routes.get(state.technicalID) !== state || state.checking) return;
    state.checking = true;
    let ok: boolean | undefined;
    try {
      ok = await state.serving();
    } catch {
      ok = undefined;
    } finally {
      state.checking = false;
    }
    if (this.routes.get(state.technicalID) !== state) return;
    if (ok === undefined) {
      // Not answered: nothing learnt. The lease, not renewed, ends the route if the silence lasts.
    } else if (ok) {
      // The route's first yes: the shoot is back and serves here, and its own route decides again. Not
      // before (a kube-apiserver that starts): until then a connection is better passed on to where the
      // shoot still serves. A hand-over sent after it stays (the shoot is moving away).
      if (state.lastOkAt === 0) this.handedOver.delete(state.serverName);
      if (!state.ok) this.options.log?.({ event: 'lb-route-opened', shoot: state.technicalID });
      state.lastOkAt = Date.now();
    } else if (state.ok) {
      this.options.log?.({ event: 'lb-route-closed', shoot: state.technicalID, connections: state.sockets.size });
      cut(state);
    }
    if (ok !== undefined) state.ok = ok;
    state.timer = setTimeout(() => void this.check(state), this.options.checkIntervalMs ?? 250);
    state.timer.unref();
  }

  private accept(client: Socket): void {
    this.pending.add(client);
    client.on('error', () => undefined);
    let hello = Buffer.alloc(0);
    let passedOn = false;
    const timer = setTimeout(() => client.destroy(), this.options.helloTimeoutMs ?? 5_000);
    const onData = (chunk: Buffer) => {
      hello = Buffer.concat([hello, chunk]);
      if (!passedOn && hello[0] === PASSED_ON[0]) {
        // Passed on by another load balancer: served here or not at all, never passed on again (no loop
        // between two load balancers that each hand the name over to the other).
        if (hello.length < PASSED_ON.length) return;
        if (!hello.subarray(0, PASSED_ON.length).equals(PASSED_ON)) {
          client.destroy();
          return;
        }
        passedOn = true;
        hello = hello.subarray(PASSED_ON.length);
      }
      const sni = readSni(hello);
      if (sni.kind === 'incomplete' && hello.length < MAX_HELLO_BYTES) return;
      clearTimeout(timer);
      client.off('data', onData);
      client.pause();
      this.pending.delete(client);
      const state = sni.kind === 'name' ? this.byName.get(sni.name) : undefined;
      if (state && this.open(state)) {
        this.forward(client, state, hello);
        return;
      }
      const handedOver = sni.kind === 'name' ? this.handedOver.get(sni.name) : undefined;
      if (handedOver && !passedOn && Date.now() < handedOver.until) {
        this.passOn(client, handedOver.target, hello);
        return;
      }
      client.destroy();
    };
    client.on('data', onData);
    client.once('close', () => {
      clearTimeout(timer);
      this.pending.delete(client);
    });
  }

  private forward(client: Socket, state: RouteState, hello: Buffer): void {
    const upstream = connect(state.backend.port, state.backend.host);
    upstream.on('error', () => undefined);
    for (const s of [client, upstream]) {
      state.sockets.add(s);
      s.once('close', () => state.sockets.delete(s));
    }
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    upstream.write(hello);
    // Each chunk is checked against the lease: a fence cuts the route, and a thaw finds it expired.
    const relay = (from: Socket, to: Socket) => {
      from.on('data', (chunk: Buffer) => {
        if (!this.open(state)) {
          cut(state);
          return;
        }
        if (!to.write(chunk)) {
          from.pause();
          to.once('drain', () => from.resume());
        }
      });
      from.once('end', () => to.end());
    };
    relay(client, upstream);
    relay(upstream, client);
    client.resume();
  }

  /** A handed-over connection: relayed as it is to the other load balancer, which decides whether it serves. */
  private passOn(client: Socket, target: { host: string; port: number }, hello: Buffer): void {
    const upstream = connect(target.port, target.host);
    upstream.on('error', () => undefined);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    upstream.write(Buffer.concat([PASSED_ON, hello]));
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  }
}

/**
 * How long a route forwards after its last yes: longer than two status calls that time out (1 s each), so
 * that a sidecar late on a loaded machine does not cut the shoot's connections; far inside the fence bound.
 */
const DEFAULT_LEASE_MS = 2_500;

/**
 * What a load balancer sends ahead of a connection it passes on: a PROXY protocol (v1) header, which only
 * marks it as passed on (a ClientHello never begins with it).
 */
const PASSED_ON = Buffer.from('PROXY UNKNOWN\r\n', 'latin1');

function cut(state: RouteState): void {
  for (const s of state.sockets) s.destroy();
  state.sockets.clear();
}
