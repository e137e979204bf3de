import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../../core/garden/json-input.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import { GardenService } from '../../../core/garden/service.js';
import { handleRequest } from '../../../functions/api/app.js';
import { seedBody, shootBody } from '../garden/builders.js';
import { ACCESS, VERSION, api, httpEvent, type Api } from './events.js';

/** Seeds aws-eu1 and aws-eu2, shoots dev/api1 (on aws-eu1) and dev/api2, prod/web1..3. */
async function landscape(): Promise<Api> {
  const a = api();
  await a.send('PUT', '/seeds/aws-eu1', { body: seedBody() });
  await a.send('PUT', '/seeds/aws-eu2', { body: seedBody() });
  await a.send('PUT', '/projects/dev/shoots/api1', { body: shootBody({ spec: { seedName: 'aws-eu1' } }) });
  await a.send('PUT', '/projects/dev/shoots/api2', { body: shootBody() });
  for (const n of ['web1', 'web2', 'web3']) await a.send('PUT', `/projects/prod/shoots/${n}`, { body: shootBody() });
  return a;
}

const nested = (depth: number, leaf = '{}') => `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;

describe('hostile input: every answer a clear 4xx, nothing written', () => {
  it.each<[string, string, string, () => string | object, number, string]>([
    [
      'a merge patch nested 8,000 levels (48 KB)',
      'PATCH',
      '/projects/dev/shoots/api1',
      () => `{"metadata":{"annotations":${nested(8_000)}}}`,
      400,
      'TooDeep',
    ],
    [
      'a PUT body nested 8,000 levels',
      'PUT',
      '/projects/dev/shoots/api1',
      () => `{"spec":${nested(8_000)}}`,
      400,
      'TooDeep',
    ],
    [
      'a body nested 100,000 levels in arrays',
      'PUT',
      '/seeds/aws-eu1',
      () => `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
      400,
      'TooDeep',
    ],
    [
      'a body one level deeper than the bound',
      'POST',
      '/seeds/aws-eu1/heartbeat',
      () => nested(MAX_JSON_DEPTH),
      400,
      'TooDeep',
    ],
    [
      'a lone surrogate in an annotation value',
      'PUT',
      '/projects/dev/shoots/api1',
      () => JSON.stringify(shootBody({ metadata: { annotations: { 'example.com/note': 'a\uD800b' } } })),
      400,
      'InvalidUnicode',
    ],
    [
      'a lone surrogate escaped in JSON text',
      'PUT',
      '/projects/dev/shoots/api1',
      () => '{"metadata":{"annotations":{"x":"\\udc00"}},"spec":{}}',
      400,
      'InvalidUnicode',
    ],
    [
      'a lone surrogate in a label key',
      'PATCH',
      '/projects/dev/shoots/api1',
      () => '{"metadata":{"labels":{"\\ud800":"x"}}}',
      400,
      'InvalidUnicode',
    ],
    [
      'a lone surrogate in a condition message',
      'POST',
      '/seeds/aws-eu1/heartbeat',
      () => '{"conditions":[{"type":"Ready","status":"True","message":"\\udfff"}]}',
      400,
      'InvalidUnicode',
    ],
    [
      'a member named __proto__ in a patch',
      'PATCH',
      '/projects/dev/shoots/api1',
      () => '{"spec":{"__proto__":{"region":"us-east-1"}}}',
      400,
      'UnknownField',
    ],
    [
      'an annotation key that is not a qualified name',
      'PUT',
      '/projects/dev/shoots/api2',
      () => shootBody({ metadata: { annotations: { '': 'x' } } }),
      400,
      'Invalid',
    ],
    [
      'a status in a merge patch',
      'PATCH',
      '/projects/dev/shoots/api1',
      () => ({ status: { seedName: 'aws-eu2' } }),
      400,
      'UnknownField',
    ],
    [
      'a wrong apiVersion',
      'PUT',
      '/projects/dev/shoots/api2',
      () => ({ ...shootBody(), apiVersion: 'v1' }),
      400,
      'Invalid',
    ],
  ])('%s: %s %s is refused, and writes nothing', async (_name, method, path, body, status, code) => {
    // Prepare
    const a = await landscape();
    const before = a.repo.snapshot();
    // Act
    const res = await a.send(method, path, { body: body() });
    // Assess
    expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { code } });
    expect(a.unexpected).toEqual([]);
    expect(a.repo.snapshot()).toEqual(before);
  });

  it('answers a well-formed patch whose result is not a valid shoot with 422, as Kubernetes does', async () => {
    const a = await landscape();
    const before = a.repo.snapshot();
    const res = await a.send('PATCH', '/projects/dev/shoots/api2', { body: { spec: { hibernation: {} } } });
    expect(res).toMatchObject({ status: 422, body: { code: 'Invalid', field: 'spec.hibernation.enabled' } });
    expect(a.repo.snapshot()).toEqual(before);
  });

  it('accepts the deepest body the bound allows', async () => {
    const a = await landscape();
    const res = await a.send('POST', '/seeds/aws-eu1/heartbeat', { body: nested(MAX_JSON_DEPTH - 1) });
    // Parsed and validated: refused for its content (no conditions), not for its depth.
    expect(res).toMatchObject({ status: 400, body: { code: 'Invalid', field: 'conditions' } });
  });

  it('refuses a query value that is not valid Unicode', async () => {
    const a = await landscape();
    const res = await a.send('GET', '/seeds', { query: { continue: '\uD800' } });
    expect(res).toMatchObject({ status: 400, body: { code: 'InvalidUnicode' } });
  });
});

