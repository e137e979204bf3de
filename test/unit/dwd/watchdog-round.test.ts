import { describe, expect, it } from 'vitest';
import type { ExternalProbeResult } from '../../../core/dwd/probe-round.js';
import { runWatchdogRound, type WatchdogCommandSender } from '../../../core/dwd/watchdog-round.js';
import {
  MemoryWatchdogStateStore,
  type StoredWatchdogRecord,
  type WatchdogCommand,
  type WatchdogStateStore,
} from '../../../core/dwd/watchdog-store.js';
import { ConflictError } from '../../../core/errors.js';
import type { HostedControlPlane, Seed } from '../../../core/model/seed.js';
import type { Shoot } from '../../../core/model/shoot.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function shoot(overrides: Partial<Shoot['spec']> = {}, lastOperation?: Shoot['status']['lastOperation']): Shoot {
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Shoot',
    metadata: {
      project: 'dev',
      name: 'api1',
      resourceVersion: '1',
      uid: 'u',
      creationTimestamp: new Date(T0).toISOString(),
    },
    spec: { provider: { type: 'aws' }, region: 'eu-west-1', seedName: 'seed-a', ...overrides },
    status: {
      technicalID: 'shoot--dev--api1',
      seedName: 'seed-a',
      conditions: [],
      constraints: [],
      ...(lastOperation ? { lastOperation } : {}),
    },
  };
}

/** The seed as the garden reads it; `heardAt` is its agent's last heartbeat (default: this round). */
function seed(cp: Partial<HostedControlPlane>, now: number, heardAt = now): Seed {
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Seed',
    metadata: { name: 'seed-a', resourceVersion: '1', uid: 'u', creationTimestamp: new Date(T0).toISOString() },
    spec: {
      provider: { type: 'aws', region: 'eu-west-1', zones: ['a'] },
      networks: { pods: '10.1.0.0/16', services: '10.2.0.0/16' },
    },
    status: {
      identity: 'seed-a-1',
      conditions: [],
      shoots: 1,
      labels: {},
      lastHeartbeatTime: new Date(heardAt).toISOString(),
      leaseDurationSeconds: 30,
      controlPlanes: [
        {
          technicalID: 'shoot--dev--api1',
          active: true,
          externalUrl: 'http://lb.example:443',
          internalProbe: 'Success',
          internalProbeTime: new Date(heardAt).toISOString(),
          etcdReady: true,
          components: {
            'kube-controller-manager': { replicas: 1 },
            'machine-controller-manager': { replicas: 1 },
            'cluster-autoscaler': { replicas: 2 },
          },
          ...cp,
        },
      ],
    },
  };
}

class Recorder implements WatchdogCommandSender {
  readonly sent: { commandId: string; actions: WatchdogCommand[] }[] = [];
  failNext = false;
  async send(options: { commandId: string; actions: WatchdogCommand[] }): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('queue unavailable');
    }
    this.sent.push({ commandId: options.commandId, actions: options.actions });
  }
}

/** Runs rounds ten seconds apart with the given external results and heartbeat fields. */
function harness(store: WatchdogStateStore = new MemoryWatchdogStateStore()) {
  const commands = new Recorder();
  const events: string[] = [];
  let now = T0;
  let ids = 0;
  const probes = { count: 0 };
  const round = async (
    external: ExternalProbeResult,
    cp: Partial<HostedControlPlane> = {},
    s: Shoot = shoot(),
    heardAt?: number,
  ) => {
    now += 10_000;
    const [result] = await runWatchdogRound({
      shoots: [s],
      seeds: [seed(cp, now, heardAt ?? now)],
      store,
      commands,
      prober: { probe: async () => (probes.count++, external) },
      events: { publish: async (type) => void events.push(type) },
      now: new Date(now),
      newId: () => `cmd-${++ids}`,
    });
    return result!;
  };
  return { round, commands, events, store, probes, now: () => now };
}

describe('the external probe target', () => {
  it('is the load balancer by default, and the API domain on its scheme and port when the deployment probes through it', async () => {
    const urls: string[] = [];
    const run = (apiDomain?: { externalDomain: string }) =>
      runWatchdogRound({
        shoots: [shoot()],
        seeds: [seed({ externalUrl: 'https://52.1.2.3:6443' }, T0)],
        store: new MemoryWatchdogStateStore(),
        commands: new Recorder(),
        prober: { probe: async (url) => (urls.push(url), 'success') },
        events: { publish: async () => {} },
        now: new Date(T0),
        ...(apiDomain ? { apiDomain } : {}),
      });
    await run();
    await run({ externalDomain: 'shoots.gardenless.test' });
    expect(urls).toEqual(['https://52.1.2.3:6443', 'https://api.api1.dev.shoots.gardenless.test:6443']);
  });
});

