import { afterEach, describe, expect, it } from 'vitest';
import type { GardenClient } from '../../../adapters/http/garden-client.js';
import { InMemoryBlobStore } from '../../../core/shootstate/index.js';
import { InMemorySnapshotStore } from '../../../core/snapshots/index.js';
import { SeedAgent } from '../../../seed/agent/agent.js';
import { ControlPlaneRuntime } from '../../../seed/agent/control-plane-runtime.js';
import {
  liveness,
  readiness,
  roundBound,
  ROUND_SLACK_MS,
  startHealthServer,
  type AgentProgress,
} from '../../../seed/agent/health.js';
import { MemoryHosting } from '../../../seed/agent/memory-hosting.js';
import { FailingPlaneStore, MemoryPlaneStore, type PlaneStore } from '../../../seed/agent/plane-store.js';
import type { HttpEndpoint } from '../../../seed/http-endpoint.js';
import { untilWith } from '../../../harness/until.js';
import { agentFakes } from './agent-fakes.js';

const NOW = 1_000_000;
/** An agent 10 s into its run: every loop went round just now, a heartbeat accepted, nothing to adopt. */
const healthy: AgentProgress = {
  leaseMs: 30_000,
  heartbeat: { intervalMs: 10_000, lastRoundAt: NOW - 1_000, lastAcceptedAt: NOW - 1_000 },
  poll: { waitMs: 5_000, lastRoundAt: NOW - 500 },
  adoption: { state: 'settled' },
};
const failing = (verdict: { checks: { name: string; ok: boolean }[] }) =>
  verdict.checks.filter((c) => !c.ok).map((c) => c.name);

describe('the agent health verdicts', () => {
  it('bounds a round by three periods and a slow answer', () => {
    expect(roundBound(10_000)).toBe(30_000 + ROUND_SLACK_MS);
    expect(roundBound(5_000)).toBe(15_000 + ROUND_SLACK_MS);
  });

  it.each<[string, Partial<AgentProgress>, string[]]>([
    ['an agent whose loops go round', {}, []],
    ['an agent not started yet', { heartbeat: undefined, poll: undefined, adoption: { state: 'pending' } }, []],
    [
      'a heartbeat round just within its bound (one in flight on a slow garden)',
      { heartbeat: { intervalMs: 10_000, lastRoundAt: NOW - roundBound(10_000) } },
      [],
    ],
    [
      'a heartbeat that has not come back for longer than its bound',
      { heartbeat: { intervalMs: 10_000, lastRoundAt: NOW - roundBound(10_000) - 1 } },
      ['heartbeat'],
    ],
    [
      'a start that hangs (its first heartbeat round never ended, nothing listens yet)',
      { heartbeat: { intervalMs: 10_000, lastRoundAt: NOW - 120_000 }, poll: undefined },
      ['heartbeat'],
    ],
    [
      'a receive that has not come back for longer than its bound',
      { poll: { waitMs: 5_000, lastRoundAt: NOW - roundBound(5_000) - 1 } },
      ['commands'],
    ],
    [
      'a garden that refuses every heartbeat: the rounds still end, a restart would not help',
      { heartbeat: { intervalMs: 10_000, lastRoundAt: NOW - 2_000, lastAcceptedAt: NOW - 600_000 } },
      [],
    ],
    ['a start that could not read the recorded planes', { adoption: { state: 'failed' } }, ['records']],
  ])('liveness of %s', (_what, change, failed) => {
    // Act
    const verdict = liveness({ ...healthy, ...change }, NOW);
    // Assess
    expect(failing(verdict)).toEqual(failed);
    expect(verdict.ok).toBe(failed.length === 0);
  });

  it.each<[string, Partial<AgentProgress>, string[]]>([
    ['an agent whose heartbeat the garden accepted and whose planes are adopted', {}, []],
    [
      'an agent started, no heartbeat accepted yet',
      { heartbeat: { intervalMs: 10_000, lastRoundAt: NOW - 1_000 }, adoption: { state: 'pending' } },
      ['garden', 'adoption'],
    ],
    [
      'a heartbeat accepted at the very end of its lease',
      { heartbeat: { intervalMs: 10_000, lastRoundAt: NOW - 1_000, lastAcceptedAt: NOW - 30_000 } },
      [],
    ],
    [
      'a garden that has not accepted a heartbeat for longer than the lease',
      { heartbeat: { intervalMs: 10_000, lastRoundAt: NOW - 1_000, lastAcceptedAt: NOW - 30_001 } },
      ['garden'],
    ],
    [
      'an agent still adopting what its predecessor recorded',
      { adoption: { state: 'running', planes: 2 } },
      ['adoption'],
    ],
    ['an agent that is not live', { poll: { waitMs: 5_000, lastRoundAt: NOW - roundBound(5_000) - 1 } }, ['commands']],
    ['an agent that could not read its records', { adoption: { state: 'failed' } }, ['records', 'adoption']],
  ])('readiness of %s', (_what, change, failed) => {
    // Act
    const verdict = readiness({ ...healthy, ...change }, NOW);
    // Assess
    expect(failing(verdict)).toEqual(failed);
    expect(verdict.ok).toBe(failed.length === 0);
  });
});

const agents: SeedAgent[] = [];
const endpoints: HttpEndpoint[] = [];
const released: (() => void)[] = [];
afterEach(async () => {
  released.splice(0).forEach((release) => release());
  await Promise.all(agents.splice(0).map((a) => a.stop()));
  await Promise.all(endpoints.splice(0).map((e) => e.close()));
});
const until = untilWith({ timeoutMs: 4_000, intervalMs: 10 });

