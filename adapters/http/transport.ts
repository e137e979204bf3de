import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/**
 * One HTTP exchange over node:http/https. The garden client uses this instead of the global fetch:
 * Node 20's fetch (undici) costs about 80 ms to load on the first call, and its HTTP parser is WebAssembly
 * whose background compilation node waits for before the process may exit (about 200 ms after a CLI had
 * printed its answer). node's own client parses in C++, and its agents unref idle keep-alive sockets, so
 * that a process ends once its work is done while a watch loop still reuses one connection.
 */
export interface HttpExchange {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
  /** Deadline for the whole exchange, answer body included. */
  timeoutMs: number;
}

export interface HttpAnswer {
  status: number;
  /** Lower-case names; a repeated header's values joined by ", ". */
  headers: Record<string, string>;
  text: string;
}

/** The exchange took longer than its deadline; named as fetch's AbortSignal.timeout names it. */
export class HttpTimeoutError extends Error {
  constructor(method: string, url: URL, timeoutMs: number) {
    super(`${method} ${url.origin}${url.pathname} took longer than ${timeoutMs} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * Sends one request and reads the whole answer. A request sent on a kept-alive socket that the server
 * closed meanwhile (ECONNRESET before any answer) is sent once more on a new socket, as node's
 * documentation advises: the server never read it.
 */
export async function exchange(x: HttpExchange): Promise<HttpAnswer> {
  const deadline = Date.now() + x.timeoutMs;
  try {
    return await once(x, deadline);
  } catch (error) {
    if (!(error instanceof StaleSocketError)) throw error;
    return once(x, deadline);
  }
}

/** An ECONNRESET on a reused keep-alive socket before any answer arrived. */
class StaleSocketError extends Error {
  constructor(options: { cause: unknown }) {
    super('the kept-alive connection was closed by the server', options);
    this.name = 'StaleSocketError';
  }
}

const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

function once(x: HttpExchange, deadline: number): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((resolve, reject) => {
    const tls = x.url.protocol === 'https:';
    const send = tls ? httpsRequest : httpRequest;
    let answered = false;
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(
      () => {
        settle(() => reject(new HttpTimeoutError(x.method, x.url, x.timeoutMs)));
        req.destroy();
      },
      Math.max(0, deadline - Date.now()),
    );
    const req: ClientRequest = send(
      x.url,
      { method: x.method, headers: x.headers, agent: tls ? agents.https : agents.http },
      (res: IncomingMessage) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (error) => settle(() => reject(error)));
        res.on('end', () =>
          settle(() =>
            resolve({
              status: res.statusCode ?? 0,
              headers: flatten(res.headers),
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          ),
        );
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => {
      const stale = !answered && req.reusedSocket && error.code === 'ECONNRESET';
      settle(() => reject(stale ? new StaleSocketError({ cause: error }) : error));
    });
    // The whole body in end() before any header went out: node sends it with its length, not chunked.
    req.end(x.body);
  });
}

function flatten(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}
