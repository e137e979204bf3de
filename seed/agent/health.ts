import { sendJson, serveHttp, type HttpEndpoint } from '../http-endpoint.js';

/** When the agent's loops last finished a round and what the garden last accepted, in `performance.now()` ms. */
export interface AgentProgress {
  /** The lease each heartbeat asks the garden for: the seed is GardenletReady this long after it. */
  leaseMs: number;
  /** Undefined until start(); the start itself counts as the loop's first round begun. */
  heartbeat?: { intervalMs: number; lastRoundAt: number; lastAcceptedAt?: number };
  /** Only while the agent listens to its queue; `waitMs` is how long one receive waits for a message. */
  poll?: { waitMs: number; lastRoundAt: number };
  /** How far the adoption of the planes a previous agent recorded got. */
  adoption: { state: 'pending' } | { state: 'running'; planes: number } | { state: 'settled' } | { state: 'failed' };
}

export interface HealthCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface HealthVerdict {
  ok: boolean;
  checks: HealthCheck[];
}

/**
 * What a round may take beyond its period before the loop counts as stuck: a round waits on one slow
 * answer at most (the garden client gives up after 30 s; an SDK call on a loaded machine as long again).
 */
export const ROUND_SLACK_MS = 60_000;

/** Three periods, as the lease (one late round is not a stuck loop), and a slow answer on top. */
export function roundBound(periodMs: number): number {
  return 3 * periodMs + ROUND_SLACK_MS;
}

/**
 * Liveness (`/healthz`): would a restart help? When a loop stopped going round (a heartbeat or a receive
 * that never returns on a hung connection, a start that hangs), and when the start could not read the
 * planes a previous agent recorded (the agent reads them once: a new one reads them again). Each round
 * counts whether it succeeded or failed: a garden or a queue that does not answer is not cured by a
 * restart, and a restarted agent could not even start (its first heartbeat must be accepted), so those
 * failures show in readiness only.
 */
export function liveness(progress: AgentProgress, now: number): HealthVerdict {
  const { heartbeat, poll, adoption } = progress;
  return verdict([
    heartbeat === undefined
      ? { name: 'heartbeat', ok: true, detail: 'not started' }
      : loopCheck('heartbeat', now - heartbeat.lastRoundAt, roundBound(heartbeat.intervalMs)),
    poll === undefined
      ? { name: 'commands', ok: true, detail: 'not listening' }
      : loopCheck('commands', now - poll.lastRoundAt, roundBound(poll.waitMs)),
    adoption.state === 'failed'
      ? { name: 'records', ok: false, detail: 'the recorded control planes could not be read at the start' }
      : { name: 'records', ok: true, detail: adoption.state === 'pending' ? 'not read yet' : 'read' },
  ]);
}

/**
 * Readiness (`/readyz`): the agent does its seed's work as the garden sees it. Live; the garden accepted a
 * heartbeat within the lease that heartbeat asked for (so the pod is Ready while the seed's GardenletReady
 * holds, and not while the garden counts the agent gone); and the planes a previous agent recorded are
 * adopted (each adopted, or its failure logged: such a plane is reported not ready and the next Reconcile
 * retries it, which no restart would do better). Not Ready changes nothing for the agent (no Service routes
 * to it): it is what `helm install --wait`, the Deployment's availability and an operator read.
 */
export function readiness(progress: AgentProgress, now: number): HealthVerdict {
  const accepted = progress.heartbeat?.lastAcceptedAt;
  return verdict([
    ...liveness(progress, now).checks,
    accepted === undefined
      ? { name: 'garden', ok: false, detail: 'no heartbeat accepted yet' }
      : {
          name: 'garden',
          ok: now - accepted <= progress.leaseMs,
          detail: `a heartbeat accepted ${seconds(now - accepted)} ago (lease ${seconds(progress.leaseMs)})`,
        },
    adoptionCheck(progress.adoption),
  ]);
}

function adoptionCheck(adoption: AgentProgress['adoption']): HealthCheck {
  switch (adoption.state) {
    case 'pending':
    case 'failed':
      return { name: 'adoption', ok: false, detail: 'the recorded control planes are not read' };
    case 'running':
      return { name: 'adoption', ok: false, detail: `adopting ${adoption.planes} recorded control plane(s)` };
    case 'settled':
      return { name: 'adoption', ok: true, detail: 'every recorded control plane adopted or reported' };
  }
}

function loopCheck(name: string, sinceMs: number, boundMs: number): HealthCheck {
  return {
    name,
    ok: sinceMs <= boundMs,
    detail: `a round ${seconds(sinceMs)} ago (bound ${seconds(boundMs)})`,
  };
}

function verdict(checks: HealthCheck[]): HealthVerdict {
  return { ok: checks.every((c) => c.ok), checks };
}

const seconds = (ms: number) => `${(Math.max(0, ms) / 1_000).toFixed(1)}s`;

const PROBES: ReadonlyMap<string, typeof liveness> = new Map([
  ['/healthz', liveness],
  ['/readyz', readiness],
]);

/**
 * The agent's health endpoint, as Kubernetes controllers serve one: `GET /healthz` (liveness) and
 * `GET /readyz` (readiness) answer 200 or 503 with every check as JSON; nothing else is served. Plain HTTP:
 * it says only how long ago things happened, no secret and no name of the seed's shoots.
 */
export function startHealthServer(input: {
  progress: () => AgentProgress;
  host?: string;
  port: number;
  now?: () => number;
}): Promise<HttpEndpoint> {
  const now = input.now ?? (() => performance.now());
  return serveHttp({
    handle: async (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const probe = req.method === 'GET' ? PROBES.get(path ?? '') : undefined;
      if (probe === undefined) return sendJson(res, 404, { error: `no route ${req.method} ${path}` });
      const result = probe(input.progress(), now());
      sendJson(res, result.ok ? 200 : 503, result);
    },
    ...(input.host === undefined ? {} : { host: input.host }),
    port: input.port,
  });
}
