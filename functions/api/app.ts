import type { GardenService } from '../../core/garden/service.js';
import type { Seed } from '../../core/model/seed.js';
import type { EvacuationControls } from '../../core/evacuation/controls.js';
import type { ShootKubeconfigs } from '../../core/garden/kubeconfigs.js';
import type { MigrationAdmission } from '../../core/migration/migration-admission.js';
import { ForbiddenError, ValidationError } from '../../core/errors.js';
import { actorOf, type AccessSettings, type Actor } from './access.js';
import { isWellFormedText, parseJsonBody } from '../../core/garden/json-input.js';
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
  /** How callers map to actors (operator, viewer, seed agent). */
  access: AccessSettings;
  migrations?: MigrationAdmission;
  evacuations?: EvacuationControls;
  kubeconfigs?: ShootKubeconfigs;
  version: string;
  onUnexpected?: (error: unknown, event: HttpEvent) => void;
  /** Sees each recorded heartbeat (the handler turns the agents' fencing figures into metrics). */
  onHeartbeat?: (seed: Seed) => void;
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
      throw new HttpError(
        405,
        'MethodNotAllowed',
        `${method} is not allowed on ${path}; allowed: ${match.allow.join(', ')}`,
        { allow: match.allow.join(', ') },
      );
    }
    const { route } = match;
    if (route.operationId === 'openapi') {
      await authorize({ event, route, params: {}, deps });
      cachedDocument ??= JSON.stringify(openApiDocument({ version: deps.version }));
      return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: cachedDocument };
    }
    const params = validateParams(route, match.params);
    const actor = route.public ? ({ kind: 'operator' } as const) : await authorize({ event, route, params, deps });
    const body = route.body ? parseBody(event, route) : undefined;
    const query = queryOf(event);
    return await route.handle({
      params,
      query,
      body,
      actor,
      service: deps.service,
      version: deps.version,
      ...(deps.migrations ? { migrations: deps.migrations } : {}),
      ...(deps.evacuations ? { evacuations: deps.evacuations } : {}),
      ...(deps.kubeconfigs ? { kubeconfigs: deps.kubeconfigs } : {}),
      ...(callerOf(event) ? { caller: callerOf(event)! } : {}),
      ...(deps.onHeartbeat ? { onHeartbeat: deps.onHeartbeat } : {}),
    });
  } catch (error) {
    const mapped = errorResult(error);
    if (mapped) return mapped;
    deps.onUnexpected?.(error, event);
    return json(500, { code: 'Internal', message: 'internal error; the request may be retried' });
  }
}

/**
 * The caller's right to this route (docs/design.md section 12), checked here as well as by the gateway's IAM
 * policies: an agent only on its own seed and the shoots placed on it, a viewer only where the route
 * allows reading, and a request without an authenticated caller never.
 */
async function authorize(options: {
  event: HttpEvent;
  route: Route;
  params: Record<string, string>;
  deps: ApiDeps;
}): Promise<Actor> {
  const { route, params, deps } = options;
  const actor = actorOf(options.event, deps.access);
  const what = `${route.method} ${route.path}`;
  if (!actor) throw new ForbiddenError(`${what} needs an IAM-authenticated caller`, { code: 'NoCaller' });
  if (actor.kind === 'operator') return actor;
  if (actor.kind === 'viewer') {
    if (route.access?.viewer) return actor;
    throw new ForbiddenError(`a viewer may not call ${what}`);
  }
  const rule = route.access?.agent;
  if (rule === 'own-seed' && params.name === actor.seed) return actor;
  if (rule === 'placed-shoot' && params.project && params.name) {
    const shoot = await deps.service.getShoot(params.project, params.name);
    if (shoot.status.seedName === actor.seed) return actor;
    throw new ForbiddenError(`shoot ${params.project}/${params.name} is not placed on seed ${actor.seed}`);
  }
  throw new ForbiddenError(
    `the agent of seed ${actor.seed} may not call ${route.method} ${options.event.rawPath.slice(0, 200)}`,
  );
}

function callerOf(event: HttpEvent): string | undefined {
  return (
    (event.requestContext as { authorizer?: { iam?: { userArn?: string | null } } }).authorizer?.iam?.userArn ??
    undefined
  );
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
      throw new ValidationError(`path parameter ${key} is not valid URL encoding`, {
        field: key,
        cause,
        code: 'InvalidName',
      });
    }
    const schema = route.params?.[key];
    if (schema) {
      try {
        parseInput(z.object({ [key]: schema }), { [key]: decoded });
      } catch (error) {
        throw new ValidationError(
          `${key} "${decoded.slice(0, 80)}": ${error instanceof Error ? error.message.replace(`${key}: `, '') : 'invalid'}`,
          {
            field: key,
            code: 'InvalidName',
            cause: error,
          },
        );
      }
    }
    out[key] = decoded;
  }
  return out;
}

function parseBody(event: HttpEvent, route: Route): unknown {
  const raw = event.body ?? '';
  const size = event.isBase64Encoded ? Math.floor((raw.length * 3) / 4) : Buffer.byteLength(raw, 'utf8');
  const limit = route.maxBodyBytes ?? MAX_BODY_BYTES;
  if (size > limit)
    throw new HttpError(413, 'PayloadTooLarge', `the body has ${size} bytes; at most ${limit} are accepted`);
  const contentType = (event.headers?.['content-type'] ?? event.headers?.['Content-Type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();
  const accepted = route.bodyContentTypes ?? ['application/json'];
  if (contentType && !accepted.includes(contentType)) {
    throw new HttpError(
      415,
      'UnsupportedMediaType',
      `content-type ${contentType} is not accepted; send ${accepted.join(' or ')}`,
    );
  }
  const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  if (text.trim() === '') throw new ValidationError('a JSON body is required', { code: 'MissingBody' });
  return parseJsonBody(text);
}

function queryOf(event: HttpEvent): Record<string, string> {
  const query = Object.fromEntries(
    Object.entries(event.queryStringParameters ?? {}).filter((e): e is [string, string] => e[1] !== undefined),
  );
  for (const [key, value] of Object.entries(query)) {
    if (!isWellFormedText(key) || !isWellFormedText(value))
      throw new ValidationError(`query parameter ${key.slice(0, 40)}: not valid Unicode`, { code: 'InvalidUnicode' });
  }
  return query;
}
