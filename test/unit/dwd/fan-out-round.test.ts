import { describe, expect, it } from 'vitest';
import {
  runFannedOutRound,
  runPartitionRound,
  type PartitionRequest,
  type PartitionRunner,
} from '../../../core/dwd/fan-out-round.js';
import type { ExternalProbeResult } from '../../../core/dwd/probe-round.js';
import { runWatchdogRound, type WatchdogCommandSender } from '../../../core/dwd/watchdog-round.js';
import { MemoryWatchdogStateStore } from '../../../core/dwd/watchdog-store.js';
import { listAllShoots } from '../../../core/garden/listing.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import { listAllSeeds } from '../../../core/garden/placement.js';
import type { Seed } from '../../../core/model/seed.js';
import type { Shoot } from '../../../core/model/shoot.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

/** Seeds `seed-0..n-1`, each hosting `perSeed` shoots, heartbeating with fresh internal probes at `now`. */
async function fleet(options: { seeds: number; perSeed: number; now: number }) {
  const clock = { at: options.now };
  const repo = new MemoryGardenRepository({ clock: { now: () => new Date(clock.at) } });
  const beats: ((now: number) => Promise<void>)[] = [];
  for (let s = 0; s < options.seeds; s++) {
    const name = `seed-${s}`;
    const seed: Seed = {
      apiVersion: 'core.gardenless.io/v1',
      kind: 'Seed',
      metadata: { name, resourceVersion: '0', uid: name, creationTimestamp: new Date(T0).toISOString() },
      spec: {
        provider: { type: 'aws', region: 'eu-west-1', zones: ['a'] },
        networks: { pods: '10.1.0.0/16', services: '10.2.0.0/16' },
      },
      status: { identity: `${name}-id`, conditions: [], shoots: 0, labels: {} },
    };
    await repo.createSeed(seed);
    const planes: string[] = [];
    for (let k = 0; k < options.perSeed; k++) {
      const shootName = `s${s}-${k}`;
      const shoot: Shoot = {
        apiVersion: 'core.gardenless.io/v1',
        kind: 'Shoot',
        metadata: {
          project: 'p',
          name: shootName,
          resourceVersion: '0',
          uid: shootName,
          creationTimestamp: new Date(T0).toISOString(),
        },
        spec: { provider: { type: 'aws' }, region: 'eu-west-1', seedName: name },
        status: { technicalID: `shoot--p--${shootName}`, seedName: name, conditions: [], constraints: [] },
      };
      await repo.createShoot(shoot);
      planes.push(shootName);
    }
    const beat = (now: number) =>
      repo.renewLease({
        seed: name,
        holderIdentity: `${name}-id`,
        renewTime: new Date(now).toISOString(),
        leaseDurationSeconds: 30,
        conditions: [],
        controlPlanes: planes.map((shootName) => ({
          technicalID: `shoot--p--${shootName}`,
          active: true,
          externalUrl: `http://lb/${shootName}`,
          internalProbe: 'Success' as const,
          internalProbeTime: new Date(now).toISOString(),
          etcdReady: true,
          components: { 'kube-controller-manager': { replicas: 1 }, 'machine-controller-manager': { replicas: 1 } },
        })),
      });
    await beat(options.now);
    beats.push(beat);
  }
  const heartbeat = async (now: number) => {
    clock.at = now;
    for (const beat of beats) await beat(now);
  };
  return Object.assign(repo, { heartbeat });
}

class Recorder implements WatchdogCommandSender {
  readonly sent: string[] = [];
  async send(options: Parameters<WatchdogCommandSender['send']>[0]): Promise<void> {
    this.sent.push(
      `${options.seedName} ${options.shoot.metadata.name} ${options.actions.map((a) => a.action).join(',')}`,
    );
  }
}

/** Every third shoot's load balancer is down: those count toward a scale-down, the rest are fine. */
const prober = {
  probe: async (url: string): Promise<ExternalProbeResult> =>
    Number(url.split('-').at(-1)) % 3 === 0 ? 'failure' : 'success',
};