/** Memory hosting whose etcd start waits until the test releases it: an adoption that takes a while. */
class HeldStartHosting extends MemoryHosting {
  private readonly gate = new Promise<void>((resolve) => released.push(resolve));
  override async startEtcd(spec: Parameters<MemoryHosting['startEtcd']>[0]) {
    await this.gate;
    return super.startEtcd(spec);
  }
}

/** An agent on memory fakes behind its health endpoint on loopback; `refuse` makes the garden answer 503. */
async function agentWithEndpoint(options: { planeStore?: PlaneStore; hosting?: MemoryHosting } = {}) {
  const f = agentFakes();
  const garden = { refuse: false };
  const agent = new SeedAgent({
    seed: 'seed-a',
    garden: {
      request: async (...args: Parameters<GardenClient['request']>) =>
        garden.refuse ? { status: 503, headers: {}, body: { message: 'unavailable' } } : f.garden.request(...args),
    } as GardenClient,
    inbox: () => f.inbox,
    answers: f.answers,
    heartbeatIntervalMs: 50,
    runtime: () =>
      new ControlPlaneRuntime({
        seed: 'seed-a',
        hosting: options.hosting ?? new MemoryHosting(),
        blobStore: () => new InMemoryBlobStore(),
        snapshotStore: () => new InMemorySnapshotStore(),
        ...(options.planeStore ? { planeStore: options.planeStore } : {}),
      }),
  });
  agents.push(agent);
  const endpoint = await startHealthServer({ progress: () => agent.progress(), port: 0 });
  endpoints.push(endpoint);
  const get = async (path: string) => {
    const res = await fetch(`${endpoint.url}${path}`);
    return { status: res.status, body: (await res.json()) as { ok: boolean; checks: { name: string; ok: boolean }[] } };
  };
  return { agent, garden, endpoint, get };
}

describe('the agent health endpoint', () => {
  it('answers /readyz 503 until the garden accepted a heartbeat, then 200; /healthz 200 throughout', async () => {
    // Prepare
    const { agent, get } = await agentWithEndpoint();
    // Assess: before the start, live and not ready, saying why.
    expect(await get('/healthz')).toMatchObject({ status: 200, body: { ok: true } });
    const before = await get('/readyz');
    expect(before.status).toBe(503);
    expect(failing(before.body)).toEqual(['garden', 'adoption']);
    // Act
    await agent.start();
    // Assess
    const ready = await until('/readyz 200', async () => {
      const r = await get('/readyz');
      return r.status === 200 ? r : undefined;
    });
    expect(ready.body.checks.map((c) => c.name)).toEqual(['heartbeat', 'commands', 'records', 'garden', 'adoption']);
    expect(await get('/healthz')).toMatchObject({ status: 200, body: { ok: true } });
  });

  it('turns /readyz 503 once the garden has refused heartbeats for longer than the lease, and 200 when it accepts again; /healthz stays 200', async () => {
    // Prepare
    const { agent, garden, get } = await agentWithEndpoint();
    await agent.start();
    await until('/readyz 200', async () => (await get('/readyz')).status === 200);
    // Act: the garden refuses (the lease of 50 ms heartbeats is 1 s).
    garden.refuse = true;
    // Assess
    const refused = await until('/readyz 503', async () => {
      const r = await get('/readyz');
      return r.status === 503 ? r : undefined;
    });
    expect(failing(refused.body)).toEqual(['garden']);
    expect(await get('/healthz')).toMatchObject({ status: 200, body: { ok: true } });
    garden.refuse = false;
    await until('/readyz 200 again', async () => (await get('/readyz')).status === 200);
  });

  it('is not ready while the agent adopts what its predecessor recorded, and ready once it has', async () => {
    // Prepare: a plane an earlier agent recorded, whose etcd start the test holds.
    const store = new MemoryPlaneStore();
    await store.save({
      shoot: { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' },
      backupBucket: 'gl-backup-seed-a',
      hibernated: false,
      migrated: false,
      extensions: [],
    });
    const { agent, get } = await agentWithEndpoint({ planeStore: store, hosting: new HeldStartHosting() });
    // Act
    await agent.start();
    // Assess: the heartbeat is accepted, the adoption holds readiness back.
    const adopting = await until('/readyz naming only the adoption', async () => {
      const r = await get('/readyz');
      return failing(r.body).join() === 'adoption' ? r : undefined;
    });
    expect(adopting.status).toBe(503);
    released.splice(0).forEach((release) => release());
    await until('/readyz 200', async () => (await get('/readyz')).status === 200);
  });

  it('fails /healthz when the start could not read the recorded planes: a new agent reads them again', async () => {
    // Prepare
    const { agent, get } = await agentWithEndpoint({ planeStore: new FailingPlaneStore() });
    // Act
    await agent.start();
    // Assess
    const dead = await get('/healthz');
    expect(dead.status).toBe(503);
    expect(failing(dead.body)).toEqual(['records']);
    expect((await get('/readyz')).status).toBe(503);
  });

  it('serves nothing but GET /healthz and GET /readyz', async () => {
    // Prepare
    const { endpoint } = await agentWithEndpoint();
    // Act / Assess
    expect((await fetch(`${endpoint.url}/status`)).status).toBe(404);
    expect((await fetch(`${endpoint.url}/healthz`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${endpoint.url}/readyz?verbose`)).status).toBe(503);
  });
});
