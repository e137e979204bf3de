import { createServer } from 'node:net';

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
    await Promise.all(servers.map((server) => new Promise<void>((done) => (server.listening ? server.close(() => done()) : done()))));
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

/** The three distinct loopback ports one etcd listens on: clients, the sidecar's private address, peers. */
export async function freeEtcdPorts(): Promise<{ clientPort: number; privatePort: number; peerPort: number }> {
  const [clientPort, privatePort, peerPort] = await freePorts(3);
  return { clientPort: clientPort!, privatePort: privatePort!, peerPort: peerPort! };
}