describe('a watchdog round fanned out over partitions of whole seeds', () => {
  it('decides, stores and sends exactly what one round over the whole fleet does', async () => {
    // Prepare: two identical fleets, one watched by a single round, one by the fan-out.
    const single = {
      repo: await fleet({ seeds: 7, perSeed: 6, now: T0 }),
      store: new MemoryWatchdogStateStore(),
      commands: new Recorder(),
    };
    const fanned = {
      repo: await fleet({ seeds: 7, perSeed: 6, now: T0 }),
      store: new MemoryWatchdogStateStore(),
      commands: new Recorder(),
    };
    const partitions: PartitionRequest[] = [];
    const runner = (now: number): PartitionRunner => ({
      run: (request) => {
        partitions.push(request);
        return runPartitionRound({
          repo: fanned.repo,
          request,
          store: fanned.store,
          prober,
          commands: fanned.commands,
          events: { publish: async () => {} },
          now: new Date(now),
          newId: () => 'id',
        });
      },
    });

    // Act: four rounds ten seconds apart (the failure threshold is three).
    for (let r = 1; r <= 4; r++) {
      const now = T0 + r * 10_000;
      await single.repo.heartbeat(now - 1_000);
      await fanned.repo.heartbeat(now - 1_000);
      await runWatchdogRound({
        shoots: await listAllShoots(single.repo),
        seeds: await listAllSeeds(single.repo),
        store: single.store,
        prober,
        commands: single.commands,
        events: { publish: async () => {} },
        now: new Date(now),
        newId: () => 'id',
      });
      await runFannedOutRound({
        repo: fanned.repo,
        runner: runner(now),
        dueAtMs: now,
        intervalSeconds: 10,
        partitioning: { shootsPerPartition: 10, maxPartitions: 100 },
      });
    }

    // Assess: several partitions a round, whole seeds, and the same commands and stored states.
    expect(new Set(partitions.filter((p) => p.dueAtMs === T0 + 10_000).map((p) => p.seeds.join()))).toHaveProperty(
      'size',
      5,
    );
    expect(fanned.commands.sent.sort()).toEqual(single.commands.sent.sort());
    expect(fanned.commands.sent.length).toBeGreaterThan(0);
    const keys = (await listAllShoots(single.repo)).map((s) => `p/${s.metadata.name}`);
    expect(await fanned.store.loadMany(keys)).toEqual(await single.store.loadMany(keys));
  });

  it('skips a partition that starts after its round slot, and reports a failed partition without failing the others', async () => {
    // Prepare
    const repo = await fleet({ seeds: 3, perSeed: 4, now: T0 });
    const store = new MemoryWatchdogStateStore();
    const late = await runPartitionRound({
      repo,
      request: { seeds: ['seed-0'], dueAtMs: T0, intervalSeconds: 10 },
      store,
      prober,
      commands: new Recorder(),
      events: { publish: async () => {} },
      now: new Date(T0 + 10_000),
    });
    const runner: PartitionRunner = {
      run: async (request) => {
        if (request.seeds.includes('seed-1')) throw new Error('throttled');
        return runPartitionRound({
          repo,
          request,
          store,
          prober,
          commands: new Recorder(),
          events: { publish: async () => {} },
          now: new Date(T0),
        });
      },
    };

    // Act
    const round = await runFannedOutRound({
      repo,
      runner,
      dueAtMs: T0,
      intervalSeconds: 10,
      partitioning: { shootsPerPartition: 4, maxPartitions: 10 },
    });

    // Assess
    expect(late).toMatchObject({ missed: true, probes: 0 });
    expect(await store.load('p/s0-0')).toBeDefined();
    expect(round.failed).toEqual([{ seeds: ['seed-1'], error: 'throttled' }]);
    expect(round.outcomes.map((o) => o.shoots)).toEqual([4, 4]);
    expect(await store.load('p/s1-0')).toBeUndefined();
  });
});
