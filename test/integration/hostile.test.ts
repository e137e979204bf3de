import { beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../../harness/fixtures/index.js';
import { resetGardenState, scanTable } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';

const garden = testGarden();
const { api } = garden;

interface Resource {
  metadata: { name: string; resourceVersion: string; uid: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
}

function shoot(name: string) {
  const s = fixture('shoot-dev-api1');
  s.metadata = { name };
  delete s.spec.seedName;
  return s;
}

/** The hostile inputs, against DynamoDB and the gateway as deployed: each a 4xx, nothing written. */
describe('hostile input on the deployed stack', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    for (const n of ['h1', 'h2', 'h3'])
      expect((await garden.setup.request('PUT', `/projects/hostile/shoots/${n}`, { body: shoot(n) })).status).toBe(201);
    for (const n of ['o1', 'o2'])
      expect((await garden.setup.request('PUT', `/projects/other/shoots/${n}`, { body: shoot(n) })).status).toBe(201);
  });

  it.each<[string, string, string, string, number, string]>([
    [
      'a merge patch nested 8,000 levels',
      'PATCH',
      '/projects/hostile/shoots/h1',
      `{"metadata":{"annotations":${'{"a":'.repeat(8_000)}{}${'}'.repeat(8_000)}}}`,
      400,
      'TooDeep',
    ],
    [
      'a lone surrogate in an annotation',
      'PATCH',
      '/projects/hostile/shoots/h1',
      '{"metadata":{"annotations":{"example.com/x":"\\ud800"}}}',
      400,
      'InvalidUnicode',
    ],
    [
      'a lone surrogate in a label value',
      'PUT',
      '/projects/hostile/shoots/h2',
      '{"metadata":{"labels":{"a":"\\udc00"}},"spec":{"provider":{"type":"aws"},"region":"eu-west-1"}}',
      400,
      'InvalidUnicode',
    ],
  ])('refuses %s', async (_name, method, path, body, status, code) => {
    const before = await scanTable(garden);
    const res = await api.request(method, path, {
      body,
      headers: { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' },
    });
    expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { code } });
    expect(await scanTable(garden)).toEqual(before);
  });

  it("refuses another project's continue token with 400 (DynamoDB never sees it)", async () => {
    const first = await api.request<{ metadata: { continue?: string } }>('GET', '/projects/other/shoots', {
      query: { limit: '1' },
    });
    expect(first.body.metadata.continue).toEqual(expect.any(String));
    const res = await api.request('GET', '/projects/hostile/shoots', {
      query: { continue: first.body.metadata.continue! },
    });
    expect(res).toMatchObject({ status: 400, body: { field: 'continue' } });
  });

  it('accepts a shoot PUT back exactly as read, and a no-op patch, without a new resourceVersion', async () => {
    const read = await api.request<Resource>('GET', '/projects/hostile/shoots/h3');
    const put = await api.request<Resource>('PUT', '/projects/hostile/shoots/h3', { body: read.body });
    expect(put.status).toBe(200);
    expect(put.body).toEqual(read.body);
    const patched = await api.request<Resource>('PATCH', '/projects/hostile/shoots/h3', {
      body: { spec: { region: read.body.spec.region } },
    });
    expect(patched.body.metadata.resourceVersion).toBe(read.body.metadata.resourceVersion);
    const otherUid = await api.request('PUT', '/projects/hostile/shoots/h3', {
      body: { ...read.body, metadata: { ...read.body.metadata, uid: 'another' } },
    });
    expect(otherUid).toMatchObject({ status: 409, body: { code: 'UidMismatch' } });
  });

  it('answers 50 concurrent PUTs of one shoot without resourceVersion with 200, never 409 (one writes, the others find nothing to change)', async () => {
    // Prepare: start the API's workers first (not what is tested).
    await Promise.all(Array.from({ length: 25 }, () => garden.setup.request('GET', '/healthz')));
    const base = await api.request<Resource>('GET', '/projects/hostile/shoots/h1');
    const body = shoot('h1');
    body.metadata.labels = { release: 'r2' };
    // Act
    const results = await Promise.all(
      Array.from({ length: 50 }, () => api.request<Resource>('PUT', '/projects/hostile/shoots/h1', { body })),
    );
    // Assess
    expect(results.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    const final = await api.request<Resource>('GET', '/projects/hostile/shoots/h1');
    expect(final.body.metadata.labels).toEqual({ release: 'r2' });
    expect(Number(final.body.metadata.resourceVersion)).toBe(Number(base.body.metadata.resourceVersion) + 1);
    expect(results.every((r) => r.body.metadata.resourceVersion === final.body.metadata.resourceVersion)).toBe(true);
  });

  it('keeps every one of 10 concurrent different PUTs without resourceVersion, none answered 409', async () => {
    const base = await api.request<Resource>('GET', '/projects/hostile/shoots/h2');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => {
        const body = shoot('h2');
        body.metadata.labels = { writer: `w${i}` };
        return api.request<Resource>('PUT', '/projects/hostile/shoots/h2', { body });
      }),
    );
    expect(results.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    const versions = results.map((r) => Number(r.body.metadata.resourceVersion));
    expect(new Set(versions).size).toBe(10);
    const final = await api.request<Resource>('GET', '/projects/hostile/shoots/h2');
    expect(Number(final.body.metadata.resourceVersion)).toBe(Number(base.body.metadata.resourceVersion) + 10);
  });
});