describe('watchdog rounds over the fleet', () => {
  it('scales the dependents down after three rounds of external down and internal up, in order, once', async () => {
    const { round, commands, events } = harness();
    expect((await round('failure')).verdict).toBe('counting-failures');
    expect((await round('timeout')).verdict).toBe('counting-failures');
    expect((await round('failure')).verdict).toBe('scaled-down');
    expect((await round('failure')).verdict).toBe('held-down');
    expect(commands.sent).toEqual([
      {
        commandId: 'cmd-1',
        actions: [
          { action: 'scale', component: 'kube-controller-manager', replicas: 0 },
          { action: 'scale', component: 'machine-controller-manager', replicas: 0 },
          { action: 'scale', component: 'cluster-autoscaler', replicas: 0 },
        ],
      },
    ]);
    expect(events).toEqual(['DependentsScaledDown']);
  });

  it('restores exactly the remembered replicas in reverse order after two external successes', async () => {
    const { round, commands, events } = harness();
    for (let i = 0; i < 3; i++) await round('failure');
    const zeroed = {
      components: {
        'kube-controller-manager': { replicas: 0 },
        'machine-controller-manager': { replicas: 0 },
        'cluster-autoscaler': { replicas: 0 },
      },
    };
    expect((await round('success', zeroed)).verdict).toBe('recovering');
    expect((await round('success', zeroed)).verdict).toBe('scaled-up');
    expect(commands.sent[1]?.actions).toEqual([
      { action: 'scale', component: 'cluster-autoscaler', replicas: 2 },
      { action: 'scale', component: 'machine-controller-manager', replicas: 1 },
      { action: 'scale', component: 'kube-controller-manager', replicas: 1 },
    ]);
    expect(events).toEqual(['DependentsScaledDown', 'DependentsScaledUp']);
  });

  it.each([
    ['both down', { internalProbe: 'Failure' as const }, undefined, undefined],
    ['internal result stale', { internalProbeTime: new Date(T0 - 3_600_000).toISOString() }, undefined, undefined],
    ['hibernated', {}, { hibernation: { enabled: true } }, undefined],
    [
      'migrating',
      {},
      undefined,
      { type: 'Migrate' as const, state: 'Processing' as const, progress: 40, description: '', lastUpdateTime: '' },
    ],
  ])('takes no action when %s', async (_case, cp, spec, op) => {
    const { round, commands } = harness();
    for (let i = 0; i < 6; i++) await round('failure', cp, shoot(spec ?? {}, op));
    expect(commands.sent).toEqual([]);
  });

  it('does not oscillate on flapping external results', async () => {
    const { round, commands } = harness();
    for (let i = 0; i < 12; i++) await round(i % 2 === 0 ? 'failure' : 'success');
    expect(commands.sent).toEqual([]);
  });

  it('restarts crash-looping dependents once per etcd recovery', async () => {
    const pods: NonNullable<HostedControlPlane['pods']> = [
      {
        name: 'kube-apiserver-0',
        labels: { 'gardener.cloud/role': 'controlplane', role: 'apiserver' },
        state: 'CrashLoopBackOff',
      },
      {
        name: 'kube-apiserver-1',
        labels: { 'gardener.cloud/role': 'controlplane', role: 'apiserver' },
        state: 'Running',
      },
      { name: 'other', labels: { app: 'x' }, state: 'CrashLoopBackOff' },
    ];
    const { round, commands, events } = harness();
    await round('success', { etcdReady: true, pods });
    await round('success', { etcdReady: false, pods });
    await round('success', { etcdReady: true, pods });
    await round('success', { etcdReady: true, pods });
    const restarts = commands.sent.flatMap((c) => c.actions).filter((a) => a.action === 'restart');
    expect(restarts).toEqual([{ action: 'restart', pod: 'kube-apiserver-0', dependency: 'etcd' }]);
    expect(events).toEqual(['DependentsRestarted']);
  });

  it('re-sends commands whose sending failed after the decision was stored', async () => {
    const { round, commands, events } = harness();
    await round('failure');
    await round('failure');
    commands.failNext = true;
    await expect(round('failure')).rejects.toThrow('queue unavailable');
    expect(events).toEqual([]);
    await round('failure');
    await round('failure');
    expect(commands.sent).toHaveLength(1);
    expect(commands.sent[0]?.commandId).toBe('cmd-1');
    expect(events).toEqual(['DependentsScaledDown']);
  });

  it('lets a concurrent round win and does not act twice', async () => {
    const inner = new MemoryWatchdogStateStore();
    let interfere = false;
    const racing: WatchdogStateStore = {
      load: (k) => inner.load(k),
      save: async (k, r, v) => {
        if (interfere) {
          interfere = false;
          await inner.save(k, r, v);
          throw new ConflictError('another round saved first');
        }
        return inner.save(k, r, v);
      },
    };
    const { round, commands } = harness(racing);
    await round('failure');
    await round('failure');
    interfere = true;
    expect((await round('failure')).verdict).toBe('conflict');
    expect(commands.sent).toEqual([]);
  });

  it('acts on nothing from a state read stale (the store reads are eventually consistent): the next round decides', async () => {
    // Prepare: a store that, once, answers with the state before its last save.
    const inner = new MemoryWatchdogStateStore();
    const saved: StoredWatchdogRecord[] = [];
    let stale = false;
    const lagging: WatchdogStateStore = {
      load: async (k) => (stale ? ((stale = false), saved.at(-2)) : inner.load(k)),
      save: async (k, r, v) => {
        const version = await inner.save(k, r, v);
        saved.push({ record: structuredClone(r), version });
        return version;
      },
    };
    const { round, commands } = harness(lagging);
    await round('failure');
    await round('failure');

    // Act: the third failure, read against the state of the first.
    stale = true;
    const third = await round('failure');
    const sentAfterThird = commands.sent.length;
    await round('failure');

    // Assess: the stale round's save lost; the fresh round counts the third failure and scales down once.
    expect(third.verdict).toBe('conflict');
    expect(sentAfterThird).toBe(0);
    expect(commands.sent).toHaveLength(1);
  });

  describe('a seed whose agent went silent (frozen, partitioned)', () => {
    it('sends no scale command: an "up" from before the outage does not count, and once the lease expired the seed is skipped unprobed', async () => {
      // Prepare: the agent's last heartbeat (with internal "up") comes just before the external probe starts failing.
      const { round, commands, events, probes, now } = harness();
      const frozenAt = now() + 9_000;

      // Act: a minute of rounds with the load balancer path failing (the frozen agent serves nothing).
      const results = [];
      for (let i = 0; i < 6; i++) results.push(await round('timeout', {}, shoot(), frozenAt));

      // Assess: the streak reached three rounds within the lease but the "up" predates it; then the lease (30 s) expired.
      expect(results.map((r) => r.verdict)).toEqual([
        'counting-failures',
        'counting-failures',
        'internal-predates-outage',
        'seed-lease-expired',
        'seed-lease-expired',
        'seed-lease-expired',
      ]);
      expect(results[3]!.reason).toMatch(/seed seed-a's lease expired .* nothing is scaled/);
      expect(probes.count).toBe(3);
      expect(commands.sent).toEqual([]);
      expect(events).toEqual([]);
    });

    it('needs a whole new streak after the agent is heard from again', async () => {
      const { round, commands, now } = harness();
      const frozenAt = now() + 9_000;
      for (let i = 0; i < 5; i++) await round('timeout', {}, shoot(), frozenAt);
      // The agent is back (fresh heartbeats) and the external path still fails: three new rounds, not one.
      expect((await round('timeout')).verdict).toBe('counting-failures');
      expect((await round('timeout')).verdict).toBe('counting-failures');
      expect(commands.sent).toEqual([]);
      expect((await round('timeout')).verdict).toBe('scaled-down');
    });

    it("does not take an agent clock ahead of the garden's for a fresh internal result: the heartbeat bounds it", async () => {
      const { round, commands, now } = harness();
      const frozenAt = now() + 9_000;
      const ahead = { internalProbeTime: new Date(T0 + 3_600_000).toISOString() };
      const verdicts = [];
      for (let i = 0; i < 3; i++) verdicts.push((await round('failure', ahead, shoot(), frozenAt)).verdict);
      expect(verdicts).toEqual(['counting-failures', 'counting-failures', 'internal-predates-outage']);
      expect(commands.sent).toEqual([]);
    });
  });
});
