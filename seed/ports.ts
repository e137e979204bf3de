import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/** A port number as a flag gives it (0 included: a free one), or undefined where the text is none. */
export function portNumber(text: string): number | undefined {
  const n = Number(text);
  return text.trim() === '' || !Number.isInteger(n) || n < 0 || n > 65_535 ? undefined : n;
}

/** A free TCP port on loopback, chosen by the kernel. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/**
 * `count` distinct free ports: every listener is held until all are bound, so the kernel cannot hand
 * out one port twice (one freePort() after another can: a closed port is free again at once).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolve, reject) => {
            server.unref();
            server.once('error', reject);
            server.listen(0, '127.0.0.1', () => {
              const address = server.address();
              if (typeof address === 'object' && address) resolve(address.port);
              else reject(new Error('no port'));
            });
          }),
      ),
    );
  } finally {
    await Promise.all(
      servers.map((server) => new Promise<void>((done) => (server.listening ? server.close(() => done()) : done()))),
    );
  }
}

/** Whether every port can be bound on loopback right now (none is held by another process). */
export async function portsFree(ports: readonly number[]): Promise<boolean> {
  const results = await Promise.all(
    ports.map(
      (port) =>
        new Promise<boolean>((resolve) => {
          const server = createServer();
          server.unref();
          server.once('error', () => resolve(false));
          server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
        }),
    ),
  );
  return results.every(Boolean);
}

/** The lowest port `plannedPorts` hands out: above the registered ports most local services use. */
const PLANNED_LOW = 20_000;

/** Where the kernel's ephemeral ports begin (Linux: ip_local_port_range; its default elsewhere). */
export function ephemeralLow(file = '/proc/sys/net/ipv4/ip_local_port_range'): number {
  try {
    const low = Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * The ports this process planned lately, handed out once each: a fenced etcd leaves its client port
 * unbound, and a check that binds it finds it free. Bounded, so that a long-lived agent never runs out.
 */
const recentlyPlanned = new Set<number>();
const REMEMBERED = 2_048;

function remember(port: number): void {
  recentlyPlanned.add(port);
  if (recentlyPlanned.size > REMEMBERED) recentlyPlanned.delete(recentlyPlanned.values().next().value!);
}

/**
 * `count` distinct loopback ports for servers that bind them later and again: an etcd's client, peer and
 * private ports, which it leaves and binds again on every fence and unfence. Chosen below the kernel's
 * ephemeral range, so that no socket bound to port 0 (another plane's stand-in, a test's server) and no
 * outgoing connection's local port can take one between its allocation and the bind, or while a fenced
 * etcd leaves its client port unbound: `freePorts` hands out ephemeral ports, free only at that moment.
 * Random in the range, bound once to check each is free now, none this process planned lately and none
 * of `avoid` (the caller's other ports). Where the range is too small (an ephemeral range starting low),
 * the kernel chooses.
 */
export async function plannedPorts(
  count: number,
  options: { avoid?: ReadonlySet<number>; random?: () => number; low?: number; high?: number } = {},
): Promise<number[]> {
  const low = options.low ?? PLANNED_LOW;
  const high = options.high ?? ephemeralLow() - 1;
  if (high - low + 1 < 100 * count) return freePorts(count);
  const random = options.random ?? Math.random;
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    for (let attempt = 0; ports.length < count; attempt++) {
      if (attempt >= 50 * count) throw new Error(`no ${count} free ports in ${low}-${high} after ${attempt} attempts`);
      const port = low + Math.floor(random() * (high - low + 1));
      if (ports.includes(port) || recentlyPlanned.has(port) || options.avoid?.has(port)) continue;
      const server = await bound(port);
      if (server === undefined) continue;
      held.push(server);
      ports.push(port);
    }
    ports.forEach(remember);
    return ports;
  } finally {
    await Promise.all(held.map((server) => new Promise<void>((done) => server.close(() => done()))));
  }
}

/** A listener on the port, or undefined where something holds it. */
function bound(port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/** The three distinct loopback ports one etcd listens on: clients, the sidecar's private address, peers. */
export async function freeEtcdPorts(): Promise<{ clientPort: number; privatePort: number; peerPort: number }> {
  const [clientPort, privatePort, peerPort] = await plannedPorts(3);
  return { clientPort: clientPort!, privatePort: privatePort!, peerPort: peerPort! };
}
