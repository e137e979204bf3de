import { describe, expect, it } from 'vitest';
import { FailingGardenRepository } from '../../../core/garden/memory-repository.js';
import { GardenService } from '../../../core/garden/service.js';
import { HEARTBEAT_MAX_BODY_BYTES } from '../../../core/model/seed.js';
import { MAX_BODY_BYTES, handleRequest } from '../../../functions/api/app.js';
import { seedBody, shootBody } from '../garden/builders.js';
import { ACCESS, VERSION, api, httpEvent, type Api, type Response } from './events.js';

function expectError(res: Response, status: number, code: string, field?: string): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { code, message: expect.any(String), ...(field === undefined ? {} : { field }) },
  });
  expect(res.headers['content-type']).toBe('application/json');
}

const CONFIRM_DELETION = { metadata: { annotations: { 'confirmation.gardener.cloud/deletion': 'true' } } };

/** Seeds aws-eu1 (hosting dev/api1) and aws-eu2 (empty, capacity 1); dev/api2 is unscheduled. */
async function landscape(): Promise<Api> {
  const a = api();
  await a.send('PUT', '/seeds/aws-eu1', { body: seedBody() });
  await a.send('PUT', '/seeds/aws-eu2', { body: seedBody({ spec: { capacity: { shoots: 1 } } }) });
  await a.send('PUT', '/projects/dev/shoots/api1', { body: shootBody({ spec: { seedName: 'aws-eu1' } }) });
  await a.send('PUT', '/projects/dev/shoots/api2', { body: shootBody() });
  expect(a.repo.snapshot().shoots).toHaveLength(2);
  return a;
}

