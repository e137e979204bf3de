import { handleRequest } from '../../../functions/api/app.js';
import type { HttpEvent, HttpResult } from '../../../functions/api/http.js';
import { garden, type Garden } from '../garden/builders.js';

export const VERSION = '0.1.0-test';

export interface RequestOptions {
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  base64?: boolean;
}

/** An API Gateway HTTP API (payload v2) event, with the fields the pipeline reads. */
export function httpEvent(method: string, rawPath: string, options: RequestOptions = {}): HttpEvent {
  const text = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  const headers = { ...(text !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers };
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: new URLSearchParams(options.query ?? {}).toString(),
    headers,
    ...(options.query ? { queryStringParameters: options.query } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
      requestId: 'req',
      routeKey: '$default',
      stage: '$default',
      time: '01/Jan/2025:00:00:00 +0000',
      timeEpoch: 0,
    },
    ...(text !== undefined ? { body: options.base64 ? Buffer.from(text).toString('base64') : text } : {}),
    isBase64Encoded: options.base64 ?? false,
  };
}

export interface Response {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  raw: HttpResult;
}

/** A garden on the memory repository behind the whole HTTP pipeline. */
export interface Api extends Garden {
  send(method: string, path: string, options?: RequestOptions): Promise<Response>;
  sendEvent(event: HttpEvent): Promise<Response>;
  unexpected: unknown[];
}

export function api(): Api {
  const g = garden();
  const unexpected: unknown[] = [];
  const sendEvent = async (event: HttpEvent): Promise<Response> => {
    const raw = await handleRequest(event, { service: g.service, version: VERSION, onUnexpected: (error) => unexpected.push(error) });
    const text = typeof raw.body === 'string' ? raw.body : '';
    return {
      status: raw.statusCode ?? 0,
      headers: Object.fromEntries(Object.entries(raw.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)])),
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
      raw,
    };
  };
  return { ...g, unexpected, sendEvent, send: (method, path, options) => sendEvent(httpEvent(method, path, options)) };
}
