import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../../functions/api/app.js';
import { seedBody, shootBody } from '../garden/builders.js';
import { api, httpEvent, type Api } from './events.js';

/** Names that exist in the landscape, names that do not, and names the API must refuse. */
const name = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('aws-eu1', 'aws-eu2', 'dev', 'api1', 'api2', 'api3') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      'AWS',
      'a_b',
      '-a',
      'a-',
      'x'.repeat(64),
      '%',
      '%E0%A4%A',
      '%2F',
      'a%2Fb',
      '..',
      '%00',
      'ünï',
      'a b',
      'api1?x=1',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

const path = fc.oneof(
  fc.constantFrom('/healthz', '/openapi.json', '/seeds', '/', ''),
  name.map((n) => `/seeds/${n}`),
  name.map((n) => `/seeds/${n}/heartbeat`),
  name.map((n) => `/projects/${n}/shoots`),
  fc.tuple(name, name).map(([p, n]) => `/projects/${p}/shoots/${n}`),
  fc
    .tuple(name, name, fc.constantFrom('', '/', '/migrate', '/x'))
    .map(([p, n, tail]) => `/projects/${p}/shoots/${n}${tail}`),
  fc.string({ maxLength: 40 }).map((s) => `/${s}`),
);

const method = fc.oneof(
  fc.constantFrom('GET', 'PUT', 'POST', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'put', 'patch'),
  fc.string({ maxLength: 8 }),
);

const json = fc.jsonValue({ maxDepth: 3 });
const OVERSIZED = Symbol('oversized body');
const oversized = JSON.stringify({ ...seedBody(), pad: 'x'.repeat(MAX_BODY_BYTES) });
type Json = Record<string, unknown>;

/** A valid body with one member replaced, added or removed somewhere: wrong types, unknown fields, nulls. */
function mutated(base: Json): fc.Arbitrary<unknown> {
  const spec = base.spec as Json;
  return fc.oneof(
    fc
      .tuple(fc.constantFrom(...Object.keys(spec), 'extra'), json)
      .map(([k, v]) => ({ ...base, spec: { ...spec, [k]: v } })),
    fc
      .tuple(fc.constantFrom('metadata', 'spec', 'status', 'kind', 'apiVersion', 'extra'), json)
      .map(([k, v]) => ({ ...base, [k]: v })),
    fc.constantFrom(...Object.keys(spec)).map((k) => ({ ...base, spec: { ...spec, [k]: undefined } })),
    fc
      .record({ name: fc.string(), resourceVersion: fc.constantFrom('1', '2', '0', 'x', '99') })
      .map((metadata) => ({ ...base, metadata })),
  );
}

