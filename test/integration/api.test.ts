import { beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../../harness/fixtures/index.js';
import { resetGardenState, scanTable } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';

const garden = testGarden();
const { api } = garden;

interface Resource {
  metadata: { name: string; resourceVersion: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
  status: Record<string, unknown> & { shoots?: number; identity?: string; seedName?: string };
}

function seed(name: string, capacity?: number) {
  const s = fixture('seed-aws-eu1');
  s.metadata.name = name;
  if (capacity === undefined) delete s.spec.capacity;
  else s.spec.capacity = { shoots: capacity };
  return s;
}

function shoot(name: string, seedName?: string) {
  const s = fixture('shoot-dev-api1');
  s.metadata.name = name;
  if (seedName) s.spec.seedName = seedName;
  return s;
}

describe('garden API on the deployed stack', () => {
  beforeAll(() => resetGardenState(garden));

  it('serves health without a signature and refuses unsigned calls elsewhere (IAM authorization)', async () => {
    const health = await garden.unsigned.request('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok' });

    const unsigned = await garden.unsigned.request('GET', '/seeds');
    expect(unsigned.status).toBe(403);
  });

  it('registers, reads, updates and lists seeds with resourceVersion checks', async () => {
    const created = await api.request<Resource>('PUT', '/seeds/aws-eu1', { body: seed('aws-eu1') });
    expect(created.status).toBe(201);
    expect(created.body.metadata.resourceVersion).toBe('1');
    expect(created.body.status.identity).toMatch(/^aws-eu1-[0-9a-f-]{36}$/);

    const update = seed('aws-eu1');
    update.metadata.labels = { env: 'staging' };
    update.metadata.resourceVersion = '1';
    const updated = await api.request<Resource>('PUT', '/seeds/aws-eu1', { body: update });
    expect(updated.status).toBe(200);
    expect(updated.body.metadata).toMatchObject({ resourceVersion: '2', labels: { env: 'staging' } });
    expect(updated.body.status.identity).toBe(created.body.status.identity);

    const stale = await api.request('PUT', '/seeds/aws-eu1', { body: update });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: 'Conflict', field: 'metadata.resourceVersion' });

    const read = await api.request<Resource>('GET', '/seeds/aws-eu1');
    expect(read.body.metadata.labels).toEqual({ env: 'staging' });
    expect((await api.request('GET', '/seeds/nope')).status).toBe(404);
  });

  it('pages through lists with continue tokens and rejects forged tokens', async () => {
    for (const n of ['page-a', 'page-b', 'page-c'])
      expect((await api.request('PUT', `/seeds/${n}`, { body: seed(n) })).status).toBe(201);
    const names: string[] = [];
    let token: string | undefined;
    do {
      const res = await api.request<{ items: Resource[]; metadata: { continue?: string } }>('GET', '/seeds', {
        query: { limit: '2', ...(token ? { continue: token } : {}) },
      });
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      names.push(...res.body.items.map((i) => i.metadata.name));
      token = res.body.metadata.continue;
    } while (token);
    expect(names).toEqual(expect.arrayContaining(['aws-eu1', 'page-a', 'page-b', 'page-c']));
    expect(new Set(names).size).toBe(names.length);

    const forged = await api.request('GET', '/seeds', { query: { continue: 'bm90LWEtdG9rZW4' } });
    expect(forged.status).toBe(400);
    expect(forged.body).toMatchObject({ field: 'continue' });
    expect((await api.request('GET', '/seeds', { query: { limit: '0' } })).status).toBe(400);
  });

  it('records heartbeats with conditions and refuses a foreign identity', async () => {
    const hb = await api.request<{ lastHeartbeatTime: string; identity: string }>('POST', '/seeds/aws-eu1/heartbeat', {
      body: {
        conditions: [
          { type: 'GardenletReady', status: 'True' },
          { type: 'BackupBucketsReady', status: 'True' },
        ],
      },
    });
    expect(hb.status).toBe(200);
    const seedNow = await api.request<Resource>('GET', '/seeds/aws-eu1');
    expect(seedNow.body.status.lastHeartbeatTime).toBe(hb.body.lastHeartbeatTime);
    expect(seedNow.body.status.conditions).toEqual([
      expect.objectContaining({ type: 'BackupBucketsReady', status: 'True' }),
      expect.objectContaining({ type: 'GardenletReady', status: 'True' }),
    ]);

    const foreign = await api.request('POST', '/seeds/aws-eu1/heartbeat', {
      body: { identity: 'aws-eu1-someone-else', conditions: [] },
    });
    expect(foreign.status).toBe(409);
    expect(foreign.body).toMatchObject({ code: 'IdentityMismatch' });
  });

  it("records a busy seed's report of 1,000 control planes, then a shorter one, whole", async () => {
    // Prepare: planes as an agent reports them (pods and all, about 2.5 KB each): 2.5 MB, ten report chunks.
    const plane = (i: number) => ({
      technicalID: `shoot--dev--busy${i}`,
      shoot: { project: 'dev', name: `busy${i}` },
      active: true,
      etcdReady: true,
      components: { etcd: { replicas: 1 }, 'kube-apiserver': { replicas: 1 } },
      pods: [
        'etcd-main',
        'kube-apiserver',
        'kube-controller-manager',
        'kube-scheduler',
        'gardener-resource-manager',
      ].map((app, k) => ({
        name: `${app}-${k}`,
        uid: `shoot--dev--busy${i}-${k}`,
        labels: { 'gardener.cloud/role': 'controlplane', app, 'gardener.cloud/shoot': `shoot--dev--busy${i}` },
        state: 'Running',
      })),
    });
    const beat = (count: number) =>
      api.request('POST', '/seeds/aws-eu1/heartbeat', {
        body: { conditions: [], controlPlanes: Array.from({ length: count }, (_, i) => plane(i)) },
      });
    const hosted = async () =>
      (await api.request<Resource>('GET', '/seeds/aws-eu1')).body.status.controlPlanes as { technicalID: string }[];

    // Act and assess
    expect((await beat(1_000)).status).toBe(200);
    const all = await hosted();
    expect((await beat(150)).status).toBe(200);
    const fewer = await hosted();
    expect((await beat(0)).status).toBe(200);

    expect(all.map((p) => p.technicalID)).toEqual(Array.from({ length: 1_000 }, (_, i) => plane(i).technicalID));
    expect(all[999]).toEqual(plane(999));
    expect(fewer).toHaveLength(150);
    expect(await hosted()).toEqual([]);
  });

  it('stores a shoot no seed can host unscheduled, and one with seedName counted on its seed', async () => {
    const nowhere = shoot('lonely');
    nowhere.spec.region = 'ap-south-1';
    const unscheduled = await api.request<Resource>('PUT', '/projects/dev/shoots/lonely', { body: nowhere });
    expect(unscheduled.status).toBe(201);
    expect(unscheduled.body.status).toMatchObject({
      technicalID: 'shoot--dev--lonely',
      lastOperation: { type: 'Create', state: 'Pending' },
    });
    expect(unscheduled.body.status.seedName).toBeUndefined();

    const placed = await api.request<Resource>('PUT', '/projects/dev/shoots/api1', { body: shoot('api1', 'aws-eu1') });
    expect(placed.status).toBe(201);
    expect(placed.body.status.seedName).toBe('aws-eu1');
    expect((await api.request<Resource>('GET', '/seeds/aws-eu1')).body.status.shoots).toBe(1);

    const blocked = await api.request('DELETE', '/seeds/aws-eu1');
    expect(blocked.status).toBe(409);
    expect(blocked.body).toMatchObject({ code: 'SeedHostsShoots' });

    const missingSeed = await api.request('PUT', '/projects/dev/shoots/nowhere', {
      body: shoot('nowhere', 'no-such-seed'),
    });
    expect(missingSeed.status).toBe(422);
    expect(missingSeed.body).toMatchObject({ code: 'SeedNotFound', field: 'spec.seedName' });
    expect((await api.request('GET', '/projects/dev/shoots/nowhere')).status).toBe(404);
  });

  it('applies admission rules and merge patches to shoots', async () => {
    const moved = shoot('api1', 'page-a');
    const immutable = await api.request('PUT', '/projects/dev/shoots/api1', { body: moved });
    expect(immutable.status).toBe(422);
    expect(immutable.body).toMatchObject({ code: 'FieldImmutable', field: 'spec.seedName' });

    const patched = await api.request<Resource>('PATCH', '/projects/dev/shoots/api1', {
      body: { metadata: { labels: { team: 'blue' } }, spec: { hibernation: { enabled: true } } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.spec).toMatchObject({ hibernation: { enabled: true }, seedName: 'aws-eu1' });
    expect(patched.body.metadata.labels).toEqual({ team: 'blue' });

    const stalePatch = await api.request('PATCH', '/projects/dev/shoots/api1', {
      body: { metadata: { resourceVersion: '1' }, spec: { purpose: 'testing' } },
    });
    expect(stalePatch.status).toBe(409);

    const list = await api.request<{ items: Resource[] }>('GET', '/projects/dev/shoots');
    expect(list.body.items.map((i) => i.metadata.name).sort()).toEqual(['api1', 'lonely']);
  });

  it('deletes a shoot only when confirmed, and only once its seed removed the control plane; then the seed', async () => {
    const unconfirmed = await api.request<{ code: string }>('DELETE', '/projects/dev/shoots/api1');
    expect(unconfirmed.status).toBe(422);
    expect(unconfirmed.body.code).toBe('DeletionNotConfirmed');
    const confirm = { metadata: { annotations: { 'confirmation.gardener.cloud/deletion': 'true' } } };
    expect(
      (
        await api.request('PATCH', '/projects/dev/shoots/api1', {
          body: confirm,
          headers: { 'content-type': 'application/merge-patch+json' },
        })
      ).status,
    ).toBe(200);
    const requested = await api.request<Resource & { metadata: { deletionTimestamp?: string } }>(
      'DELETE',
      '/projects/dev/shoots/api1',
    );
    expect(requested.status).toBe(202);
    expect(requested.body.metadata.deletionTimestamp).toEqual(expect.any(String));
    // No agent runs seed aws-eu1 here: the shoot stays (and keeps its place) until one confirms the removal.
    expect((await api.request<Resource>('GET', '/seeds/aws-eu1')).body.status.shoots).toBe(1);
    expect((await api.request('DELETE', '/seeds/aws-eu1')).status).toBe(409);
    await garden.repository.deleteShoot('dev', 'api1');
    expect((await api.request<Resource>('GET', '/seeds/aws-eu1')).body.status.shoots).toBe(0);
    expect((await api.request('DELETE', '/seeds/aws-eu1')).status).toBe(200);
    expect((await api.request('GET', '/seeds/aws-eu1')).status).toBe(404);
    const keys = (await scanTable(garden)).map((i) => i.pk);
    expect(keys).not.toContain('SEED#aws-eu1');
    expect(keys).not.toContain('SHOOT#dev#api1');
  });

  it('serves the OpenAPI document generated from the validating schemas', async () => {
    const doc = await api.request<{ openapi: string; paths: Record<string, unknown> }>('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(['/seeds/{name}', '/projects/{project}/shoots/{name}']),
    );
  });
});
