import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterEach, describe, expect, it } from 'vitest';
import { GardenClient } from '../../../adapters/http/garden-client.js';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
type Received = { req: IncomingMessage; body: string };

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A loopback API that answers each request with the next of `answers` (the last one repeats). */
async function api(answers: { status: number; type?: string; body: string }[], received: Received[]): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ req, body: Buffer.concat(chunks).toString('utf8') });
      const a = answers[Math.min(received.length, answers.length) - 1]!;
      res.writeHead(a.status, a.type ? { 'content-type': a.type } : {}).end(a.body);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/api/`;
}

/** The signature the server side computes from what it received: it matches only if what was signed was sent. */
async function expectedAuthorization({ req, body }: Received): Promise<string> {
  const url = new URL(req.url!, `http://${req.headers.host}`);
  const signedNames = /SignedHeaders=([^,]+)/.exec(String(req.headers.authorization))![1]!.split(';');
  const headers = Object.fromEntries(signedNames.map((n) => [n, String(req.headers[n])]));
  const amzDate = String(req.headers['x-amz-date']);
  const signingDate = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  const signer = new SignatureV4({
    service: 'execute-api',
    region: 'eu-west-1',
    credentials,
    sha256: Hash.bind(null, 'sha256'),
  });
  const signed = await signer.sign(
    {
      method: req.method!,
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      ...(body ? { body } : {}),
    },
    { signingDate },
  );
  return signed.headers.authorization!;
}

describe('GardenClient over node:http', () => {
  it('sends a SigV4 signature that the server recomputes from the request it received', async () => {
    // Prepare
    const received: Received[] = [];
    const apiUrl = await api([{ status: 201, type: 'application/json', body: '{"kind":"Seed"}' }], received);
    const client = new GardenClient({ apiUrl, region: 'eu-west-1', credentials: async () => credentials });
    // Act
    const res = await client.request('PUT', '/seeds/aws-eu1', {
      body: { kind: 'Seed', metadata: { name: 'aws-eu1' } },
      query: { dryRun: 'true' },
    });
    // Assess
    expect(res).toMatchObject({ status: 201, body: { kind: 'Seed' }, headers: { 'content-type': 'application/json' } });
    const [r] = received;
    expect(r!.req.url).toBe('/api/seeds/aws-eu1?dryRun=true');
    expect(r!.req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r!.body)).toEqual({ kind: 'Seed', metadata: { name: 'aws-eu1' } });
    expect(r!.req.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=.*host/,
    );
    expect(r!.req.headers.authorization).toBe(await expectedAuthorization(r!));
  });

  it.each([
    ['a JSON body', 'application/json', '{"a":1}', { a: 1 }],
    ['a body that claims JSON and is not', 'application/json', '<html>bad gateway</html>', '<html>bad gateway</html>'],
    ['a text body', 'text/plain', 'plain', 'plain'],
  ])('returns %s as the caller expects', async (_case, type, body, expected) => {
    const apiUrl = await api([{ status: 200, type, body }], []);
    const client = new GardenClient({ apiUrl, region: 'eu-west-1', sign: false });
    expect((await client.request('GET', '/x')).body).toEqual(expected);
  });

  it('resends a gateway 502 as often as asked, and returns the last answer', async () => {
    const received: Received[] = [];
    const apiUrl = await api(
      [
        { status: 502, body: 'x' },
        { status: 502, body: 'x' },
        { status: 200, type: 'application/json', body: '{}' },
      ],
      received,
    );
    const client = new GardenClient({ apiUrl, region: 'eu-west-1', sign: false });
    expect((await client.request('GET', '/a')).status).toBe(502);
    expect((await client.withGatewayRetries(2).request('GET', '/b')).status).toBe(200);
    expect(received.map((r) => r.req.url)).toEqual(['/api/a', '/api/b', '/api/b']);
  });
});
