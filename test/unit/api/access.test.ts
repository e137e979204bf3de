import { describe, expect, it } from 'vitest';
import { routes } from '../../../functions/api/routes.js';
import { seedBody, shootBody } from '../garden/builders.js';
import { CALLERS, api, type Api } from './events.js';

/** Seeds aws-eu1 and aws-eu2; dev/api1 on aws-eu1, dev/api2 on aws-eu2. */
async function landscape(): Promise<Api> {
  const a = api();
  await a.send('PUT', '/seeds/aws-eu1', { body: seedBody() });
  await a.send('PUT', '/seeds/aws-eu2', { body: seedBody() });
  await a.send('PUT', '/projects/dev/shoots/api1', { body: shootBody({ spec: { seedName: 'aws-eu1' } }) });
  await a.send('PUT', '/projects/dev/shoots/api2', { body: shootBody({ spec: { seedName: 'aws-eu2' } }) });
  return a;
}

/** One request per route of the table (all but health), with a body where the route takes one. */
const calls: [string, string, unknown?][] = [
  ['GET', '/openapi.json'],
  ['GET', '/seeds'],
  ['PUT', '/seeds/aws-eu1', seedBody()],
  ['GET', '/seeds/aws-eu2'],
  ['DELETE', '/seeds/aws-eu2'],
  ['POST', '/seeds/aws-eu2/heartbeat', { conditions: [] }],
  ['GET', '/projects/dev/shoots'],
  ['GET', '/shoots'],
  ['PUT', '/projects/dev/shoots/api1', shootBody({ spec: { seedName: 'aws-eu1' } })],
  ['PATCH', '/projects/dev/shoots/api1', { metadata: { labels: { x: 'y' } } }],
  ['GET', '/projects/dev/shoots/api2'],
  ['DELETE', '/projects/dev/shoots/api1'],
  ['GET', '/projects/dev/shoots/api2/controlplane'],
  ['POST', '/scheduling/dry-run', { shoot: { spec: shootBody().spec } }],
  ['POST', '/projects/dev/shoots/api1/migrate', {}],
  ['GET', '/projects/dev/shoots/api1/migration'],
  ['POST', '/projects/dev/shoots/api1/adminkubeconfig', {}],
  ['POST', '/projects/dev/shoots/api1/viewerkubeconfig', {}],
  ['GET', '/evacuations'],
  ['GET', '/seeds/aws-eu1/evacuation'],
  ['POST', '/seeds/aws-eu1/evacuation/pause'],
  ['POST', '/seeds/aws-eu1/evacuation/resume'],
  ['POST', '/seeds/aws-eu1/evacuation/cancel'],
];

describe('the agent of seed aws-eu1', () => {
  it('covers every route of the table but health', () => {
    const covered = new Set(calls.map(([m, p]) => `${m} ${p.replace(/aws-eu\d|api\d|dev/g, 'x')}`));
    expect(covered.size).toBe(routes.length - 1);
  });

  it.each(calls)('is refused %s %s with 403 Forbidden, writing nothing', async (method, path, body) => {
    // Prepare
    const a = await landscape();
    const before = a.repo.snapshot();
    // Act
    const res = await a.send(method, path, {
      ...(body === undefined ? {} : { body }),
      caller: CALLERS.agent('aws-eu1'),
    });
    // Assess
    expect(res).toMatchObject({ status: 403, body: { code: 'Forbidden' } });
    expect(a.repo.snapshot()).toEqual(before);
  });

  it.each<[string, string, unknown?]>([
    ['GET', '/seeds/aws-eu1'],
    ['POST', '/seeds/aws-eu1/heartbeat', { conditions: [{ type: 'GardenletReady', status: 'True' }] }],
    ['GET', '/projects/dev/shoots/api1'],
    ['GET', '/projects/dev/shoots/api1/controlplane'],
  ])('may %s %s (its own seed, the shoots placed on it)', async (method, path, body) => {
    const a = await landscape();
    const res = await a.send(method, path, {
      ...(body === undefined ? {} : { body }),
      caller: CALLERS.agent('aws-eu1'),
    });
    expect(res.status).toBe(200);
  });

  it('cannot heartbeat as another seed even without an identity in the body (the check no longer depends on it)', async () => {
    const a = await landscape();
    const before = a.repo.snapshot();
    const res = await a.send('POST', '/seeds/aws-eu2/heartbeat', {
      body: { conditions: [] },
      caller: CALLERS.agent('aws-eu1'),
    });
    expect(res.status).toBe(403);
    expect(a.repo.snapshot()).toEqual(before);
  });
});

describe('the viewer', () => {
  const reads = calls.filter(([m, p]) => m === 'GET' || p === '/scheduling/dry-run' || p.endsWith('/viewerkubeconfig'));
  const writes = calls.filter((c) => !reads.includes(c));

  it.each(reads)('may %s %s', async (method, path, body) => {
    const a = await landscape();
    const res = await a.send(method, path, { ...(body === undefined ? {} : { body }), caller: CALLERS.viewer });
    // Reading a migration or an evacuation that never ran is a 404, a kubeconfig of a shoot that never served a
    // 409; it is the route that is allowed.
    expect(
      res.status === 200 ||
        (res.status === 404 && /\/(migration|evacuation)$/.test(path)) ||
        (res.status === 409 && path.endsWith('kubeconfig')),
    ).toBe(true);
  });

  it.each(writes)('is refused %s %s with 403', async (method, path, body) => {
    const a = await landscape();
    const before = a.repo.snapshot();
    const res = await a.send(method, path, { ...(body === undefined ? {} : { body }), caller: CALLERS.viewer });
    expect(res).toMatchObject({ status: 403, body: { code: 'Forbidden' } });
    expect(a.repo.snapshot()).toEqual(before);
  });
});

describe('callers', () => {
  it.each([
    ['an operator role', CALLERS.operator],
    ['an IAM user with the API allowed', CALLERS.admin],
  ])('%s may write', async (_name, caller) => {
    const a = await landscape();
    const confirm = { metadata: { annotations: { 'confirmation.gardener.cloud/deletion': 'true' } } };
    expect(
      (
        await a.send('PATCH', '/projects/dev/shoots/api1', {
          body: confirm,
          headers: { 'content-type': 'application/merge-patch+json' },
          caller,
        })
      ).status,
    ).toBe(200);
    expect((await a.send('DELETE', '/projects/dev/shoots/api1', { caller })).status).toBe(202);
  });

  it('refuses a request without an authenticated caller (not through the IAM-authorized gateway) with 403 NoCaller', async () => {
    const a = await landscape();
    expect(await a.send('GET', '/seeds', { caller: null })).toMatchObject({ status: 403, body: { code: 'NoCaller' } });
    expect((await a.send('GET', '/healthz', { caller: null })).status).toBe(200);
  });

  it('takes a role named like the prefix alone for an operator, not for the agent of an empty seed name', async () => {
    const a = await landscape();
    const res = await a.send('GET', '/seeds/aws-eu1', { caller: 'arn:aws:sts::123456789012:assumed-role/gl-seed-/x' });
    expect(res.status).toBe(200);
  });
});