describe('continue tokens belong to their list', () => {
  it.each<[string, string, string]>([
    ['a seeds token on a project list', '/seeds', '/projects/dev/shoots'],
    ["another project's token", '/projects/prod/shoots', '/projects/dev/shoots'],
    ['a project token on the seed list', '/projects/prod/shoots', '/seeds'],
  ])('refuses %s with 400 field continue', async (_name, from, to) => {
    // Prepare
    const a = await landscape();
    const first = await a.send('GET', from, { query: { limit: '1' } });
    const token = (first.body as { metadata: { continue?: string } }).metadata.continue;
    expect(token).toEqual(expect.any(String));
    // Act
    const res = await a.send('GET', to, { query: { continue: token! } });
    // Assess
    expect(res).toMatchObject({ status: 400, body: { code: 'Invalid', field: 'continue' } });
  });

  it('pages a project with its own tokens', async () => {
    const a = await landscape();
    const names: string[] = [];
    let token: string | undefined;
    do {
      const res = await a.send('GET', '/projects/prod/shoots', {
        query: { limit: '2', ...(token ? { continue: token } : {}) },
      });
      const body = res.body as { items: { metadata: { name: string } }[]; metadata: { continue?: string } };
      names.push(...body.items.map((i) => i.metadata.name));
      token = body.metadata.continue;
    } while (token);
    expect(names).toEqual(['web1', 'web2', 'web3']);
  });
});

describe('PUT of an object as read, and no-op writes', () => {
  it('accepts a shoot and a seed PUT back exactly as GET returned them, without a new resourceVersion', async () => {
    const a = await landscape();
    for (const path of ['/projects/dev/shoots/api1', '/seeds/aws-eu1']) {
      const read = await a.send('GET', path);
      const put = await a.send('PUT', path, { body: read.body });
      expect(put.status).toBe(200);
      expect(put.body).toEqual(read.body);
    }
  });

  it('answers 409 UidMismatch to a PUT carrying another uid, and to the PUT of a deleted object read before', async () => {
    const a = await landscape();
    const read = (await a.send('GET', '/projects/dev/shoots/api2')).body as {
      metadata: { uid: string; resourceVersion?: string };
    };
    const other = await a.send('PUT', '/projects/dev/shoots/api2', {
      body: { ...read, metadata: { ...read.metadata, uid: 'not-it' } },
    });
    expect(other).toMatchObject({ status: 409, body: { code: 'UidMismatch', field: 'metadata.uid' } });
    await a.send('PATCH', '/projects/dev/shoots/api2', {
      body: { metadata: { annotations: { 'confirmation.gardener.cloud/deletion': 'true' } } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect((await a.send('DELETE', '/projects/dev/shoots/api2')).status).toBe(200);
    const { resourceVersion: _rv, ...metadata } = read.metadata;
    const recreated = await a.send('PUT', '/projects/dev/shoots/api2', { body: { ...read, metadata } });
    expect(recreated).toMatchObject({ status: 409, body: { code: 'UidMismatch' } });
  });

  it('answers a merge patch that changes nothing with the unchanged shoot', async () => {
    const a = await landscape();
    const read = await a.send('GET', '/projects/dev/shoots/api1');
    const res = await a.send('PATCH', '/projects/dev/shoots/api1', {
      body: { spec: { region: 'eu-west-1' } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(res.body).toEqual(read.body);
  });
});

describe('contention', () => {
  it('answers 503 with Retry-After, never 409, when an unconditional write keeps losing', async () => {
    // Prepare: a store in which every seed update loses to a concurrent one.
    const repo = new MemoryGardenRepository();
    const service = new GardenService({ repository: repo, maxUnconditionalRetries: 2, pause: async () => {} });
    await service.putSeed('aws-eu1', seedBody());
    const update = repo.updateSeed.bind(repo);
    repo.updateSeed = async (seed, version) => {
      const now = (await repo.getSeed('aws-eu1'))!;
      await update(now, now.metadata.resourceVersion);
      return update(seed, version);
    };
    // Act
    const res = await handleRequest(
      httpEvent('PUT', '/seeds/aws-eu1', { body: seedBody({ spec: { capacity: { shoots: 3 } } }) }),
      { service, access: ACCESS, version: VERSION },
    );
    // Assess
    expect(res.statusCode).toBe(503);
    expect(res.headers).toMatchObject({ 'retry-after': '1' });
    expect(JSON.parse(String(res.body))).toMatchObject({ code: 'TooManyConflicts' });
  });
});
