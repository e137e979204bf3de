import type { AccessSettings } from '../../../functions/api/access.js';
import { handleRequest } from '../../../functions/api/app.js';
import type { HttpEvent, HttpResult } from '../../../functions/api/http.js';
import { EvacuationControls } from '../../../core/evacuation/controls.js';
import { MemoryEvacuationStore } from '../../../core/evacuation/store.js';
import { garden, type Garden } from '../garden/builders.js';
import { ShootKubeconfigs } from '../../../core/garden/kubeconfigs.js';
import { generateShootSecrets } from '../../../core/pki/shoot-secrets.js';
import {
  InMemoryShootStateStore,
  LocalDataKeys,
  ShootSecretsKeeper,
  type ShootSecrets,
} from '../../../core/shootstate/index.js';

export const VERSION = '0.1.0-test';

/** The roles of the test deployment: a viewer role and agent roles named `gl-seed-<seed>`. */
export const ACCESS: AccessSettings = { viewerRoleNames: ['Garden-viewer'], agentRolePrefix: 'gl-seed-' };

/** Callers as API Gateway authenticates them (IAM authorization fills `requestContext.authorizer.iam`). */
export const CALLERS = {
  operator: 'arn:aws:sts::123456789012:assumed-role/Garden-operator/alice',
  admin: 'arn:aws:iam::123456789012:user/admin',
  viewer: 'arn:aws:sts::123456789012:assumed-role/Garden-viewer/bob',
  agent: (seed: string) => `arn:aws:sts::123456789012:assumed-role/gl-seed-${seed}/eks-seed-agent-7f9c`,
} as const;

/** The `requestContext.authorizer` block of an IAM-authorized HTTP API (payload 2.0) request. */
export function iamAuthorizer(userArn: string) {
  const roleSession = /assumed-role\/(.+)$/.exec(userArn)?.[1]?.replace('/', ':');
  return {
    iam: {
      accessKey: 'ASIAEXAMPLE0000000000',
      accountId: '123456789012',
      callerId: roleSession ? `AROAEXAMPLE00000000:${roleSession.split(':')[1]}` : 'AIDAEXAMPLE00000000',
      cognitoIdentity: null,
      principalOrgId: null,
      userArn,
      userId: roleSession ? `AROAEXAMPLE00000000:${roleSession.split(':')[1]}` : 'AIDAEXAMPLE00000000',
    },
  };
}

export interface RequestOptions {
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  base64?: boolean;
  /** The authenticated caller's ARN (default the operator); null for a request without an IAM caller. */
  caller?: string | null;
}

/** An API Gateway HTTP API (payload v2) event, with the fields the pipeline reads. */
export function httpEvent(method: string, rawPath: string, options: RequestOptions = {}): HttpEvent {
  const text =
    options.body === undefined
      ? undefined
      : typeof options.body === 'string'
        ? options.body
        : JSON.stringify(options.body);
  const headers = { ...(text !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers };
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: new URLSearchParams(options.query ?? {}).toString(),
    headers,
    ...(options.query ? { queryStringParameters: options.query } : {}),
    requestContext: {
      ...(options.caller === null ? {} : { authorizer: iamAuthorizer(options.caller ?? CALLERS.operator) }),
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
  /** The evacuations the API shows and controls (in memory; tests put records into it). */
  evacuationStore: MemoryEvacuationStore;
  /** The shoots' secrets the kubeconfig routes sign with (in memory). */
  secrets: ShootSecretsKeeper;
}

let generated: ShootSecrets | undefined;
/** One set of secrets per test file: making them is the slow part, and no test compares two shoots' CAs. */
async function secretsOnce(now: Date): Promise<ShootSecrets> {
  generated ??= await generateShootSecrets(now);
  return generated;
}

export function api(): Api {
  const g = garden();
  const unexpected: unknown[] = [];
  const evacuationStore = new MemoryEvacuationStore();
  const evacuations = new EvacuationControls({
    store: evacuationStore,
    events: { publish: async () => {} },
    clock: g.clock,
  });
  const secrets = new ShootSecretsKeeper({
    store: new InMemoryShootStateStore(),
    keys: new LocalDataKeys(),
    generate: secretsOnce,
    now: () => g.clock.now(),
  });
  const kubeconfigs = new ShootKubeconfigs({
    getShoot: (project, name) => g.service.getShoot(project, name),
    secrets,
    clock: g.clock,
  });
  const sendEvent = async (event: HttpEvent): Promise<Response> => {
    const raw = await handleRequest(event, {
      service: g.service,
      evacuations,
      kubeconfigs,
      access: ACCESS,
      version: VERSION,
      onUnexpected: (error) => unexpected.push(error),
    });
    const text = typeof raw.body === 'string' ? raw.body : '';
    return {
      status: raw.statusCode ?? 0,
      headers: Object.fromEntries(Object.entries(raw.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)])),
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
      raw,
    };
  };
  return {
    ...g,
    unexpected,
    evacuationStore,
    secrets,
    sendEvent,
    send: (method, path, options) => sendEvent(httpEvent(method, path, options)),
  };
}
