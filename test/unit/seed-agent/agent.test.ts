import { afterEach, describe, expect, it } from 'vitest';
import { COMMAND_API_VERSION } from '../../../core/commands/index.js';
import type { OwnerCheckResult } from '../../../core/ownership/index.js';
import { InMemoryBlobStore } from '../../../core/shootstate/index.js';
import { InMemorySnapshotStore } from '../../../core/snapshots/index.js';
import { SeedAgent } from '../../../seed/agent/agent.js';
import { ControlPlaneRuntime } from '../../../seed/agent/control-plane-runtime.js';
import { MemoryHosting } from '../../../seed/agent/memory-hosting.js';
import { agentFakes, storeFullSnapshot } from './agent-fakes.js';
import { untilWith } from '../../../harness/until.js';

const shoot = { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' };
const command = (fields: Record<string, unknown>) =>
  JSON.stringify({
    apiVersion: COMMAND_API_VERSION,
    shoot,
    seed: 'seed-a',
    issuedAt: new Date().toISOString(),
    ...fields,
  });

const agents: SeedAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

async function startAgent(
  f: ReturnType<typeof agentFakes>,
  hosting: MemoryHosting = new MemoryHosting(),
  options: {
    heartbeatIntervalMs?: number;
    snapshots?: InMemorySnapshotStore;
    ownerCheck?: () => Promise<OwnerCheckResult>;
  } = {},
) {
  const agent = new SeedAgent({
    seed: 'seed-a',
    garden: f.garden,
    inbox: () => f.inbox,
    answers: f.answers,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 50,
    runtime: () =>
      new ControlPlaneRuntime({
        seed: 'seed-a',
        hosting,
        blobStore: () => new InMemoryBlobStore(),
        snapshotStore: () => options.snapshots ?? new InMemorySnapshotStore(),
        ...(options.ownerCheck ? { ownerCheck: options.ownerCheck } : {}),
      }),
  });
  agents.push(agent);
  await agent.start();
  return agent;
}

const until = untilWith({ timeoutMs: 4_000, intervalMs: 5 });

/** Memory hosting whose etcd start waits until the test releases it: a command of the shoot that is still running. */
class SlowStartHosting extends MemoryHosting {
  release: (() => void) | undefined;
  override async startEtcd(spec: Parameters<MemoryHosting['startEtcd']>[0]) {
    await new Promise<void>((resolve) => (this.release = resolve));
    return super.startEtcd(spec);
  }
}

describe('SeedAgent loop', () => {
  it('hands an owner-change notice to the sidecars at once, even while a command of the shoot runs; never answers it, and every repeat is delivered again', async () => {
    // Prepare: a create of the shoot that hangs in the etcd start, after a first one that ran.
    const f = agentFakes();
    const hosting = new SlowStartHosting();
    await startAgent(f, hosting);
    const create = {
      type: 'create-control-plane',
      commandId: 'm/create',
      controlPlane: { hibernated: false, backup: { bucket: 'gl-backup-a' } },
    };
    f.inbox.push(command({ ...create, taskToken: 't1' }));
    await until('the etcd start to be held', () => hosting.release !== undefined);
    hosting.release!();
    await until('one answer', () => f.answered.length === 1);
    hosting.release = undefined;
    f.inbox.push(
      command({
        type: 'reconcile',
        commandId: 'm/reconcile',
        controlPlane: { hibernated: false, backup: { bucket: 'gl-backup-a' } },
        taskToken: 't2',
      }),
    );
    await until('the etcd start to be held', () => hosting.release !== undefined);
    const notice = { type: 'check-owner', commandId: 'mig-1/delete-owner-record/check-owner', change: 'deleted' };

    // Act: the same notice twice while the reconcile is stuck.
    f.inbox.push(command(notice));
    f.inbox.push(command(notice));
    await until(
      'both owner-change notices',
      () => hosting.calls.filter((c) => c.startsWith('notice-owner-change')).length === 2,
    );

    // Assess: delivered before the reconcile finished, nothing answered for it, every message deleted.
    expect(f.answered.map((a) => a.token)).toEqual(['t1']);
    expect(f.inbox.deleted).toHaveLength(4);
    (hosting.release as (() => void) | undefined)?.();
    await until('two answers', () => f.answered.length === 2);
  });

  it("reports live-walk in its heartbeats only where its hosting has a member of its own to join a shoot's etcd", async () => {
    class JoiningHosting extends MemoryHosting {
      liveMember = async () => ({
        name: 'etcd-x',
        peerUrl: 'https://127.0.0.1:1',
        clientUrl: 'http://127.0.0.1:2',
        joined: false,
      });
    }
    for (const [hosting, capabilities] of [
      [new MemoryHosting(), []],
      [new JoiningHosting(), ['live-walk']],
    ] as const) {
      const f = agentFakes();
      await startAgent(f, hosting);
      // The first heartbeat may go before the runtime starts (it learns the queue): none is reported then.
      await until('a heartbeat from the runtime', () => f.heartbeats.length > 1);
      expect(f.heartbeats.at(-1)!.capabilities).toEqual(capabilities);
    }
  });

  it('sends one heartbeat at a time: a garden slower than the interval gets the next one after it answered', async () => {
    // Prepare: a garden that answers a heartbeat only after six intervals (50 ms each).
    const f = agentFakes();
    let inFlight = 0;
    let most = 0;
    let sent = 0;
    const answer = f.garden.request.bind(f.garden);
    f.garden.request = (async (...args: Parameters<typeof answer>) => {
      inFlight += 1;
      sent += 1;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 300));
      inFlight -= 1;
      return answer(...args);
    }) as typeof f.garden.request;

    // Act: the agent runs for about twenty intervals.
    await startAgent(f);
    await new Promise((r) => setTimeout(r, 1_000));

    // Assess: never two at once, and still one after another.
    expect(most).toBe(1);
    expect(sent).toBeGreaterThanOrEqual(3);
  });

  it('reports a restore in a heartbeat before it answers the restore (the API record switch reads the report)', async () => {
    // Prepare: heartbeats only at the start and when asked (the interval is a minute); the order of what the garden hears.
    const f = agentFakes();
    const heard: string[] = [];
    const request = f.garden.request.bind(f.garden);
    f.garden.request = (async (...args: Parameters<typeof request>) => {
      heard.push('heartbeat');
      return request(...args);
    }) as typeof f.garden.request;
    const success = f.answers.success;
    f.answers.success = async (...args) => {
      heard.push(`answer ${args[0]}`);
      return success(...args);
    };
    const snapshots = new InMemorySnapshotStore();
    await storeFullSnapshot(snapshots, { technicalID: shoot.technicalID, lastRevision: 42, final: true });
    await startAgent(f, new MemoryHosting(), { heartbeatIntervalMs: 60_000, snapshots });

    // Act: a restore, then a reconcile (which the next interval's heartbeat reports).
    f.inbox.push(
      command({
        type: 'restore',
        commandId: 'm/restore',
        hibernated: false,
        etcd: { bucket: 'gl-backup-a', expectedLastRevision: 42, final: true },
        taskToken: 't1',
      }),
    );
    await until('the restore answered', () => heard.includes('answer t1'), {
      explain: () => JSON.stringify(f.answered),
    });
    f.inbox.push(
      command({
        type: 'reconcile',
        commandId: 'm/reconcile',
        controlPlane: { hibernated: false, backup: { bucket: 'gl-backup-a' } },
        taskToken: 't2',
      }),
    );
    await until('the reconcile answered', () => heard.includes('answer t2'));

    // Assess
    expect(heard).toEqual(['heartbeat', 'heartbeat', 'answer t1', 'answer t2']);
  });

  it('removes a released leftover as the heartbeat saw it: a command of the shoot since then keeps it until a later heartbeat is answered', async () => {
    // Prepare: a plane this seed hosts and, by its owner check, no longer owns (a source after a move).
    const f = agentFakes();
    let owner: OwnerCheckResult = 'owner';
    const hosting = new MemoryHosting();
    await startAgent(f, hosting, { ownerCheck: async () => owner });
    f.inbox.push(
      command({
        type: 'create-control-plane',
        commandId: 'm/create',
        controlPlane: { hibernated: false, backup: { bucket: 'gl-backup-a' } },
        taskToken: 't1',
      }),
    );
    await until('the create answered', () => f.answered.length === 1);
    owner = 'not-owner';
    // A garden that answers the next heartbeat only when let go, releasing the plane, as one that heard it
    // before a migration back here began would.
    const answer = f.garden.request.bind(f.garden);
    const release = [{ technicalID: shoot.technicalID, reason: 'placed on seed-b' }];
    let letGo: (() => void) | undefined;
    let answersRelease = true;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let holding = true;
    f.garden.request = (async (...args: Parameters<typeof answer>) => {
      const res = (await answer(...args)) as { status: number; body: object };
      if (holding) {
        holding = false;
        await held;
        return { ...res, body: { ...res.body, release } };
      }
      return answersRelease ? { ...res, body: { ...res.body, release } } : res;
    }) as typeof f.garden.request;
    await until('a heartbeat held', () => !holding);
    const seen = f.heartbeats.length;

    // Act: a command of the shoot arrives while that heartbeat waits for its answer; then the answer comes.
    f.inbox.push(
      command({ type: 'scale', commandId: 'm/scale', component: 'cluster-autoscaler', replicas: 0, taskToken: 't2' }),
    );
    await until('the command answered', () => f.answered.length === 2);
    answersRelease = false;
    letGo!();
    await until('two heartbeats after the held one', () => f.heartbeats.length >= seen + 2);

    // Assess: the plane stays; the release of a heartbeat sent after the command removes it.
    expect(f.heartbeats.at(-1)!.controlPlanes.map((p) => p.technicalID)).toEqual([shoot.technicalID]);
    answersRelease = true;
    await until('the plane removed', () => f.heartbeats.at(-1)!.controlPlanes.length === 0);
  });

  it('refuses a check-owner notice that carries a task token, as an invalid command', async () => {
    const f = agentFakes();
    const hosting = new MemoryHosting();
    await startAgent(f, hosting);
    f.inbox.push(command({ type: 'check-owner', commandId: 'm/notice', change: 'set', taskToken: 't9' }));
    await until('one answer', () => f.answered.length === 1);
    expect(f.answered[0]).toMatchObject({ token: 't9', kind: 'InvalidCommand' });
    expect(hosting.calls.filter((c) => c.startsWith('notice-owner-change'))).toEqual([]);
  });

  it('runs a command once, answers its token, replays the outcome to a retry, and deletes every message', async () => {
    // Prepare
    const f = agentFakes();
    const agent = await startAgent(f);
    const create = {
      type: 'create-control-plane',
      commandId: 'm/create',
      controlPlane: { hibernated: false, backup: { bucket: 'gl-backup-a' } },
    };

    // Act
    f.inbox.push(command({ ...create, taskToken: 't1' }));
    await until('one answer', () => f.answered.length === 1);
    f.inbox.push(command({ ...create, taskToken: 't2' }));
    await until('two answers', () => f.answered.length === 2);

    // Assess
    expect(f.answered.map((a) => [a.token, a.kind])).toEqual([
      ['t1', 'success'],
      ['t2', 'success'],
    ]);
    expect(f.answered[1]!.body).toBe(f.answered[0]!.body);
    expect(f.inbox.deleted).toHaveLength(2);
    expect(agent.identity).toBe('seed-a-id');
    await until('a heartbeat naming the plane', () =>
      f.heartbeats.some((h) => h.controlPlanes.some((p) => p.technicalID === shoot.technicalID)),
    );
  });

  it.each([
    {
      name: 'another seed',
      body: command({
        type: 'scale',
        commandId: 'x',
        seed: 'seed-b',
        component: 'cluster-autoscaler',
        replicas: 0,
        taskToken: 't',
      }),
    },
    { name: 'another apiVersion', body: JSON.stringify({ apiVersion: 'v0', taskToken: 't' }) },
  ])('answers InvalidCommand to a message for $name', async ({ body }) => {
    const f = agentFakes();
    await startAgent(f);
    f.inbox.push(body);
    await until('one answer', () => f.answered.length === 1);
    expect(f.answered[0]).toMatchObject({ token: 't', kind: 'InvalidCommand' });
  });

  it('answers ControlPlaneNotFound for a shoot it does not host', async () => {
    const f = agentFakes();
    await startAgent(f);
    f.inbox.push(
      command({ type: 'scale', commandId: 'dwd/1', component: 'cluster-autoscaler', replicas: 0, taskToken: 't' }),
    );
    await until('one answer', () => f.answered.length === 1);
    expect(f.answered[0]).toMatchObject({ kind: 'ControlPlaneNotFound' });
  });
});