const body = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(
      seedBody(),
      shootBody(),
      shootBody({ spec: { seedName: 'aws-eu1' } }),
      shootBody({ spec: { seedName: 'aws-eu2' } }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(
      { conditions: [{ type: 'Ready', status: 'True' }] },
      { identity: 'aws-eu1-uuid-1', conditions: [] },
      { identity: 'other', conditions: [] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(
      { spec: { hibernation: { enabled: true } } },
      { spec: { region: 'us-east-1' } },
      { metadata: { resourceVersion: '1' } },
      { spec: null },
    ),
  },
  { weight: 4, arbitrary: fc.oneof(mutated(seedBody()), mutated(shootBody())) },
  { weight: 2, arbitrary: json },
  // Not JSON, or not all of it.
  {
    weight: 2,
    arbitrary: fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom('{', '{"spec":', '[1,', 'undefined', '\u0000', '{"a":1}{"b":2}'),
    ),
  },
  // A stand-in, so that a counterexample prints short; `send` puts the 256 KiB body in its place.
  { weight: 1, arbitrary: fc.constant(OVERSIZED) },
);

const headers = fc.oneof(
  fc.constant({}),
  fc
    .constantFrom(
      'application/json',
      'application/merge-patch+json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/xml',
      '',
      ';',
    )
    .map((t) => ({ 'content-type': t })),
  fc.string({ maxLength: 20 }).map((t) => ({ 'Content-Type': t })),
);

const query = fc.option(
  fc.record(
    {
      limit: fc.oneof(fc.constantFrom('1', '2', '0', '-1', '501', '1.5', 'x', '1e2'), fc.string({ maxLength: 5 })),
      continue: fc.string({ maxLength: 30 }),
      resourceVersion: fc.constantFrom('1', '2', '99', 'x', ''),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);

const seedish = fc.oneof(fc.constant<unknown>(seedBody()), mutated(seedBody()), body);
const shootish = fc.oneof(
  fc.constantFrom<unknown>(
    shootBody(),
    shootBody({ spec: { seedName: 'aws-eu1' } }),
    shootBody({ spec: { seedName: 'aws-eu2' } }),
    shootBody({ spec: { seedName: 'aws-eu9' } }),
  ),
  mutated(shootBody()),
  body,
);
const patchish = fc.oneof(
  fc.constantFrom<unknown>(
    { spec: { hibernation: { enabled: true } } },
    { spec: { region: 'us-east-1' } },
    { metadata: { resourceVersion: '1' } },
    { metadata: { resourceVersion: '7' } },
    { spec: null },
  ),
  json,
  body,
);
const heartbeatish = fc.oneof(
  fc.constantFrom<unknown>(
    { conditions: [{ type: 'Ready', status: 'True' }] },
    { identity: 'aws-eu1-uuid-1', conditions: [] },
    { identity: 'other', conditions: [] },
  ),
  json.map((v) => ({ conditions: [v] })),
  body,
);

/** Mostly the API's own operations with their kind of body, sometimes anything at all. */
const request = fc.record({
  call: fc.oneof(
    { weight: 1, arbitrary: fc.record({ method, path, body }) },
    {
      weight: 1,
      arbitrary: fc.record({ method: fc.constantFrom('GET', 'DELETE'), path, body: fc.constant(undefined) }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ method: fc.constant('PUT'), path: name.map((n) => `/seeds/${n}`), body: seedish }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        method: fc.constant('POST'),
        path: name.map((n) => `/seeds/${n}/heartbeat`),
        body: heartbeatish,
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        method: fc.constant('PUT'),
        path: fc.tuple(name, name).map(([p, n]) => `/projects/${p}/shoots/${n}`),
        body: shootish,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        method: fc.constant('PATCH'),
        path: fc.tuple(name, name).map(([p, n]) => `/projects/${p}/shoots/${n}`),
        body: patchish,
      }),
    },
  ),
  headers,
  query,
  base64: fc.boolean(),
});

/** Seeds aws-eu1 (hosting dev/api1) and aws-eu2 (empty, capacity 1); dev/api2 is unscheduled. */
async function landscape(): Promise<Api> {
  const a = api();
  await a.service.putSeed('aws-eu1', seedBody());
  await a.service.putSeed('aws-eu2', seedBody({ spec: { capacity: { shoots: 1 } } }));
  await a.service.putShoot('dev', 'api1', shootBody({ spec: { seedName: 'aws-eu1' } }));
  await a.service.putShoot('dev', 'api2', shootBody());
  return a;
}

describe('handleRequest under arbitrary requests', () => {
  it('never answers 5xx, always answers JSON, and a refused request writes nothing', async () => {
    let refused = 0;
    const statuses: Record<number, number> = {};
    let total = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 4 }), async (requests) => {
        // Prepare
        const a = await landscape();
        for (const r of requests) {
          const before = JSON.stringify(a.repo.snapshot());
          // Act
          const res = await a.send(r.call.method, r.call.path, {
            ...(r.call.body === undefined ? {} : { body: r.call.body === OVERSIZED ? oversized : r.call.body }),
            headers: r.headers,
            ...(r.query ? { query: r.query as Record<string, string> } : {}),
            base64: r.base64,
          });
          // Assess
          total += 1;
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          expect(res.status, JSON.stringify(res.body)).toBeLessThan(500);
          expect(a.unexpected).toEqual([]);
          if (res.status >= 400) {
            refused += 1;
            expect(res.body).toMatchObject({ code: expect.any(String), message: expect.any(String) });
            expect(JSON.stringify(a.repo.snapshot())).toBe(before);
          }
        }
      }),
      { numRuns: 600 },
    );
    // The generators must reach the rejections this test is about, not only the happy paths.
    expect(total).toBeGreaterThanOrEqual(1_000);
    expect(refused / total).toBeGreaterThan(0.5);
    for (const status of [200, 201, 400, 404, 405, 409, 413, 415, 422])
      expect(statuses[status], `status ${status} never seen`).toBeGreaterThan(0);
    // 600 runs take about 6 s on an idle core; the machine is shared.
  }, 120_000);

  it('never answers 5xx to an event with unusual but possible shapes', async () => {
    const a = await landscape();
    await fc.assert(
      fc.asyncProperty(
        path,
        fc.option(fc.string(), { nil: undefined }),
        fc.boolean(),
        async (rawPath, rawBody, base64) => {
          const event = httpEvent('PUT', rawPath);
          // API Gateway omits headers and body when there are none.
          delete (event as { headers?: unknown }).headers;
          if (rawBody !== undefined) event.body = rawBody;
          event.isBase64Encoded = base64;
          const res = await a.sendEvent(event);
          expect(res.status).toBeLessThan(500);
        },
      ),
      { numRuns: 200 },
    );
  });
});
