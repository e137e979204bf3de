import { Agent, createServer as createHttpServer, get as httpGet, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startSeedProxies } from '../../../harness/scenario/seed-proxies.js';
import { requestMs, type LinkModel } from '../../../harness/scenario/link-model.js';
import { startTcpProxy, type TcpProxy } from '../../../harness/scenario/tcp-proxy.js';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (stops.length > 0) await stops.pop()!();
});

async function echoServer(): Promise<number> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.pipe(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  stops.push(
    () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return (server.address() as { port: number }).port;
}

async function proxy(options: { maxConnections?: number; link?: LinkModel } = {}): Promise<TcpProxy> {
  const p = await startTcpProxy({ upstream: { host: '127.0.0.1', port: await echoServer() }, ...options });
  stops.push(() => p.stop());
  return p;
}

/** Opens a connection; resolves once the echo of `hello` came back, or with the error that ended it. */
function roundTrip(port: number): Promise<{ socket: Socket; ended: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let resolved = false;
    const ended = new Promise<string>((r) => {
      socket.on('error', (e) => r((e as NodeJS.ErrnoException).code ?? e.message));
      socket.on('close', () => r('closed'));
    });
    stops.push(async () => void socket.destroy());
    socket.once('data', (data) => {
      resolved = true;
      resolve({ socket, ended });
      expect(data.toString()).toBe('hello');
    });
    socket.write('hello');
    void ended.then((why) => !resolved && reject(new Error(why)));
  });
}

describe('startTcpProxy', () => {
  it('passes bytes both ways on 127.0.0.1', async () => {
    const p = await proxy();
    await roundTrip(p.port);
    expect(p.openConnections).toBe(1);
  });

  it('cut breaks an open connection at once and refuses new ones; restore lets them through again', async () => {
    const p = await proxy();
    const open = await roundTrip(p.port);
    const cutAt = Date.now();
    p.cut();
    expect(await open.ended).toMatch(/ECONNRESET|closed/);
    expect(Date.now() - cutAt).toBeLessThan(200);
    await expect(roundTrip(p.port)).rejects.toThrow(/ECONNRESET|closed/);
    expect(p.isCut).toBe(true);
    p.restore();
    await roundTrip(p.port);
  });

  it('bounds the connections it holds', async () => {
    const p = await proxy({ maxConnections: 2 });
    await roundTrip(p.port);
    await roundTrip(p.port);
    await expect(roundTrip(p.port)).rejects.toThrow();
    expect(p.openConnections).toBe(2);
  });

  it('stop closes the listener and every connection, and may be called twice', async () => {
    const p = await proxy();
    const open = await roundTrip(p.port);
    await p.stop();
    expect(await open.ended).toMatch(/ECONNRESET|closed/);
    await expect(roundTrip(p.port)).rejects.toThrow(/ECONNREFUSED/);
    await p.stop();
  });
});

