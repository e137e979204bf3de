import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer as createTcpServer } from 'node:net';
import {
  EtcdRequestError,
  failedOutcome,
  gatewayCreate,
  gatewayGet,
  gatewayPut,
  gatewayRange,
  resolving,
} from '../../../harness/scenario/etcd-client.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');
let lastBody: { key?: string; range_end?: string; compare?: { key: string }[] } = {};

/** A stand-in for etcd's JSON gateway whose answer each case chooses by key. */
const answers: Record<string, (res: ServerResponse) => void> = {
  ok: (res) => res.end(JSON.stringify({ header: { revision: '42' } })),
  present: (res) =>
    res.end(JSON.stringify({ header: { revision: '7' }, kvs: [{ key: b64('present'), value: b64('v1') }] })),
  a: (res) =>
    res.end(
      JSON.stringify({
        header: { revision: '9' },
        kvs: [
          { key: b64('a'), value: b64('1') },
          { key: b64('b'), value: b64('2') },
        ],
      }),
    ),
  'ok-without-revision': (res) => res.end(JSON.stringify({})),
  'grpc-error': (res) => res.writeHead(503).end(JSON.stringify({ error: 'etcdserver: request timed out', code: 14 })),
  'not-json': (res) => res.end('<html>'),
  hang: () => undefined,
  created: (res) => res.end(JSON.stringify({ header: { revision: '42' }, succeeded: true })),
  'applied-before': (res) => res.end(JSON.stringify(existing('v', '17'))),
  'other-value': (res) => res.end(JSON.stringify(existing('w', '17'))),
};
/** The answer to a create whose key exists: the compare failed, the failure branch read the key. */
function existing(value: string, modRevision: string) {
  return {
    header: { revision: '50' },
    responses: [{ response_range: { kvs: [{ key: b64('k'), value: b64(value), mod_revision: modRevision }] } }],
  };
}
let endpoint = '';
const server = createServer((req: IncomingMessage, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    lastBody = JSON.parse(body) as typeof lastBody;
    const key = lastBody.key ?? lastBody.compare?.[0]?.key ?? '';
    (answers[Buffer.from(key, 'base64').toString()] ?? answers.ok!)(res);
  });
});
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(
  () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
);

describe('gatewayPut', () => {
  it('resolves with the revision of a successful answer', async () => {
    await expect(gatewayPut({ endpoint, key: 'ok', value: 'v', timeoutMs: 1_000 })).resolves.toEqual({ revision: 42 });
  });

  it.each(['ok-without-revision', 'grpc-error', 'not-json', 'hang'])(
    '%s is not an acknowledgement, and of unknown outcome (it may have been applied)',
    async (key) => {
      const error = await gatewayPut({ endpoint, key, value: 'v', timeoutMs: 200 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EtcdRequestError);
      expect(failedOutcome(error)).toBe('unknown');
    },
  );

  it('a refused connection is not an acknowledgement, and certainly failed (nothing was sent)', async () => {
    const error = await gatewayPut({ endpoint: await closedPort(), key: 'ok', value: 'v', timeoutMs: 200 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EtcdRequestError);
    expect((error as Error).message).toMatch(/no answer/);
    expect(failedOutcome(error)).toBe('fail');
  });
});

describe('gatewayCreate', () => {
  it('puts only while the key does not exist, and answers the revision of the put', async () => {
    await expect(gatewayCreate({ endpoint, key: 'created', value: 'v', timeoutMs: 1_000 })).resolves.toEqual({
      revision: 42,
    });
    expect(lastBody.compare).toEqual([
      { key: b64('created'), target: 'CREATE', result: 'EQUAL', create_revision: '0' },
    ]);
  });

  it('answers the revision an earlier attempt wrote when that attempt applied the value', async () => {
    await expect(gatewayCreate({ endpoint, key: 'applied-before', value: 'v', timeoutMs: 1_000 })).resolves.toEqual({
      revision: 17,
    });
  });

  it('another value under the key is no acknowledgement, and certainly not this write', async () => {
    const error = await gatewayCreate({ endpoint, key: 'other-value', value: 'v', timeoutMs: 1_000 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EtcdRequestError);
    expect(failedOutcome(error)).toBe('fail');
  });

  it('a timeout is of unknown outcome', async () => {
    const error = await gatewayCreate({ endpoint, key: 'hang', value: 'v', timeoutMs: 200 }).catch((e: unknown) => e);
    expect(failedOutcome(error)).toBe('unknown');
  });
});

describe('gatewayGet and gatewayRange', () => {
  it('reads the value, or absent when etcd returns no kvs', async () => {
    await expect(gatewayGet({ endpoint, key: 'present', timeoutMs: 1_000 })).resolves.toEqual({
      value: 'v1',
      revision: 7,
    });
    await expect(gatewayGet({ endpoint, key: 'ok', timeoutMs: 1_000 })).resolves.toEqual({
      value: undefined,
      revision: 42,
    });
  });

  it('an error answer is no read', async () => {
    await expect(gatewayGet({ endpoint, key: 'grpc-error', timeoutMs: 1_000 })).rejects.toBeInstanceOf(
      EtcdRequestError,
    );
  });

  it('reads a closed range of keys in one request', async () => {
    await expect(gatewayRange({ endpoint, from: 'a', to: 'b', timeoutMs: 1_000 })).resolves.toEqual(
      new Map([
        ['a', '1'],
        ['b', '2'],
      ]),
    );
    expect(Buffer.from(lastBody.range_end!, 'base64').toString()).toBe('b\0');
  });
});

describe('resolving', () => {
  it('sends to the URL the name resolves to at each call, and fails for certain when there is none', async () => {
    const urls: Record<string, string | undefined> = { source: endpoint, destination: undefined };
    const put = resolving(gatewayPut, (name) => urls[name]);
    await expect(put({ endpoint: 'source', key: 'ok', value: 'v', timeoutMs: 1_000 })).resolves.toEqual({
      revision: 42,
    });
    const error = await put({ endpoint: 'destination', key: 'ok', value: 'v', timeoutMs: 1_000 }).catch(
      (e: unknown) => e,
    );
    expect(failedOutcome(error)).toBe('fail');
    urls.destination = endpoint;
    await expect(put({ endpoint: 'destination', key: 'ok', value: 'v', timeoutMs: 1_000 })).resolves.toEqual({
      revision: 42,
    });
  });

  it('anything but an EtcdRequestError is of unknown outcome', () => {
    expect(failedOutcome(new Error('boom'))).toBe('unknown');
  });
});

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<string> {
  const probe = createTcpServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((r) => probe.close(() => r()));
  return `http://127.0.0.1:${port}`;
}
