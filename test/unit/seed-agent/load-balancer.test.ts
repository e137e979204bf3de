import { connect as tlsConnect, createServer as createTlsServer, type Server } from 'node:tls';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { issueCertificate, newCertificateAuthority } from '../../../core/pki/certificates.js';
import { SniLoadBalancer } from '../../../seed/agent/kube/load-balancer.js';
import { readSni } from '../../../seed/agent/kube/sni.js';
import { until } from '../../../harness/until.js';

const NOW = new Date();
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** A TLS server for `name` that answers every line with `answer` (its name): a kube-apiserver behind the load balancer. */
async function backend(name: string, answer = name) {
  const ca = await newCertificateAuthority({ commonName: 'ca', now: NOW });
  const cert = await issueCertificate({
    ca,
    commonName: name,
    usage: 'server',
    dnsNames: [name],
    now: NOW,
    validitySeconds: 600,
  });
  const server: Server = createTlsServer({ cert: cert.certificate, key: cert.privateKey }, (s) => {
    s.on('data', () => s.write(`${answer}\n`));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  return { ca: ca.certificate, port: (server.address() as AddressInfo).port };
}

/** Two seeds' load balancers on loopback, checking their routes every 20 ms; stopped after the test. */
async function seedLoadBalancers(): Promise<[SniLoadBalancer, SniLoadBalancer]> {
  const start = () => SniLoadBalancer.start({ host: '127.0.0.1', port: 0, checkIntervalMs: 20 });
  const lbs: [SniLoadBalancer, SniLoadBalancer] = [await start(), await start()];
  closers.push(...lbs.map((lb) => () => lb.stop()));
  return lbs;
}

/** One exchange through the load balancer asking for `name`: the answer, or the error. */
function ask(port: number, name: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port, servername: name, ca }, () => s.write('hello\n'));
    s.once('data', (d: Buffer) => {
      resolve(d.toString().trim());
      s.destroy();
    });
    s.once('error', reject);
    s.once('close', () => reject(new Error('closed')));
    s.setTimeout(2_000, () => s.destroy(new Error('timeout')));
  });
}

describe('readSni', () => {
  it('finds the name in a real ClientHello, asks for more when cut short, and reports none for what is not TLS', async () => {
    // Prepare: capture what a TLS client sends first.
    const hello = await new Promise<Buffer>((resolve) => {
      const server = createServer((s: Socket) => {
        s.once('data', (d: Buffer) => {
          resolve(d);
          s.destroy();
          server.close();
        });
      });
      server.listen(0, '127.0.0.1', () => {
        const c = tlsConnect({
          host: '127.0.0.1',
          port: (server.address() as AddressInfo).port,
          servername: 'API.Web.Dev.Example',
        });
        c.on('error', () => undefined);
      });
    });
    expect(readSni(hello)).toEqual({ kind: 'name', name: 'api.web.dev.example' });
    expect(readSni(hello.subarray(0, 20))).toEqual({ kind: 'incomplete' });
    expect(readSni(Buffer.from('GET / HTTP/1.1\r\n\r\n'))).toEqual({ kind: 'none' });
  });
});

