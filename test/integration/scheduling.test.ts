import { beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../../harness/fixtures/index.js';
import { created, putResending, resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { until } from '../../harness/until.js';

const garden = testGarden();
const { api } = garden;

interface SeedView {
  metadata: { name: string };
  status: { shoots: number; labels: Record<string, string> };
}
interface ShootView {
  metadata: { name: string };
  spec: { seedName?: string };
  status: {
    seedName?: string;
    lastOperation: { state: string; description: string };
    conditions: { type: string; status: string }[];
    scheduling?: { rejected: { seed: string; filter: string; reason: string }[] };
  };
}

/** A ready seed in eu-west-1: single-zonal unless `zones` >= 3 backs a multi-zonal pool. */
async function registerSeed(
  name: string,
  options: { zones: number; capacity?: number; pods: string; services: string },
) {
  const seed = fixture('seed-aws-eu1');
  const zones = ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'].slice(0, options.zones);
  seed.metadata = { name };
  seed.spec.provider.zones = zones;
  seed.spec.networks = {
    nodes: `10.${options.pods.split('.')[1]}.0.0/16`,
    pods: options.pods,
    services: options.services,
  };
  seed.spec.workerPools = [{ name: 'cp', zones, minimum: 3 }];
  delete seed.spec.taints;
  if (options.capacity === undefined) delete seed.spec.capacity;
  else seed.spec.capacity = { shoots: options.capacity };
  expect((await api.request('PUT', `/seeds/${name}`, { body: seed })).status).toBe(201);
  // One heartbeat stands in for an agent that keeps heartbeating: its lease holds for the whole suite.
  const hb = await api.request('POST', `/seeds/${name}/heartbeat`, {
    body: {
      conditions: [
        { type: 'GardenletReady', status: 'True' },
        { type: 'BackupBucketsReady', status: 'True' },
      ],
      leaseDurationSeconds: 3_600,
    },
  });
  expect(hb.status).toBe(200);
}

function shoot(name: string, tolerance?: 'node' | 'zone') {
  const s = fixture('shoot-dev-api1');
  s.metadata = { name };
  delete s.spec.tolerations;
  if (tolerance) s.spec.controlPlane = { highAvailability: { failureTolerance: { type: tolerance } } };
  else delete s.spec.controlPlane;
  return s;
}

describe('HA-aware scheduling on the deployed stack', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    await registerSeed('single-a', { zones: 1, capacity: 10, pods: '10.11.0.0/16', services: '10.12.0.0/16' });
    await registerSeed('multi-b', { zones: 3, capacity: 100, pods: '10.21.0.0/16', services: '10.22.0.0/16' });
    await registerSeed('multi-c', { zones: 3, capacity: 100, pods: '10.31.0.0/16', services: '10.32.0.0/16' });
  });

  it('derives the multi-zonal label from worker pools and rejects a manual label the pools do not back', async () => {
    const multi = await api.request<SeedView>('GET', '/seeds/multi-b');
    expect(multi.body.status.labels['seed.gardener.cloud/multi-zonal']).toBe('true');
    const single = await api.request<SeedView>('GET', '/seeds/single-a');
    expect(single.body.status.labels['seed.gardener.cloud/multi-zonal']).toBeUndefined();

    const liar = fixture('seed-aws-eu1');
    liar.metadata = { name: 'liar', labels: { 'seed.gardener.cloud/multi-zonal': 'true' } };
    liar.spec.provider.zones = ['eu-west-1a'];
    liar.spec.workerPools = [{ name: 'cp', zones: ['eu-west-1a'], minimum: 3 }];
    const rejected = await api.request('PUT', '/seeds/liar', { body: liar });
    expect(rejected.status).toBe(422);
    expect(rejected.body).toMatchObject({ code: 'MultiZonalLabelNotBacked' });
    expect((await api.request('GET', '/seeds/liar')).status).toBe(404);
  });

  it('explains a dry run: ranked candidates and every rejected seed with its reason', async () => {
    const zone = await api.request<{
      seedName: string;
      candidates: { name: string }[];
      rejected: { seed: string; filter: string }[];
    }>('POST', '/scheduling/dry-run', { body: { shoot: shoot('dry', 'zone') } });
    expect(zone.status).toBe(200);
    expect(zone.body.candidates.map((c) => c.name)).toEqual(['multi-b', 'multi-c']);
    expect(zone.body.rejected).toEqual([expect.objectContaining({ seed: 'single-a', filter: 'multiZonal' })]);

    const plain = await api.request<{ seedName: string }>('POST', '/scheduling/dry-run', {
      body: { shoot: shoot('dry') },
    });
    expect(plain.body.seedName).toBe('single-a');
    expect(
      (await api.request('POST', '/scheduling/dry-run', { body: { shoot: { spec: { region: 1 } } } })).status,
    ).toBe(400);
  });

  it('places 50 concurrent creations without exceeding any capacity; the preferred seed takes exactly 10', async () => {
    // Prepare: start the API's execution environments first, so that 50 cold starts on two cores do not
    // turn into gateway timeouts; the placements below still run 50 at once.
    // Signed reads run the whole pipeline (SDK clients included); workers that fail to start are resent.
    await Promise.all(Array.from({ length: 50 }, () => garden.setup.request('GET', '/seeds').catch(() => undefined)));

    // Act: 50 at once; a gateway 502 of a loaded emulator is resent as a client does (PUT is idempotent).
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        putResending<ShootView>(api, `/projects/fleet/shoots/s-${i}`, shoot(`s-${i}`)),
      ),
    );

    // Assess
    console.log(`50 concurrent creations: ${results.filter((r) => r.resent).length} resent after a gateway 502`);
    expect(results.filter((r) => !created(r)).map((r) => r.status)).toEqual([]);
    const placements = results.map((r) => r.body.status.seedName);
    const count = (seed: string) => placements.filter((p) => p === seed).length;
    expect(count('single-a')).toBe(10);
    expect(count('multi-b') + count('multi-c')).toBe(40);
    for (const seed of ['single-a', 'multi-b', 'multi-c']) {
      const stored = await api.request<SeedView>('GET', `/seeds/${seed}`);
      expect(stored.body.status.shoots).toBe(count(seed));
    }
    expect(results.every((r) => r.body.spec.seedName === r.body.status.seedName)).toBe(true);
  }, 300_000);

  it('stores an unschedulable shoot with every rejection reason', async () => {
    const lost = shoot('lost');
    lost.spec.region = 'ap-south-1';
    const res = await putResending<ShootView>(api, '/projects/dev/shoots/lost', lost);
    expect(created(res), `status ${res.status}`).toBe(true);
    expect(res.body.status.seedName).toBeUndefined();
    expect(res.body.status.lastOperation.state).toBe('Pending');
    expect(res.body.status.conditions).toContainEqual(expect.objectContaining({ type: 'Scheduled', status: 'False' }));
    const seeds = res.body.status.scheduling?.rejected.map((r) => r.seed).sort();
    expect(seeds).toEqual(['multi-b', 'multi-c', 'single-a']);
    expect(res.body.status.scheduling?.rejected.every((r) => r.filter === 'region' && r.reason.length > 0)).toBe(true);
  });

  it('admits HA changes: zone needs a multi-zonal seed, and HA never downgrades', async () => {
    const onSingle = shoot('pinned', 'node');
    onSingle.spec.seedName = 'single-a';
    const full = await api.request('PUT', '/projects/dev/shoots/pinned', { body: onSingle });
    expect(full.status).toBe(422); // single-a is full after the 50 creations
    expect(full.body).toMatchObject({ code: 'SeedFull' });

    const created = await api.request<ShootView>('PUT', '/projects/dev/shoots/ha', { body: shoot('ha', 'zone') });
    expect(created.status).toBe(201);
    const downgrade = await api.request('PATCH', '/projects/dev/shoots/ha', {
      body: { spec: { controlPlane: { highAvailability: { failureTolerance: { type: 'node' } } } } },
    });
    expect(downgrade.status).toBe(422);
    expect(downgrade.body).toMatchObject({ code: 'HighAvailabilityDowngrade' });

    const single = (await api.request<ShootView[]>('GET', '/projects/fleet/shoots/s-0')).body as unknown as ShootView;
    const onSingleSeed = single.status.seedName === 'single-a' ? 's-0' : undefined;
    if (onSingleSeed) {
      const zone = await api.request('PATCH', `/projects/fleet/shoots/${onSingleSeed}`, {
        body: { spec: { controlPlane: { highAvailability: { failureTolerance: { type: 'zone' } } } } },
      });
      expect(zone.status).toBe(422);
      expect(zone.body).toMatchObject({ code: 'ZoneToleranceNeedsMultiZonalSeed' });
    }
  });

  it('serves the control-plane layout as Kubernetes objects', async () => {
    const res = await api.request<{
      failureTolerance: string;
      zones: string[];
      items: { kind: string; metadata: { name: string }; spec: Record<string, unknown> }[];
    }>('GET', '/projects/dev/shoots/ha/controlplane');
    expect(res.status).toBe(200);
    expect(res.body.failureTolerance).toBe('zone');
    expect(res.body.zones).toHaveLength(3);
    const etcd = res.body.items.find((o) => o.kind !== 'PodDisruptionBudget' && o.metadata.name.startsWith('etcd'));
    expect(etcd?.spec.replicas).toBe(3);
    expect(res.body.items.filter((o) => o.kind === 'PodDisruptionBudget')).toHaveLength(7);
    expect((await api.request('GET', '/projects/dev/shoots/lost/controlplane')).status).toBe(409);
  });

  it('chooses a migration destination through the scheduler, never the source (a dry run: nothing starts)', async () => {
    const ha = await api.request<ShootView>('GET', '/projects/dev/shoots/ha');
    const source = ha.body.status.seedName!;
    // The admission refuses 409 ShootCreating until the lifecycle controller has sent the shoot's Create
    // to its seed (asynchronously, after the PUT answered).
    const choice = await until(
      "the shoot's Create sent",
      async () => {
        const res = await api.request<{ destinationSeed: string; dryRun: boolean; code?: string }>(
          'POST',
          '/projects/dev/shoots/ha/migrate?dryRun=All',
          { body: {} },
        );
        return !(res.status === 409 && res.body.code === 'ShootCreating') && res;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(choice.status, JSON.stringify(choice.body)).toBe(200);
    expect(choice.body.destinationSeed).toMatch(/^multi-[bc]$/);
    expect(choice.body.destinationSeed).not.toBe(source);
    expect((await api.request('GET', '/projects/dev/shoots/ha/migration')).status).toBe(404);

    // The other multi-zonal seed tainted: no seed can host the zone shoot but its own.
    const other = source === 'multi-b' ? 'multi-c' : 'multi-b';
    const seed = await api.request<{ metadata: Record<string, unknown>; spec: Record<string, unknown> }>(
      'GET',
      `/seeds/${other}`,
    );
    const taint = (taints: { key: string }[]) =>
      api.request('PUT', `/seeds/${other}`, {
        body: { metadata: { name: other, labels: seed.body.metadata.labels }, spec: { ...seed.body.spec, taints } },
      });
    expect((await taint([{ key: 'gardenless.io/test-untolerated' }])).status).toBe(200);
    try {
      const none = await api.request<{ code: string }>('POST', '/projects/dev/shoots/ha/migrate?dryRun=All', {
        body: {},
      });
      expect(none.status).toBe(422);
      expect(none.body.code).toBe('NoDestinationSeed');
    } finally {
      expect((await taint([])).status).toBe(200);
    }
    const bad = await api.request('POST', '/projects/Dev!/shoots/ha/migrate?dryRun=All', { body: {} });
    expect(bad.status).toBe(400);
  });
});
