import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../core/dns/index.js';
import { ApiDomainProxy } from '../../../local/api-proxy.js';

const DOMAIN = 'shoots.example';
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** A TCP server on `host` that answers every chunk with its own name: a seed's load balancer. */
async function upstream(host: string, name: string): Promise<number> {
  const server: Server = createServer((s) => {
    s.on('data', () => s.write(name));
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as AddressInfo).port;
}

async function proxyWith(records: Map<string, ApiRecord>, clock = { now: 0 }) {
  const lookups: string[] = [];
  const proxy = await ApiDomainProxy.start({
    domain: DOMAIN,
    lookup: async (name) => {
      lookups.push(name);
      return records.get(name);
    },
    now: () => clock.now,
  });
  closers.push(() => proxy.stop());
  return { proxy, lookups, port: Number(new URL(proxy.url).port) };
}

/** CONNECT through the proxy, then one exchange: the proxy's status line and what the far end answered. */
function through(proxyPort: number, authority: string): Promise<{ status: string; answer?: string }> {
  return new Promise((resolve, reject) => {
    const s = connect(proxyPort, '127.0.0.1', () =>
      s.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`),
    );
    let seen = '';
    s.on('data', (d: Buffer) => {
      seen += d.toString();
      const end = seen.indexOf('\r\n\r\n');
      if (end < 0) return;
      const status = seen.slice(0, seen.indexOf('\r\n'));
      if (!status.includes(' 200 ')) return resolve({ status });
      const rest = seen.slice(end + 4);
      if (rest === '') return s.write('hello');
      resolve({ status, answer: rest });
      s.destroy();
    });
    s.once('error', reject);
    s.setTimeout(2_000, () => s.destroy(new Error('timeout')));
  });
}

const a = (name: string, value: string, ttl = 60): ApiRecord => ({ name, type: 'A', value, ttl });

describe('ApiDomainProxy', () => {
  it('tunnels a CONNECT to the address the API record names, on the port the client asked for', async () => {
    // Arrange
    const port = await upstream('127.0.0.2', 'seed-a');
    const { port: proxyPort } = await proxyWith(
      new Map([[`api.web.dev.${DOMAIN}`, a(`api.web.dev.${DOMAIN}`, '127.0.0.2')]]),
    );

    // Act
    const res = await through(proxyPort, `api.web.dev.${DOMAIN}:${port}`);

    // Assert
    expect(res).toEqual({ status: 'HTTP/1.1 200 Connection Established', answer: 'seed-a' });
  });

  it('keeps an answer for the record TTL, then follows the changed record (a caching resolver)', async () => {
    // Arrange: the same port on two loopback addresses, as two seeds' load balancers.
    const port = await upstream('127.0.0.2', 'seed-a');
    const server = createServer((s) => s.on('data', () => s.write('seed-b')));
    await new Promise<void>((r) => server.listen(port, '127.0.0.3', () => r()));
    closers.push(() => new Promise<void>((r) => server.close(() => r())));
    const name = `api.web.dev.${DOMAIN}`;
    const records = new Map([[name, a(name, '127.0.0.2', 30)]]);
    const clock = { now: 0 };
    const { port: proxyPort, lookups } = await proxyWith(records, clock);
    expect((await through(proxyPort, `${name}:${port}`)).answer).toBe('seed-a');

    // Act: the migration switches the record.
    records.set(name, a(name, '127.0.0.3', 30));
    clock.now = 29_999;
    const withinTtl = await through(proxyPort, `${name}:${port}`);
    clock.now = 30_000;
    const afterTtl = await through(proxyPort, `${name}:${port}`);

    // Assert
    expect(withinTtl.answer).toBe('seed-a');
    expect(afterTtl.answer).toBe('seed-b');
    expect(lookups).toEqual([name, name]);
  });

  it('follows a CNAME inside the domain and keeps the shorter TTL', async () => {
    // Arrange
    const port = await upstream('127.0.0.2', 'seed-a');
    const name = `api.web.dev.${DOMAIN}`;
    const lb = `lb.seed-a.${DOMAIN}`;
    const records = new Map<string, ApiRecord>([
      [name, { name, type: 'CNAME', value: lb, ttl: 60 }],
      [lb, a(lb, '127.0.0.2', 5)],
    ]);
    const clock = { now: 0 };
    const { port: proxyPort, lookups } = await proxyWith(records, clock);

    // Act
    const first = await through(proxyPort, `${name}:${port}`);
    clock.now = 5_000;
    await through(proxyPort, `${name}:${port}`);

    // Assert
    expect(first.answer).toBe('seed-a');
    expect(lookups).toEqual([name, lb, name, lb]);
  });

  it.each([
    ['a name outside the domain', 'example.com:443', '403'],
    ['the domain itself', `${DOMAIN}:443`, '403'],
    ['a suffix that only looks like the domain', `api.evil${DOMAIN}:443`, '403'],
    ['no port', `api.web.dev.${DOMAIN}`, '403'],
    ['port 0', `api.web.dev.${DOMAIN}:0`, '403'],
    ['a name without a record', `api.none.dev.${DOMAIN}:443`, '502'],
    ['a CNAME that leaves the domain', `api.out.dev.${DOMAIN}:443`, '502'],
  ])('refuses %s', async (_what, authority, status) => {
    // Arrange
    const out = `api.out.dev.${DOMAIN}`;
    const { port } = await proxyWith(new Map([[out, { name: out, type: 'CNAME', value: 'lb.aws.example', ttl: 60 }]]));

    // Act
    const res = await through(port, authority);

    // Assert
    expect(res.status).toContain(` ${status} `);
  });

  it('answers 502 when the named address takes no connection, and does not cache a failed lookup', async () => {
    // Arrange: nothing listens on 127.0.0.4 at this port.
    const closed = await upstream('127.0.0.2', 'x');
    const name = `api.web.dev.${DOMAIN}`;
    const records = new Map<string, ApiRecord>();
    const { port, lookups } = await proxyWith(records);

    // Act
    const missing = await through(port, `${name}:${closed}`);
    records.set(name, a(name, '127.0.0.4'));
    const refused = await through(port, `${name}:${closed}`);

    // Assert
    expect(missing.status).toContain(' 502 ');
    expect(refused.status).toContain(' 502 ');
    expect(lookups).toEqual([name, name]);
  });

  it('answers a request that is not CONNECT with 405', async () => {
    // Arrange
    const { proxy } = await proxyWith(new Map());

    // Act
    const res = await fetch(`${proxy.url}/`);

    // Assert
    expect(res.status).toBe(405);
  });
});
