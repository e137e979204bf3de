import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DnsOwnerLookup } from '../../adapters/dns/owner-lookup.js';
import { lookUpOwner } from '../../core/ownership/index.js';
import { DNSMASQ_PATH, freeDnsPort, startDnsmasq as startServer, type Dnsmasq } from '../harness/dnsmasq.js';

/**
 * DNS mode of the owner check against a real DNS server on loopback: Debian's dnsmasq, serving the
 * owner TXT records of a test internal domain. Skipped when dnsmasq is not installed.
 */

const DOMAIN = 'internal.gardenless.test';
const NAME = `owner.api1.dev.${DOMAIN}`;
const ME = 'local-a-1111';
const OTHER = 'local-b-2222';
const RECORDS = { [NAME]: ME, [`owner.api2.dev.${DOMAIN}`]: OTHER };
const HAVE_DNSMASQ = DNSMASQ_PATH.length > 0;
if (!HAVE_DNSMASQ)
  console.warn('dns-owner-lookup: dnsmasq is not installed (apt-get install -y dnsmasq); skipping the DNS mode tests');
const freePort = freeDnsPort;

/** dnsmasq with the given owner TXT records, and a name with an address but no TXT data (NODATA). */
function startDnsmasq(port: number, txt: Record<string, string>): Promise<Dnsmasq> {
  return startServer({
    port,
    domain: DOMAIN,
    args: [
      `--host-record=nodata.${DOMAIN},127.0.0.2`,
      ...Object.entries(txt).map(([name, value]) => `--txt-record=${name},${value}`),
    ],
  });
}

