import type { HttpEvent } from './http.js';

/**
 * Who calls (docs/design.md section 12). The gateway authorizes with IAM; the handler derives the actor again
 * from the caller the gateway authenticated (`requestContext.authorizer.iam.userArn`) and checks it
 * against the route, so that a misrouted or forged call is refused even where the gateway is not in front.
 */
export type Actor = { kind: 'operator' } | { kind: 'viewer' } | { kind: 'agent'; seed: string };

/**
 * What a route allows besides the operator (who may do everything): `viewer` for reads; `agent` for a
 * seed agent, on its own seed (`own-seed`: the `{name}` path parameter is the agent's seed) or on the
 * shoots placed on its seed (`placed-shoot`, checked against the stored shoot).
 */
export interface RouteAccess {
  viewer?: boolean;
  agent?: 'own-seed' | 'placed-shoot';
}

/** How principals map to actors; the stack sets both from the roles it creates. */
export interface AccessSettings {
  /** Role names of read-only callers. */
  viewerRoleNames: readonly string[];
  /** A role named `<prefix><seed>` is that seed's agent. */
  agentRolePrefix: string;
}

/** The tag on an agent's role that names its seed; the IAM policies scope by it (`${aws:PrincipalTag/...}`). */
export const SEED_PRINCIPAL_TAG = 'gardenless-seed';
export const DEFAULT_AGENT_ROLE_PREFIX = 'gl-seed-';

export function accessSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): AccessSettings {
  return {
    viewerRoleNames: (env.VIEWER_ROLE_NAMES ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    agentRolePrefix: env.AGENT_ROLE_PREFIX ?? DEFAULT_AGENT_ROLE_PREFIX,
  };
}

/**
 * The actor of an IAM-authorized request, or undefined when the request carries no IAM caller (the
 * gateway always sets one on an IAM route: a request without one did not come through it).
 * Principals other than the viewer and agent roles are operators: IAM already allowed them the route.
 */
export function actorOf(event: HttpEvent, settings: AccessSettings): Actor | undefined {
  const iam = (event.requestContext as { authorizer?: { iam?: { userArn?: string | null } } }).authorizer?.iam;
  const arn = iam?.userArn;
  if (!arn) return undefined;
  const role = /^arn:[^:]+:sts::\d*:assumed-role\/([^/]+)\/.+$/.exec(arn)?.[1];
  if (role === undefined) return { kind: 'operator' };
  if (settings.viewerRoleNames.includes(role)) return { kind: 'viewer' };
  if (role.startsWith(settings.agentRolePrefix) && role.length > settings.agentRolePrefix.length) {
    return { kind: 'agent', seed: role.slice(settings.agentRolePrefix.length) };
  }
  return { kind: 'operator' };
}
