import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpExternalProber } from '../../../adapters/http/external-prober.js';
import { AdmissionError } from '../../../core/errors.js';
import { GardenService } from '../../../core/garden/service.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import {
  assertOutboundUrl,
  classifyAddress,
  outboundPolicyFrom,
  outboundUrlProblem,
  STRICT_OUTBOUND,
} from '../../../core/net/outbound-url.js';
import { seedBody } from '../garden/builders.js';

describe('outbound URLs (docs/design.md section 12)', () => {
  it.each<[string, ReturnType<typeof classifyAddress>]>([
    ['8.8.8.8', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['fd00:ec2::254', 'private'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['fc00::1', 'private'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['2002:7f00:1::', 'loopback'],
    ['0.0.0.0', 'forbidden'],
    ['::', 'forbidden'],
    ['224.0.0.1', 'forbidden'],
    ['255.255.255.255', 'forbidden'],
    ['ff02::1', 'forbidden'],
    ['not-an-ip', 'forbidden'],
  ])('classifies %s as %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });

  it.each<[string, string | undefined]>([
    ['https://api.shoot.example.com', undefined],
    ['https://8.8.8.8:6443/', undefined],
    ['http://api.shoot.example.com', 'must use https, not http'],
    ['ftp://api.shoot.example.com', 'must use https, not ftp'],
    ['https://localhost:6443', 'names loopback (localhost)'],
    ['https://x.localhost', 'names loopback (localhost)'],
    ['https://127.0.0.1', 'is a loopback address (127.0.0.1)'],
    ['https://[::1]:443', 'is a loopback address (::1)'],
    ['https://169.254.169.254/latest/meta-data', 'is a link-local address (169.254.169.254)'],
    ['https://[fe80::1]', 'is a link-local address (fe80::1)'],
    ['https://10.0.0.1', 'is a private address (10.0.0.1)'],
    ['https://[::ffff:10.0.0.1]', 'is a private address (::ffff:a00:1)'],
    ['https://user:secret@api.example.com', 'must not carry credentials'],
    ['https://metadata', 'must name a fully qualified host'],
    ['not a url', 'is not a URL'],
  ])('strictly, %s: %s', (url, problem) => {
    expect(outboundUrlProblem(url, STRICT_OUTBOUND)).toBe(problem);
  });

  it('allows what the deployment allows, and never link-local', () => {
    const local = outboundPolicyFrom('loopback,http');
    expect(outboundUrlProblem('http://127.0.0.1:8080', local)).toBeUndefined();
    expect(outboundUrlProblem('http://10.0.0.1', local)).toMatch(/private/);
    expect(outboundUrlProblem('http://10.0.0.1', outboundPolicyFrom('private,http'))).toBeUndefined();
    expect(outboundUrlProblem('http://169.254.169.254', outboundPolicyFrom('http,loopback,private'))).toMatch(
      /link-local/,
    );
    expect(() => outboundPolicyFrom('everything')).toThrow(/unknown outbound allowance/);
    expect(() => assertOutboundUrl('https://127.0.0.1', STRICT_OUTBOUND, 'controlPlanes.0.externalUrl')).toThrow(
      AdmissionError,
    );
  });

  it('refuses a heartbeat naming instance metadata with 422 OutboundUrlForbidden, writing nothing', async () => {
    // Prepare
    const repo = new MemoryGardenRepository();
    const service = new GardenService({ repository: repo });
    await service.putSeed('aws-eu1', seedBody());
    const before = repo.snapshot();
    const heartbeat = {
      conditions: [],
      controlPlanes: [{ technicalID: 'shoot--dev--a', active: true, externalUrl: 'https://169.254.169.254/latest' }],
    };
    // Act
    const error = await service.heartbeat('aws-eu1', heartbeat).catch((e: unknown) => e);
    // Assess
    expect(error).toBeInstanceOf(AdmissionError);
    expect(error).toMatchObject({ code: 'OutboundUrlForbidden', field: 'controlPlanes.0.externalUrl' });
    expect(repo.snapshot()).toEqual(before);
  });
});

describe('HttpExternalProber at fetch time', () => {
  let server: Server;
  let port: number;
  const refused: string[] = [];
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('probes loopback where the deployment allows it', async () => {
    const prober = new HttpExternalProber({ policy: outboundPolicyFrom('loopback,http') });
    expect(await prober.probe(`http://127.0.0.1:${port}`)).toBe('success');
  });

  it('never connects to an address the policy refuses: not by address, not by a name that now resolves there (DNS rebinding)', async () => {
    // Prepare: the name passed the heartbeat's check; its DNS answer is loopback now.
    const rebound = ((
      _host: string,
      _options: unknown,
      callback: (e: null, a: { address: string; family: number }[]) => void,
    ) => callback(null, [{ address: '127.0.0.1', family: 4 }])) as unknown as typeof import('node:dns').lookup;
    const prober = new HttpExternalProber({
      policy: outboundPolicyFrom('http'),
      resolve: rebound,
      onRefused: (url, reason) => refused.push(`${url}: ${reason}`),
    });
    let hits = 0;
    server.on('request', () => (hits += 1));
    // Act
    const byName = await prober.probe(`http://api.rebound.example.com:${port}`);
    const byAddress = await prober.probe(`http://127.0.0.1:${port}`);
    const byLocalhost = await prober.probe(`http://localhost.:${port}`);
    // Assess
    expect([byName, byAddress, byLocalhost]).toEqual(['failure', 'failure', 'failure']);
    expect(hits).toBe(0);
    expect(refused).toEqual([
      `http://api.rebound.example.com:${port}: api.rebound.example.com is a loopback address (127.0.0.1)`,
      `http://127.0.0.1:${port}: is a loopback address (127.0.0.1)`,
      `http://localhost.:${port}: names loopback (localhost)`,
    ]);
  });
});