describe('startTcpProxy with a link model', () => {
  /** Sends `bytes` through the proxy to the echo server; resolves with what came back and the time it took. */
  function echo(port: number, bytes: Buffer): Promise<{ back: Buffer; ms: number }> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      stops.push(async () => void socket.destroy());
      const parts: Buffer[] = [];
      let received = 0;
      const started = performance.now();
      socket.on('error', reject);
      socket.on('data', (d: Buffer) => {
        parts.push(d);
        received += d.length;
        if (received >= bytes.length) resolve({ back: Buffer.concat(parts), ms: performance.now() - started });
      });
      socket.write(bytes);
    });
  }

  it('adds the round trip to a small exchange', async () => {
    const link = { latencyMs: 80, bytesPerSecond: 1e9 };
    const p = await proxy({ link });
    const { back, ms } = await echo(p.port, Buffer.from('hello'));
    expect(back.toString()).toBe('hello');
    // The model's floor: latency once, both bodies at the rate (the loopback adds only to it).
    expect(ms).toBeGreaterThanOrEqual(requestMs(link, 5, 5) - 1);
  });

  it('holds a large exchange to the rate and delivers every byte in order', async () => {
    const link = { latencyMs: 10, bytesPerSecond: 20e6 };
    const p = await proxy({ link });
    const payload = Buffer.alloc(4_000_000);
    for (let i = 0; i < payload.length; i += 4) payload.writeUInt32LE(i, i);
    const { back, ms } = await echo(p.port, payload);
    expect(back.equals(payload)).toBe(true);
    // 4 MB out and back at 20 MB/s, the echo overlapping the upload: at least one crossing at the rate.
    expect(ms).toBeGreaterThanOrEqual(200 + 10 - 1);
  });

  it('gives each connection its own rate', async () => {
    const link = { latencyMs: 0, bytesPerSecond: 5e6 };
    const p = await proxy({ link });
    const payload = Buffer.alloc(500_000, 7);
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 8 }, () => echo(p.port, payload)));
    const ms = performance.now() - started;
    for (const r of results) expect(r.back.equals(payload)).toBe(true);
    // One connection alone needs >= 100 ms; eight sharing one rate would need >= 800 ms.
    expect(Math.min(...results.map((r) => r.ms))).toBeGreaterThanOrEqual(100 - 1);
    expect(ms).toBeLessThan(800);
  });

  it('charges every HTTP request on a kept-alive connection the round trip', async () => {
    const link = { latencyMs: 40, bytesPerSecond: 1e9 };
    const connections = new Set<unknown>();
    const server: HttpServer = createHttpServer((req, res) => {
      connections.add(req.socket);
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    stops.push(
      () =>
        new Promise((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    );
    const p = await startTcpProxy({
      upstream: { host: '127.0.0.1', port: (server.address() as { port: number }).port },
      link,
    });
    stops.push(() => p.stop());
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    stops.push(async () => agent.destroy());
    const get = () =>
      new Promise<string>((resolve, reject) => {
        httpGet({ host: '127.0.0.1', port: p.port, path: '/', agent }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve(body));
        }).on('error', reject);
      });
    const started = performance.now();
    for (let i = 0; i < 5; i++) expect(await get()).toBe('ok');
    expect(performance.now() - started).toBeGreaterThanOrEqual(5 * link.latencyMs - 1);
    expect(connections.size).toBe(1);
  });

  it('refuses a model it cannot apply', async () => {
    await expect(
      startTcpProxy({ upstream: { host: '127.0.0.1', port: 1 }, link: { latencyMs: 1, bytesPerSecond: 0 } }),
    ).rejects.toThrow(/bytesPerSecond/);
  });
});

describe('startSeedProxies', () => {
  it('gives each target its own endpoint and cuts them independently', async () => {
    // Prepare: one HTTP upstream standing in for the emulator, as every target shares it.
    const server: HttpServer = createHttpServer((_, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    stops.push(
      () =>
        new Promise((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    );
    const upstream = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const seed = await startSeedProxies({
      seed: 'aws-eu1',
      upstreams: { garden: `${upstream}/prod`, queues: upstream, s3: upstream, route53: upstream },
    });
    stops.push(() => seed.stop());
    const get = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(1_000) })).text();
    // Act
    seed.cut('garden', 'queues');
    // Assess
    expect(new Set(Object.values(seed.endpoints).map((e) => new URL(e).port)).size).toBe(4);
    expect(seed.endpoints.garden).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/prod$/);
    expect(seed.endpoints.s3).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await expect(get(seed.endpoints.garden)).rejects.toThrow();
    await expect(get(seed.endpoints.queues)).rejects.toThrow();
    expect(await get(seed.endpoints.s3)).toBe('ok');
    expect(await get(seed.endpoints.route53)).toBe('ok');
    seed.restoreAll();
    expect(await get(seed.endpoints.garden)).toBe('ok');
    seed.cutAll();
    await expect(get(seed.endpoints.route53)).rejects.toThrow();
  });
});
