import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A listening endpoint of a long-running seed process; `close` drops open connections too. */
export interface HttpEndpoint {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The small plain-HTTP endpoints of the seed's processes (the sidecar's status API, the agent's health):
 * `handle` answers each request, and what it throws is a 500 with its message, so that a fault in one
 * route answers its caller (a kubelet's probe) instead of leaving it to time out. Listens on `host`,
 * default loopback; port 0 is a free one.
 */
export async function serveHttp(input: {
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  host?: string;
  port?: number;
}): Promise<HttpEndpoint> {
  const server: Server = createServer((req, res) => {
    void input
      .handle(req, res)
      .catch((error: unknown) => sendJson(res, 500, { error: error instanceof Error ? error.message : String(error) }));
  });
  const host = input.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(input.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
