import { beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../../harness/fixtures/index.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';

const garden = testGarden();
const { api } = garden;

describe('optimistic concurrency and atomic placement', () => {
  beforeAll(() => resetGardenState(garden));

  it('lets exactly one of 20 concurrent updates carrying the same resourceVersion win', async () => {
    // Prepare
    const body = fixture('shoot-dev-api1');
    body.metadata.name = 'contended';
    const created = await api.request<{ metadata: { resourceVersion: string } }>(
      'PUT',
      '/projects/dev/shoots/contended',
      { body },
    );
    expect(created.status).toBe(201);
    const version = created.body.metadata.resourceVersion;

    // Act
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.request('PATCH', '/projects/dev/shoots/contended', {
          body: { metadata: { resourceVersion: version, labels: { writer: `w${i}` } } },
        }),
      ),
    );

    // Assess
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const winner = results.find((r) => r.status === 200)!.body as {
      metadata: { labels: Record<string, string>; resourceVersion: string };
    };
    const stored = await api.request<{ metadata: { labels: Record<string, string>; resourceVersion: string } }>(
      'GET',
      '/projects/dev/shoots/contended',
    );
    expect(stored.body.metadata.labels).toEqual(winner.metadata.labels);
    expect(stored.body.metadata.resourceVersion).toBe(String(Number(version) + 1));
  });

  it('never places more shoots on a seed than its capacity, under concurrency', async () => {
    // Prepare
    const seed = fixture('seed-aws-eu1');
    seed.metadata.name = 'small';
    seed.spec.capacity = { shoots: 10 };
    expect((await api.request('PUT', '/seeds/small', { body: seed })).status).toBe(201);

    // Act
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const shoot = fixture('shoot-dev-api1');
        shoot.metadata = { name: `crowd-${i}` };
        shoot.spec.seedName = 'small';
        return api.request('PUT', `/projects/crowd/shoots/crowd-${i}`, { body: shoot });
      }),
    );

    // Assess
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 422)).toHaveLength(20);
    expect(results.filter((r) => r.status === 422).every((r) => (r.body as { code: string }).code === 'SeedFull')).toBe(
      true,
    );
    const stored = await api.request<{ status: { shoots: number } }>('GET', '/seeds/small');
    expect(stored.body.status.shoots).toBe(10);
    const listed = await api.request<{ items: unknown[] }>('GET', '/projects/crowd/shoots', {
      query: { limit: '100' },
    });
    expect(listed.body.items).toHaveLength(10);
  });
});
