import type { GardenService } from '../../core/garden/service.js';
import type { MigrationAdmission } from '../../core/migration/migration-admission.js';
import { ValidationError } from '../../core/errors.js';
import { parseInput } from '../../core/garden/validate.js';
import { z } from 'zod';
import { HttpError, errorResult, json, type HttpEvent, type HttpResult } from './http.js';
import { openApiDocument } from './openapi.js';
import { Router } from './router.js';
import { routes, type Route } from './routes.js';

/** Bodies above this are refused before parsing: no resource of this API comes near it. */
export const MAX_BODY_BYTES = 256 * 1024;

export interface ApiDeps {
  service: GardenService;
  migrations?: MigrationAdmission;
  version: string;
  onUnexpected?: (error: unknown, event: HttpEvent) => void;
}

const router = new Router(routes);
let cachedDocument: string | undefined;

/** The whole request pipeline: route, validate, call the garden service, map errors. */
export async function handleRequest(event: HttpEvent, deps: ApiDeps): Promise<HttpResult> {
  try {
    const method = event.requestContext.http.method.toUpperCase();
    const path = normalizePath(event.rawPath);
    const match = router.match(method, path);
    if (match.kind === 'not-found') throw new HttpError(404, 'NotFound', `no such path: ${path}`);
    if (match.kind === 'method-not-allowed') {
      throw new HttpError(405, 'MethodNotAllowed', `${method} is not allowed on ${path}; allowed: ${match.allow.join(', ')}`, { allow: match.allow.join(', ') });
    }
    const { route } = match;
    if (route.operationId === 'openapi') {
      cachedDocument ??= JSON.stringify(openApiDocument({ version: deps.version }));
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: cachedDocument };
    }
    const params = validateParams(route, match.params);
    const body = route.body ? parseBody(event, route) : undefined;
    const query = Object.fromEntries(Object.entries(event.queryStringParameters ?? {}));
    return await route.handle({ params, query, body, service: deps.service, ...(deps.migrations ? { migrations: deps.migrations } : {}), version: deps.version });
  } catch (error) {
    const mapped = errorResult(error);
    if (mapped) return mapped;
    deps.onUnexpected?.(error, event);
    return json(500, { code: 'Internal', message: 'internal error; the request may be retried' });
  }
}

function normalizePath(raw: string): string {
  const trimmed = raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw;
  return trimmed || '/';
}

function validateParams(route: Route, raw: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(value);
    } catch (cause) {
      throw new ValidationError(`path parameter ${key} is not valid URL encoding`, { field: key, cause, code: 'InvalidName' });
    }
    const schema = route.params?.[key];
    if (schema) {
      try {
        parseInput(z.object({ [key]: schema }), { [key]: decoded });
      } catch (error) {
        throw new ValidationError(`${key} "${decoded.slice(0, 80)}": ${error instanceof Error ? error.message.replace(`${key}: `, '') : 'invalid'}`, {
          field: key,
          code: 'InvalidName',
          cause: error,
        });
      }
    }
    out[key] = decoded;
  }
  return out;
}

function parseBody(event: HttpEvent, route: Route): unknown {
  const raw = event.body ?? '';
  const size = event.isBase64Encoded ? Math.floor((raw.length * 3) / 4) : Buffer.byteLength(raw, 'utf8');
  if (size > MAX_BODY_BYTES) throw new HttpError(413, 'PayloadTooLarge', `the body has ${size} bytes; at most ${MAX_BODY_BYTES} are accepted`);
  const contentType = (event.headers?.['content-type'] ?? event.headers?.['Content-Type'] ?? '').split(';')[0]?.trim().toLowerCase();
  const accepted = route.bodyContentTypes ?? ['application/json'];
  if (contentType && !accepted.includes(contentType)) {
    throw new HttpError(415, 'UnsupportedMediaType', `content-type ${contentType} is not accepted; send ${accepted.join(' or ')}`);
  }
  const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  if (text.trim() === '') throw new ValidationError('a JSON body is required', { code: 'MissingBody' });
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new ValidationError(`the body is not valid JSON: ${cause instanceof Error ? cause.message : String(cause)}`, { code: 'MalformedJSON', cause });
  }
}
