import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdPutError, gatewayPut } from '../../harness/scenario/etcd-client.js';

/** A stand-in for etcd's JSON gateway whose answer each case chooses by key. */
const answers: Record<string, (res: ServerResponse) => void> = {
  ok: (res) => res.end(JSON.stringify({ header: { revision: '42' } })),
  'ok-without-revision': (res) => res.end(JSON.stringify({})),
  'grpc-error': (res) => res.writeHead(503).end(JSON.stringify({ error: 'etcdserver: request timed out', code: 14 })),
  'not-json': (res) => res.end('<html>'),
  hang: () => undefined,
};
let endpoint = '';
const server = createServer((req: IncomingMessage, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => answers[Buffer.from((JSON.parse(body) as { key: string }).key, 'base64').toString()]!(res));
});
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => {
  server.closeAllConnections();
  server.close(() => r());
}));

describe('gatewayPut', () => {
  it('resolves with the revision of a successful answer', async () => {
    await expect(gatewayPut({ endpoint, key: 'ok', value: 'v', timeoutMs: 1_000 })).resolves.toEqual({ revision: 42 });
  });

  it.each(['ok-without-revision', 'grpc-error', 'not-json', 'hang'])('%s is not an acknowledgement', async (key) => {
    await expect(gatewayPut({ endpoint, key, value: 'v', timeoutMs: 200 })).rejects.toBeInstanceOf(EtcdPutError);
  });

  it('a refused connection is not an acknowledgement', async () => {
    await expect(gatewayPut({ endpoint: 'http://127.0.0.1:1', key: 'ok', value: 'v', timeoutMs: 200 })).rejects.toThrow(/no answer/);
  });
});