describe('SniLoadBalancer', () => {
  it('routes each name to its backend while it serves, cuts its connections when it stops serving, refuses unknown names', async () => {
    // Prepare
    const a = await backend('api.a.dev.example');
    const b = await backend('api.b.dev.example');
    let aServes = true;
    const lb = await SniLoadBalancer.start({ host: '127.0.0.1', port: 0, checkIntervalMs: 50 });
    closers.push(() => lb.stop());
    lb.route('shoot--dev--a', {
      serverName: 'api.a.dev.example',
      backend: { host: '127.0.0.1', port: a.port },
      serving: async () => aServes,
    });
    lb.route('shoot--dev--b', {
      serverName: 'api.b.dev.example',
      backend: { host: '127.0.0.1', port: b.port },
      serving: async () => true,
    });
    await new Promise((r) => setTimeout(r, 120));

    // Act / Assess
    expect(await ask(lb.port, 'api.a.dev.example', a.ca)).toBe('api.a.dev.example');
    expect(await ask(lb.port, 'api.b.dev.example', b.ca)).toBe('api.b.dev.example');
    await expect(ask(lb.port, 'api.c.dev.example', a.ca)).rejects.toThrow();

    // A long-lived connection (a watch) is cut within a check of the fence.
    const open = tlsConnect({ host: '127.0.0.1', port: lb.port, servername: 'api.a.dev.example', ca: a.ca });
    const closed = new Promise<number>((r) => open.once('close', () => r(Date.now())));
    open.on('error', () => undefined);
    await new Promise((r) => open.once('secureConnect', r));
    const fencedAt = Date.now();
    aServes = false;
    expect((await closed) - fencedAt).toBeLessThan(1_000);
    await expect(ask(lb.port, 'api.a.dev.example', a.ca)).rejects.toThrow();
    expect(await ask(lb.port, 'api.b.dev.example', b.ca)).toBe('api.b.dev.example');
    expect(lb.forwarding('shoot--dev--a')).toBe(false);
  });

  it('forwards nothing once its last check is older than the lease (a load balancer that was frozen)', async () => {
    const a = await backend('api.a.dev.example');
    let calls = 0;
    const lb = await SniLoadBalancer.start({ host: '127.0.0.1', port: 0, checkIntervalMs: 60_000, leaseMs: 200 });
    closers.push(() => lb.stop());
    lb.route('shoot--dev--a', {
      serverName: 'api.a.dev.example',
      backend: { host: '127.0.0.1', port: a.port },
      serving: async () => (calls += 1) > 0,
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(await ask(lb.port, 'api.a.dev.example', a.ca)).toBe('api.a.dev.example');
    await new Promise((r) => setTimeout(r, 300));
    await expect(ask(lb.port, 'api.a.dev.example', a.ca)).rejects.toThrow();
  });

  it('keeps a route whose check nobody answered until its lease runs out, and cuts it then', async () => {
    // Prepare: a route checked every 20 ms with a lease of 1.5 s, and a watch-like connection through it.
    const a = await backend('api.a.dev.example');
    let answer: boolean | undefined = true;
    const lb = await SniLoadBalancer.start({ host: '127.0.0.1', port: 0, checkIntervalMs: 20, leaseMs: 1_500 });
    closers.push(() => lb.stop());
    lb.route('shoot--dev--a', {
      serverName: 'api.a.dev.example',
      backend: { host: '127.0.0.1', port: a.port },
      serving: async () => {
        if (answer === undefined) throw new Error('the status call timed out');
        return answer;
      },
    });
    await new Promise((r) => setTimeout(r, 60));
    const watch = tlsConnect({ host: '127.0.0.1', port: lb.port, servername: 'api.a.dev.example', ca: a.ca });
    watch.on('error', () => undefined);
    let watchClosed = false;
    watch.once('close', () => (watchClosed = true));
    await new Promise((r) => watch.once('secureConnect', r));

    // Act: the checks go unanswered for less than the lease.
    answer = undefined;
    await new Promise((r) => setTimeout(r, 300));

    // Assess: nothing cut, new connections forwarded.
    expect(watchClosed).toBe(false);
    expect(await ask(lb.port, 'api.a.dev.example', a.ca)).toBe('api.a.dev.example');

    // Act: the silence outlasts the lease.
    await new Promise((r) => setTimeout(r, 1_500));

    // Assess: nothing forwarded, and the watch is cut at its next chunk; a yes opens the route again.
    await expect(ask(lb.port, 'api.a.dev.example', a.ca)).rejects.toThrow();
    watch.write('more\n');
    await until('the watch cut', () => watchClosed, { timeoutMs: 2_000, intervalMs: 20 });
    answer = true;
    await new Promise((r) => setTimeout(r, 60));
    expect(await ask(lb.port, 'api.a.dev.example', a.ca)).toBe('api.a.dev.example');
  });

  it('hands a moved name over to the load balancer the record names, until then; the target decides; its own route wins', async () => {
    // Prepare: the shoot's kube-apiserver on the source seed and on the destination, each behind its seed's load balancer.
    const name = 'api.web.dev.example';
    const sourceApi = await backend(name, 'source');
    const destinationApi = await backend(name, 'destination');
    const ca = sourceApi.ca;
    let sourceServes = true;
    let destinationServes = true;
    const [source, destination] = await seedLoadBalancers();
    const route = (lb: SniLoadBalancer, port: number, serving: () => boolean) =>
      lb.route('shoot--dev--web', {
        serverName: name,
        backend: { host: '127.0.0.1', port },
        serving: async () => serving(),
      });
    route(source, sourceApi.port, () => sourceServes);
    route(destination, destinationApi.port, () => destinationServes);
    const settle = () => new Promise((r) => setTimeout(r, 100));
    await settle();
    const askSource = () => ask(source.port, name, ca);
    expect(await askSource()).toBe('source');
    // Each backend here has a CA of its own: a client trusts the one that should answer.
    const askVia = (port: number, caOf: string) => ask(port, name, caOf);

    // Act, Assess: fenced, the source refuses; handed over, it passes connections to the destination.
    sourceServes = false;
    await settle();
    await expect(askSource()).rejects.toThrow();
    expect(source.handOver(name, { host: '127.0.0.1', port: source.port }, new Date(Date.now() + 60_000))).toBe(false);
    expect(source.handOver(name, { host: '127.0.0.1', port: destination.port }, new Date(Date.now() + 400))).toBe(true);
    expect(await askVia(source.port, destinationApi.ca)).toBe('destination');

    // The destination's load balancer decides: while its plane does not serve, nothing answers.
    destinationServes = false;
    await settle();
    await expect(askVia(source.port, destinationApi.ca)).rejects.toThrow();
    destinationServes = true;
    await settle();
    expect(await askVia(source.port, destinationApi.ca)).toBe('destination');

    // Past `until`, the name is refused again.
    await new Promise((r) => setTimeout(r, 400));
    await expect(askVia(source.port, destinationApi.ca)).rejects.toThrow();

    // A plane that comes back here (a new route) takes its name back once it serves, whatever was handed over.
    source.handOver(name, { host: '127.0.0.1', port: destination.port }, new Date(Date.now() + 60_000));
    source.unroute('shoot--dev--web');
    route(source, sourceApi.port, () => true);
    await settle();
    expect(await askSource()).toBe('source');
    source.unroute('shoot--dev--web');
    await expect(askVia(source.port, destinationApi.ca)).rejects.toThrow();
  });

  it('passes a name on until the route that takes it back serves, and keeps its connections when set again', async () => {
    // Prepare: the shoot left this seed (handed over) and comes back: its route here is set while its kube-apiserver starts.
    const name = 'api.back.dev.example';
    const id = 'shoot--dev--back';
    const here = await backend(name, 'here');
    const there = await backend(name, 'there');
    let hereServes = false;
    const [lb, other] = await seedLoadBalancers();
    other.route(id, { serverName: name, backend: { host: '127.0.0.1', port: there.port }, serving: async () => true });
    lb.handOver(name, { host: '127.0.0.1', port: other.port }, new Date(Date.now() + 60_000));
    const routeHere = () =>
      lb.route(id, {
        serverName: name,
        backend: { host: '127.0.0.1', port: here.port },
        serving: async () => hereServes,
      });
    routeHere();
    const settle = () => new Promise((r) => setTimeout(r, 100));
    await settle();

    // Assess: not serving here yet, so the connection goes where the shoot still serves.
    expect(await ask(lb.port, name, there.ca)).toBe('there');

    // Act, Assess: it serves here; a connection open across the same route set again is kept.
    hereServes = true;
    await settle();
    const s = tlsConnect({ host: '127.0.0.1', port: lb.port, servername: name, ca: here.ca });
    closers.push(() => void s.destroy());
    const lines: string[] = [];
    s.on('data', (d: Buffer) => lines.push(...d.toString().trim().split('\n')));
    const exchange = async (count: number) => {
      s.write('hello\n');
      for (let i = 0; i < 50 && lines.length < count; i++) await new Promise((r) => setTimeout(r, 20));
      return lines.length;
    };
    await new Promise<void>((r) => s.once('secureConnect', () => r()));
    expect(await exchange(1)).toBe(1);
    routeHere();
    await settle();
    expect(await exchange(2)).toBe(2);
    expect(s.destroyed).toBe(false);
    expect(lines).toEqual(['here', 'here']);

    // Taken back: the hand-over is gone, so a route that stops serving here passes nothing on.
    hereServes = false;
    await settle();
    await expect(ask(lb.port, name, there.ca)).rejects.toThrow();

    // Two load balancers that each hand the name over to the other while neither serves it refuse the
    // connection: a passed-on connection is never passed on again.
    other.unroute(id);
    lb.handOver(name, { host: '127.0.0.1', port: other.port }, new Date(Date.now() + 60_000));
    other.handOver(name, { host: '127.0.0.1', port: lb.port }, new Date(Date.now() + 60_000));
    let accepted = 0;
    for (const l of [lb, other]) (l as unknown as { server: Server }).server.on('connection', () => (accepted += 1));
    await expect(ask(lb.port, name, there.ca)).rejects.toThrow();
    expect(accepted).toBe(2);
  });
});