describe('handleRequest: every route', () => {
  it.each<[string, string, string, Parameters<Api['send']>[2], number]>([
    ['health', 'GET', '/healthz', undefined, 200],
    ['the OpenAPI document', 'GET', '/openapi.json', undefined, 200],
    ['list seeds', 'GET', '/seeds', undefined, 200],
    ['list seeds with a trailing slash', 'GET', '/seeds/', undefined, 200],
    ['register a seed', 'PUT', '/seeds/aws-eu3', { body: seedBody() }, 201],
    ['update a seed', 'PUT', '/seeds/aws-eu2', { body: seedBody() }, 200],
    ['read a seed', 'GET', '/seeds/aws-eu1', undefined, 200],
    ['read a missing seed', 'GET', '/seeds/aws-eu9', undefined, 404],
    ['delete an empty seed', 'DELETE', '/seeds/aws-eu2', undefined, 200],
    ['delete a seed that hosts shoots', 'DELETE', '/seeds/aws-eu1', undefined, 409],
    ['delete a missing seed', 'DELETE', '/seeds/aws-eu9', undefined, 404],
    [
      'heartbeat',
      'POST',
      '/seeds/aws-eu1/heartbeat',
      { body: { conditions: [{ type: 'Ready', status: 'True' }] } },
      200,
    ],
    ['heartbeat of a missing seed', 'POST', '/seeds/aws-eu9/heartbeat', { body: { conditions: [] } }, 404],
    [
      'heartbeat with a foreign identity',
      'POST',
      '/seeds/aws-eu1/heartbeat',
      { body: { identity: 'aws-eu1-old', conditions: [] } },
      409,
    ],
    ['list shoots', 'GET', '/projects/dev/shoots', undefined, 200],
    ["list every project's shoots", 'GET', '/shoots', undefined, 200],
    ['create a shoot', 'PUT', '/projects/dev/shoots/api3', { body: shootBody() }, 201],
    [
      'create a shoot on an unknown seed',
      'PUT',
      '/projects/dev/shoots/api3',
      { body: shootBody({ spec: { seedName: 'aws-eu9' } }) },
      422,
    ],
    ['update a shoot', 'PUT', '/projects/dev/shoots/api2', { body: shootBody({ spec: { purpose: 'testing' } }) }, 200],
    [
      'update a shoot at a stale version',
      'PUT',
      '/projects/dev/shoots/api2',
      { body: shootBody({ metadata: { resourceVersion: '7' } }) },
      409,
    ],
    [
      'update an immutable field',
      'PUT',
      '/projects/dev/shoots/api2',
      { body: shootBody({ spec: { region: 'us-east-1' } }) },
      422,
    ],
    [
      'merge-patch a shoot',
      'PATCH',
      '/projects/dev/shoots/api2',
      {
        body: { spec: { hibernation: { enabled: true } } },
        headers: { 'content-type': 'application/merge-patch+json' },
      },
      200,
    ],
    ['merge-patch a missing shoot', 'PATCH', '/projects/dev/shoots/api9', { body: { spec: {} } }, 404],
    ['read a shoot', 'GET', '/projects/dev/shoots/api1', undefined, 200],
    ['read a missing shoot', 'GET', '/projects/dev/shoots/api9', undefined, 404],
    ['delete a shoot without the confirmation annotation', 'DELETE', '/projects/dev/shoots/api1', undefined, 422],
    [
      'delete a shoot at a stale version',
      'DELETE',
      '/projects/dev/shoots/api1',
      { query: { resourceVersion: '9' } },
      409,
    ],
    ['delete a missing shoot', 'DELETE', '/projects/dev/shoots/api9', undefined, 404],
  ])('%s: %s %s answers %d', async (_name, method, path, options, status) => {
    // Prepare
    const a = await landscape();
    // Act
    const res = await a.send(method, path, options);
    // Assess
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('application/json');
    if (status >= 400)
      expect(res.body).toEqual({
        code: expect.any(String),
        message: expect.any(String),
        ...((res.body as { field?: string }).field ? { field: expect.any(String) } : {}),
      });
    expect(a.unexpected).toEqual([]);
  });

  it('answers health with the version', async () => {
    expect((await api().send('GET', '/healthz')).body).toEqual({ status: 'ok', version: VERSION });
  });

  it('returns the registered seed, and the listed seeds in pages', async () => {
    // Prepare
    const a = await landscape();
    // Act
    const first = await a.send('GET', '/seeds', { query: { limit: '1' } });
    const token = (first.body as { metadata: { continue: string } }).metadata.continue;
    const second = await a.send('GET', '/seeds', { query: { limit: '1', continue: token } });
    // Assess
    expect(first.body).toMatchObject({
      kind: 'SeedList',
      items: [{ metadata: { name: 'aws-eu1' }, status: { shoots: 1 } }],
    });
    expect(second.body).toEqual({ kind: 'SeedList', items: [await a.service.getSeed('aws-eu2')], metadata: {} });
  });

  it("answers a heartbeat with the identity; the seed's version stays (the heartbeat renews its lease only)", async () => {
    const a = await landscape();
    const res = await a.send('POST', '/seeds/aws-eu1/heartbeat', { body: { conditions: [] } });
    expect(res.body).toEqual({
      seed: 'aws-eu1',
      identity: 'aws-eu1-uuid-1',
      lastHeartbeatTime: expect.any(String),
      resourceVersion: '1',
    });
  });

  it("takes a heartbeat listing more planes than any other body's limit, up to the heartbeat's own", async () => {
    // Prepare: 300 planes as an agent reports them, past 256 KiB.
    const a = await landscape();
    const plane = (i: number) => ({
      technicalID: `shoot--dev--s${i}`,
      active: true,
      pods: Array.from({ length: 8 }, (_, k) => ({
        name: `pod-${k}-shoot--dev--s${i}`,
        labels: { 'gardener.cloud/role': 'controlplane', 'gardener.cloud/shoot': `shoot--dev--s${i}` },
        state: 'Running',
      })),
    });
    const report = (count: number) => ({
      conditions: [],
      controlPlanes: Array.from({ length: count }, (_, i) => plane(i)),
    });
    const perPlane = JSON.stringify(plane(0)).length + 1;

    // Act
    const taken = await a.send('POST', '/seeds/aws-eu1/heartbeat', { body: report(300) });
    const over = await a.send('POST', '/seeds/aws-eu1/heartbeat', {
      body: report(Math.ceil(HEARTBEAT_MAX_BODY_BYTES / perPlane)),
    });

    // Assess
    expect(JSON.stringify(report(300)).length).toBeGreaterThan(MAX_BODY_BYTES);
    expect(taken.status).toBe(200);
    expectError(over, 413, 'PayloadTooLarge');
    expect((await a.send('GET', '/seeds/aws-eu1')).body).toMatchObject({
      status: { controlPlanes: expect.arrayContaining([expect.objectContaining({ technicalID: 'shoot--dev--s299' })]) },
    });
  });

  it('lists the shoots of every project, sorted by project and name, in pages', async () => {
    const a = await landscape();
    await a.send('PUT', '/projects/ops/shoots/db1', { body: shootBody({ metadata: { name: 'db1', project: 'ops' } }) });
    const first = await a.send('GET', '/shoots', { query: { limit: '2' } });
    const token = (first.body as { metadata: { continue?: string } }).metadata.continue;
    const rest = await a.send('GET', '/shoots', { query: { limit: '2', continue: token! } });
    const names = (b: unknown) =>
      (b as { items: { metadata: { project: string; name: string } }[] }).items.map(
        (s) => `${s.metadata.project}/${s.metadata.name}`,
      );
    expect(first.body).toMatchObject({ kind: 'ShootList' });
    expect([...names(first.body), ...names(rest.body)]).toEqual(['dev/api1', 'dev/api2', 'ops/db1']);
    expect((rest.body as { metadata: { continue?: string } }).metadata.continue).toBeUndefined();
  });

  it('answers a delete with a Status and the refusal to delete a hosting seed with SeedHostsShoots', async () => {
    const a = await landscape();
    await a.send('PATCH', '/projects/dev/shoots/api2', {
      body: CONFIRM_DELETION,
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect((await a.send('DELETE', '/projects/dev/shoots/api2')).body).toEqual({
      kind: 'Status',
      status: 'Success',
      details: { kind: 'Shoot', name: 'dev/api2' },
    });
    expectError(await a.send('DELETE', '/seeds/aws-eu1'), 409, 'SeedHostsShoots');
  });

  it('refuses an unconfirmed delete naming the annotation; a confirmed one of a placed shoot is 202 with its deletionTimestamp, and asking again changes nothing', async () => {
    const a = await landscape();
    const refused = await a.send('DELETE', '/projects/dev/shoots/api1');
    expectError(refused, 422, 'DeletionNotConfirmed', 'metadata.annotations.confirmation.gardener.cloud/deletion');
    expect(JSON.stringify(refused.body)).toContain('confirmation.gardener.cloud/deletion');
    await a.send('PATCH', '/projects/dev/shoots/api1', {
      body: CONFIRM_DELETION,
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    const requested = await a.send('DELETE', '/projects/dev/shoots/api1');
    const again = await a.send('DELETE', '/projects/dev/shoots/api1');
    expect(requested.status).toBe(202);
    expect(requested.body).toMatchObject({
      metadata: { deletionTimestamp: expect.any(String) },
      status: {
        lastOperation: { type: 'Delete', state: 'Processing' },
        operation: { type: 'Delete', seedName: 'aws-eu1' },
      },
    });
    expect(again).toMatchObject({ status: 202, body: requested.body });
    expectError(await a.send('DELETE', '/seeds/aws-eu1'), 409, 'SeedHostsShoots');
  });
});

describe('handleRequest: refusals', () => {
  it.each<[string, string, string, string]>([
    ['POST', '/seeds', 'GET', 'a collection'],
    ['PATCH', '/seeds/aws-eu1', 'PUT, GET, DELETE', 'a seed'],
    ['GET', '/seeds/aws-eu1/heartbeat', 'POST', 'the heartbeat'],
    ['POST', '/projects/dev/shoots/api1', 'PUT, PATCH, GET, DELETE', 'a shoot'],
    ['HEAD', '/healthz', 'GET', 'health'],
  ])('answers %s %s with 405 and Allow: %s (%s)', async (method, path, allow) => {
    const res = await (await landscape()).send(method, path);
    expectError(res, 405, 'MethodNotAllowed');
    expect(res.headers.allow).toBe(allow);
  });

  it.each(['/', '/nope', '/seeds/aws-eu1/shoots', '/projects/dev', '/projects/dev/shoots/api1/extra', '//seeds'])(
    'answers %s with 404',
    async (path) => {
      expectError(await api().send('GET', path), 404, 'NotFound');
    },
  );

  it.each<[string, string, string]>([
    ['an upper-case name', '/seeds/AWS-eu1', 'name'],
    ['an underscore', '/seeds/aws_eu1', 'name'],
    ['a leading dash', '/seeds/-aws', 'name'],
    ['64 characters', `/seeds/${'a'.repeat(64)}`, 'name'],
    ['an encoded slash', '/seeds/a%2Fb', 'name'],
    ['broken URL encoding', '/seeds/%E0%A4%A', 'name'],
    ['a bad project', '/projects/Dev/shoots/api1', 'project'],
    ['a bad shoot name', '/projects/dev/shoots/api.1', 'name'],
  ])('answers a path with %s with 400 InvalidName', async (_name, path, field) => {
    expectError(await (await landscape()).send('GET', path), 400, 'InvalidName', field);
  });

  it.each<[string, Parameters<Api['send']>[2], number, string, string | undefined]>([
    ['malformed JSON', { body: '{"spec": ' }, 400, 'MalformedJSON', undefined],
    ['no body', {}, 400, 'MissingBody', undefined],
    ['a blank body', { body: '  \n' }, 400, 'MissingBody', undefined],
    ['an unknown field', { body: { ...seedBody(), extra: true } }, 400, 'UnknownField', 'extra'],
    [
      'a nested unknown field',
      { body: seedBody({ spec: { provider: { type: 'aws', region: 'eu-west-1', zones: ['a'], kind: 'x' } } }) },
      400,
      'UnknownField',
      'spec.provider.kind',
    ],
    [
      'a wrong type',
      { body: seedBody({ spec: { capacity: { shoots: '10' } } }) },
      400,
      'Invalid',
      'spec.capacity.shoots',
    ],
    ['a JSON array', { body: [] }, 400, 'Invalid', undefined],
    ['JSON null', { body: 'null' }, 400, 'Invalid', undefined],
    [
      'a name that differs from the path',
      { body: seedBody({ metadata: { name: 'aws-eu2' } }) },
      400,
      'Invalid',
      'metadata.name',
    ],
    [
      'a body over 256 KiB',
      { body: { ...seedBody(), pad: 'x'.repeat(MAX_BODY_BYTES) } },
      413,
      'PayloadTooLarge',
      undefined,
    ],
    [
      'a base64 body over 256 KiB',
      { body: 'x'.repeat(MAX_BODY_BYTES + 10), base64: true },
      413,
      'PayloadTooLarge',
      undefined,
    ],
    [
      'text/plain',
      { body: seedBody(), headers: { 'content-type': 'text/plain' } },
      415,
      'UnsupportedMediaType',
      undefined,
    ],
    [
      'a merge patch type on PUT',
      { body: seedBody(), headers: { 'content-type': 'application/merge-patch+json' } },
      415,
      'UnsupportedMediaType',
      undefined,
    ],
    [
      'a resourceVersion of a seed that does not exist',
      { body: seedBody({ metadata: { resourceVersion: '3' } }) },
      404,
      'NotFound',
      undefined,
    ],
  ])('answers PUT /seeds/aws-eu3 with %s: %d %s, and writes nothing', async (_name, options, status, code, field) => {
    // Prepare
    const a = await landscape();
    const before = a.repo.snapshot();
    // Act
    const res = await a.send('PUT', '/seeds/aws-eu3', options);
    // Assess
    expectError(res, status, code, field);
    expect(a.repo.snapshot()).toEqual(before);
  });

  it.each<[string, Parameters<Api['send']>[2]]>([
    [
      'Content-Type with a charset',
      { body: seedBody(), headers: { 'content-type': 'application/json; charset=utf-8' } },
    ],
    [
      'a capitalised header name',
      { body: JSON.stringify(seedBody()), headers: { 'Content-Type': 'application/json' } },
    ],
    ['a base64 body', { body: seedBody(), base64: true }],
  ])('accepts %s', async (_name, options) => {
    expect((await api().send('PUT', '/seeds/aws-eu3', options)).status).toBe(201);
  });

  it.each<[string, Record<string, string>, string]>([
    ['limit 0', { limit: '0' }, 'limit'],
    ['limit 501', { limit: '501' }, 'limit'],
    ['a non-numeric limit', { limit: 'ten' }, 'limit'],
    ['a token this API did not return', { continue: 'garbage' }, 'continue'],
  ])('answers a list with %s with 400', async (_name, query, field) => {
    const a = await landscape();
    expectError(await a.send('GET', '/seeds', { query }), 400, 'Invalid', field);
    expectError(await a.send('GET', '/projects/dev/shoots', { query }), 400, 'Invalid', field);
  });

  it('answers a delete with a malformed resourceVersion with 400 and deletes nothing', async () => {
    const a = await landscape();
    const before = a.repo.snapshot();
    expectError(
      await a.send('DELETE', '/projects/dev/shoots/api2', { query: { resourceVersion: 'latest' } }),
      400,
      'Invalid',
      'resourceVersion',
    );
    expect(a.repo.snapshot()).toEqual(before);
  });

  it.each<[string, string, string, Parameters<Api['send']>[2], number, string, string]>([
    [
      'an unknown seed',
      'PUT',
      '/projects/dev/shoots/api3',
      { body: shootBody({ spec: { seedName: 'aws-eu9' } }) },
      422,
      'SeedNotFound',
      'spec.seedName',
    ],
    [
      'an immutable region',
      'PATCH',
      '/projects/dev/shoots/api1',
      { body: { spec: { region: 'us-east-1' } } },
      422,
      'FieldImmutable',
      'spec.region',
    ],
    [
      'a move by update',
      'PUT',
      '/projects/dev/shoots/api1',
      { body: shootBody({ spec: { seedName: 'aws-eu2' } }) },
      422,
      'FieldImmutable',
      'spec.seedName',
    ],
    [
      'a stale patch',
      'PATCH',
      '/projects/dev/shoots/api1',
      { body: { metadata: { resourceVersion: '5' } } },
      409,
      'Conflict',
      'metadata.resourceVersion',
    ],
    [
      'a foreign heartbeat',
      'POST',
      '/seeds/aws-eu1/heartbeat',
      { body: { identity: 'x', conditions: [] } },
      409,
      'IdentityMismatch',
      'identity',
    ],
    [
      'a technical ID over 63 characters',
      'PUT',
      `/projects/${'p'.repeat(20)}/shoots/${'n'.repeat(40)}`,
      { body: shootBody() },
      400,
      'NameTooLong',
      'metadata.name',
    ],
  ])('maps %s to its status, code and field', async (_name, method, path, options, status, code, field) => {
    // Prepare
    const a = await landscape();
    // Act
    const res = await a.send(method, path, options);
    // Assess
    expectError(res, status, code, field);
  });

  it('fills a seed and then answers 422 SeedFull', async () => {
    const a = await landscape();
    expect(
      (await a.send('PUT', '/projects/dev/shoots/api3', { body: shootBody({ spec: { seedName: 'aws-eu2' } }) })).status,
    ).toBe(201);
    const before = a.repo.snapshot();
    expectError(
      await a.send('PUT', '/projects/dev/shoots/api4', { body: shootBody({ spec: { seedName: 'aws-eu2' } }) }),
      422,
      'SeedFull',
      'spec.seedName',
    );
    expect(a.repo.snapshot()).toEqual(before);
  });

  it('answers 500 Internal without details when the store fails, and reports the error', async () => {
    // Prepare
    const failure = new Error('ProvisionedThroughputExceededException');
    const unexpected: unknown[] = [];
    const service = new GardenService({ repository: new FailingGardenRepository(failure) });
    // Act
    const res = await handleRequest(httpEvent('GET', '/seeds/aws-eu1'), {
      service,
      access: ACCESS,
      version: VERSION,
      onUnexpected: (e) => unexpected.push(e),
    });
    // Assess
    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body ?? '')).toEqual({ code: 'Internal', message: expect.any(String) });
    expect(res.body).not.toContain('Provisioned');
    expect(unexpected).toEqual([failure]);
  });
});
