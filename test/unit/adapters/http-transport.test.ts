import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, Server, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exchange } from '../../../adapters/http/transport.js';

const servers: (Server | TcpServer)[] = [];
const tcpSockets: Socket[] = [];
afterEach(async () => {
  for (const socket of tcpSockets.splice(0)) socket.destroy();
  for (const s of servers.splice(0)) {
    if (s instanceof Server) s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A real HTTP server on a free loopback port, recording what it received. */
async function httpServer(handle: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<URL> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  // Idle connections stay open far longer than any test: whether a client process ends must not depend on the server closing them.
  server.keepAliveTimeout = 60_000;
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  return new URL(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`);
}

/** A raw TCP server: `onRequest(socket, nthOnSocket, connection)` for each request head it reads. */
async function tcpServer(onRequest: (socket: Socket, nthOnSocket: number, connection: number) => void): Promise<URL> {
  let connections = 0;
  const server = createTcpServer((socket) => {
    const connection = ++connections;
    tcpSockets.push(socket);
    let seen = 0;
    let buffered = '';
    socket.on('data', (d: Buffer) => {
      buffered += d.toString('latin1');
      while (buffered.includes('\r\n\r\n')) {
        buffered = buffered.slice(buffered.indexOf('\r\n\r\n') + 4);
        onRequest(socket, ++seen, connection);
      }
    });
    socket.on('error', () => undefined);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  return new URL(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`);
}

const ok = (socket: Socket, text: string) =>
  socket.write(
    `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ${text.length}\r\nConnection: keep-alive\r\n\r\n${text}`,
  );

describe('exchange (node:http transport of the garden client)', () => {
  it('sends method, path, query, headers and a body with its length, and reads status, headers and text', async () => {
    // Prepare
    let seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string } | undefined;
    const base = await httpServer((req, body, res) => {
      seen = { method: req.method, url: req.url, headers: req.headers, body };
      res.setHeader('content-type', 'application/json');
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.statusCode = 409;
      res.end('{"code":"Conflict","message":"ü"}');
    });
    const url = new URL('projects/dev/shoots/web?dryRun=true', base);
    // Act
    const answer = await exchange({
      method: 'PUT',
      url,
      headers: { 'content-type': 'application/json', 'x-amz-date': '20250101T000000Z' },
      body: '{"name":"wëb"}',
      timeoutMs: 5_000,
    });
    // Assess
    expect(answer).toEqual({
      status: 409,
      headers: expect.objectContaining({ 'content-type': 'application/json', 'set-cookie': 'a=1, b=2' }),
      text: '{"code":"Conflict","message":"ü"}',
    });
    expect(seen).toMatchObject({ method: 'PUT', url: '/projects/dev/shoots/web?dryRun=true', body: '{"name":"wëb"}' });
    expect(seen!.headers).toMatchObject({
      host: url.host,
      'content-length': String(Buffer.byteLength('{"name":"wëb"}')),
      'x-amz-date': '20250101T000000Z',
    });
    expect(seen!.headers['transfer-encoding']).toBeUndefined();
  });

  it('sends no body and no length on a GET', async () => {
    let headers: IncomingMessage['headers'] = {};
    const base = await httpServer((req, _body, res) => {
      headers = req.headers;
      res.end('x');
    });
    expect((await exchange({ method: 'GET', url: base, headers: {}, timeoutMs: 5_000 })).text).toBe('x');
    expect(headers['content-length']).toBeUndefined();
    expect(headers['transfer-encoding']).toBeUndefined();
  });

  it.each([
    ['no answer at all', (_req: IncomingMessage, _body: string, _res: ServerResponse) => undefined],
    [
      'an answer whose body never ends',
      (_req: IncomingMessage, _body: string, res: ServerResponse) =>
        res.writeHead(200, { 'content-length': '10' }).write('12345'),
    ],
  ])('rejects with a TimeoutError when the deadline passes: %s', async (_case, handle) => {
    const base = await httpServer(handle);
    const started = Date.now();
    const error = await exchange({ method: 'GET', url: base, headers: {}, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'TimeoutError', message: `GET ${base.origin}/ took longer than 300 ms` });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('reports a refused connection with its code', async () => {
    const base = await httpServer(() => undefined);
    const closed = servers.pop()!;
    await new Promise((r) => closed.close(r));
    await expect(exchange({ method: 'GET', url: base, headers: {}, timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
      message: `connect ECONNREFUSED ${base.host}`,
    });
  });

  it('sends a request once more on a new connection when the server reset the kept-alive one before answering', async () => {
    // Prepare: the first connection answers one request, then resets when the second arrives on it.
    const requests: [number, number][] = [];
    const base = await tcpServer((socket, nth, connection) => {
      requests.push([connection, nth]);
      if (connection === 1 && nth === 2) socket.resetAndDestroy();
      else ok(socket, `answer ${connection}.${nth}`);
    });
    // Act
    const first = await exchange({ method: 'GET', url: base, headers: {}, timeoutMs: 5_000 });
    const second = await exchange({ method: 'POST', url: base, headers: {}, body: '{}', timeoutMs: 5_000 });
    // Assess
    expect([first.text, second.text]).toEqual(['answer 1.1', 'answer 2.1']);
    expect(requests).toEqual([
      [1, 1],
      [1, 2],
      [2, 1],
    ]);
  });

  it('does not resend when a fresh connection is reset', async () => {
    const requests: number[] = [];
    const base = await tcpServer((socket, _nth, connection) => {
      requests.push(connection);
      socket.resetAndDestroy();
    });
    await expect(
      exchange({ method: 'POST', url: base, headers: {}, body: '{}', timeoutMs: 5_000 }),
    ).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(requests).toEqual([1]);
  });

  it('lets a process end once it has printed the answer, complete through a pipe, while the server keeps the connection open', async () => {
    // Prepare: a 2 MB answer, more than a pipe holds, from a server that would keep the idle connection for a minute.
    const big = 'x'.repeat(2 * 1024 * 1024);
    const base = await httpServer((_req, _body, res) => res.end(big));
    const dir = mkdtempSync(join(tmpdir(), 'transport-'));
    const script = join(dir, 'client.mts');
    const transport = resolve(import.meta.dirname, '../../../adapters/http/transport.ts');
    writeFileSync(
      script,
      `import { exchange } from ${JSON.stringify(transport)};\nconst a = await exchange({ method: 'GET', url: new URL(${JSON.stringify(base.href)}), headers: {}, timeoutMs: 10_000 });\nprocess.stdout.write(a.text);\n`,
    );
    // Act: the child ends by itself or this test times out.
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = 0;
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.length));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    // Assess
    expect({ code, err, out }).toEqual({ code: 0, err: '', out: big.length });
  }, 20_000);
});