/** A UDP server on loopback that answers every query with the given rcode, or never (undefined). */
async function fakeServer(rcode: number | undefined): Promise<{ port: number; queries(): number; close(): void }> {
  const socket: Socket = createSocket('udp4');
  let queries = 0;
  socket.on('message', (query, from) => {
    queries++;
    if (rcode === undefined) return;
    const reply = Buffer.from(query);
    // Flags: QR=1, keep opcode and RD, RA=1, RCODE; the question section stays as it was.
    reply[2] = 0x80 | ((query[2] ?? 0) & 0x79);
    reply[3] = 0x80 | rcode;
    socket.send(reply, from.port, from.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return { port: socket.address().port, queries: () => queries, close: () => socket.close() };
}

describe.skipIf(!HAVE_DNSMASQ)('DnsOwnerLookup against dnsmasq on loopback', () => {
  let port: number;
  let server: Dnsmasq | undefined;
  let clock = 0;
  const now = () => clock;
  const lookup = (options: { cacheTTL?: number } = {}) =>
    new DnsOwnerLookup({
      servers: [`127.0.0.1:${port}`],
      timeout: 300,
      tries: 1,
      ownerCheckInterval: 5_000,
      now,
      ...options,
    });

  beforeAll(async () => {
    port = await freePort();
    server = await startDnsmasq(port, RECORDS);
  });
  afterEach(() => {
    clock = 0;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each([
    ['this seed owns the shoot', NAME, 'owner', { kind: 'found', values: [ME] }],
    ['another seed owns it', `owner.api2.dev.${DOMAIN}`, 'not-owner', { kind: 'found', values: [OTHER] }],
    [
      'the record does not exist (NXDOMAIN)',
      `owner.gone.dev.${DOMAIN}`,
      'not-owner',
      { kind: 'absent', reason: 'nxdomain' },
    ],
    ['the name has no TXT data (NODATA)', `nodata.${DOMAIN}`, 'not-owner', { kind: 'absent', reason: 'nodata' }],
  ])('%s', async (_case, name, result, outcome) => {
    // Act
    const dnsLookup = lookup();
    const check = await lookUpOwner(dnsLookup, { name, identity: ME });
    // Assess
    expect(check.result).toBe(result);
    expect(await dnsLookup.lookup(name)).toEqual(outcome);
  });

  it('reports unknown when the server is down, and does not cache the failure', async () => {
    // Prepare: a port nothing listens on.
    const closedPort = await freePort();
    const dnsLookup = new DnsOwnerLookup({ servers: [`127.0.0.1:${closedPort}`], timeout: 300, tries: 1, now });
    // Act
    const first = await dnsLookup.lookup(NAME);
    const check = await lookUpOwner(dnsLookup, { name: NAME, identity: ME });
    // Assess
    expect(first.kind).toBe('failed');
    expect(check.result).toBe('unknown');
    // Once a server answers on that port, the very next lookup sees it.
    const late = await startDnsmasq(closedPort, { [NAME]: ME });
    try {
      expect((await lookUpOwner(dnsLookup, { name: NAME, identity: ME })).result).toBe('owner');
    } finally {
      await late.stop();
    }
  });

  it.each([
    ['SERVFAIL', 2, 'servfail'],
    ['REFUSED', 5, 'refused'],
    ['no answer at all', undefined, 'timeout'],
  ])('reports unknown on %s', async (_case, rcode, failure) => {
    const fake = await fakeServer(rcode);
    try {
      const dnsLookup = new DnsOwnerLookup({ servers: [`127.0.0.1:${fake.port}`], timeout: 200, tries: 1, now });
      const outcome = await dnsLookup.lookup(NAME);
      expect(outcome).toMatchObject({ kind: 'failed', failure });
      expect((await lookUpOwner(dnsLookup, { name: NAME, identity: ME })).result).toBe('unknown');
    } finally {
      fake.close();
    }
  });

  it('sees a changed record once the cache TTL has passed, not before', async () => {
    // Prepare
    const dnsLookup = lookup({ cacheTTL: 2_000 });
    expect((await lookUpOwner(dnsLookup, { name: NAME, identity: ME })).result).toBe('owner');
    // Act: the orchestrator moves ownership (dnsmasq reads records at start, so restart it).
    await server?.stop();
    server = await startDnsmasq(port, { [NAME]: OTHER });
    // Assess
    clock = 1_999;
    expect((await lookUpOwner(dnsLookup, { name: NAME, identity: ME })).result).toBe('owner');
    // After an owner-change notice the sidecar asks afresh: its own cache is no evidence any more.
    expect(await dnsLookup.lookup(NAME, { fresh: true })).toEqual({ kind: 'found', values: [OTHER] });
    clock = 2_000;
    expect((await lookUpOwner(dnsLookup, { name: NAME, identity: ME })).result).toBe('not-owner');
    // Deleting the record reaches the seed the same way.
    await server.stop();
    server = await startDnsmasq(port, {});
    clock = 4_000;
    expect(await dnsLookup.lookup(NAME)).toEqual({ kind: 'absent', reason: 'nxdomain' });
    // Back to the shared records for the tests that follow.
    await server.stop();
    server = await startDnsmasq(port, RECORDS);
  });

  it('shares one query between concurrent checks', async () => {
    // Prepare: a server that counts queries and answers SERVFAIL.
    const fake = await fakeServer(2);
    try {
      const dnsLookup = new DnsOwnerLookup({ servers: [`127.0.0.1:${fake.port}`], timeout: 200, tries: 1, now });
      // Act
      const results = await Promise.all(
        Array.from({ length: 20 }, () => lookUpOwner(dnsLookup, { name: NAME, identity: ME })),
      );
      // Assess
      expect(new Set(results.map((r) => r.result))).toEqual(new Set(['unknown']));
      expect(fake.queries()).toBe(1);
    } finally {
      fake.close();
    }
  });

  it('shares answers between concurrent checks against dnsmasq', async () => {
    const dnsLookup = lookup({ cacheTTL: 0 });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => lookUpOwner(dnsLookup, { name: NAME, identity: ME })),
    );
    expect(new Set(results.map((r) => r.result))).toEqual(new Set(['owner']));
  });

  it('refuses a cache TTL longer than the check interval', () => {
    expect(() => new DnsOwnerLookup({ ownerCheckInterval: 5_000, cacheTTL: 5_001 })).toThrow(/cacheTTL/);
  });
});
