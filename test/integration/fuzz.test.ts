import fc from 'fast-check';
import pLimit from 'p-limit';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../../harness/fixtures/index.js';
import { resetGardenState, scanTable } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';

const garden = testGarden();
const { api } = garden;

interface BadRequest {
  kind: string;
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every path to a value inside a JSON document, skipping `status`, which the API ignores by design. */
function paths(value: Json, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return [prefix];
  const entries: [string | number, Json][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return [
    prefix,
    ...entries.filter(([k]) => !(prefix.length === 0 && k === 'status')).flatMap(([k, v]) => paths(v, [...prefix, k])),
  ];
}

function getAt(doc: Json, path: (string | number)[]): Json {
  return path.reduce<Json>((v, k) => (v as Record<string | number, Json>)[k] as Json, doc);
}

function setAt(doc: Json, path: (string | number)[], value: Json): Json {
  if (path.length === 0) return value;
  const copy = structuredClone(doc) as Record<string | number, Json>;
  let node = copy;
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, Json>;
  node[path[path.length - 1]!] = value;
  return copy as Json;
}

function kindOf(v: Json): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/** A JSON value of a different JSON type than `v`: never valid where `v` was. */
const otherType = (v: Json): fc.Arbitrary<Json> =>
  fc
    .oneof(
      fc.constant<Json>(null),
      fc.boolean(),
      fc.integer({ min: -5, max: 1_000_000 }),
      fc.string({ maxLength: 12 }),
      fc.constant<Json>([1, 'x']),
      fc.constant<Json>({ unexpected: true }),
    )
    .filter((x) => kindOf(x) !== kindOf(v) && !(kindOf(v) === 'number' && kindOf(x) === 'number'));

const validSeed = fixture('seed-aws-eu1') as Json;
const validShoot = fixture('shoot-dev-api1') as Json;
const docs = [
  { doc: validSeed, path: (n: string) => `/seeds/${n}`, name: 'aws-eu1' },
  { doc: validShoot, path: (n: string) => `/projects/dev/shoots/${n}`, name: 'api1' },
];

const targetName = fc.constantFrom('aws-eu1', 'api1', 'fresh-one', 'fresh-two');

const wrongType = fc.tuple(fc.constantFrom(...docs), targetName).chain(([d, n]) => {
  const candidates = paths(d.doc).filter((p) => p.length > 0 && !(p[0] === 'metadata' && p[1] === 'name'));
  return fc.constantFrom(...candidates).chain((p) =>
    otherType(getAt(d.doc, p)).map((v): BadRequest => ({
      kind: 'wrong-type',
      method: 'PUT',
      path: d.path(n),
      body: JSON.stringify(setAt(d.doc, p, v)),
    })),
  );
});

const unknownField = fc
  .tuple(
    fc.constantFrom(...docs),
    targetName,
    fc.stringMatching(/^[a-zA-Z]{3,10}$/),
    fc.oneof(fc.integer(), fc.constant<Json>({ x: 1 })),
  )
  .chain(([d, n, key, value]) => {
    const objects = paths(d.doc).filter((p) => {
      const v = getAt(d.doc, p);
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    });
    return fc.constantFrom(...objects).map((p): BadRequest => {
      const target = getAt(d.doc, p) as Record<string, Json>;
      const unknown = `zz${key}`;
      return {
        kind: 'unknown-field',
        method: 'PUT',
        path: d.path(n),
        body: JSON.stringify(setAt(d.doc, p, { ...target, [unknown]: value })),
      };
    });
  });

const badName = fc
  .oneof(
    fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,10}$/),
    fc.stringMatching(/^[a-z0-9]{1,5}_[a-z0-9]{1,5}$/),
    fc.stringMatching(/^-[a-z0-9]{1,8}$/),
    fc.stringMatching(/^[a-z0-9]{1,8}-$/),
    fc.integer({ min: 64, max: 120 }).map((n) => 'a'.repeat(n)),
    fc.constantFrom('%41bc', 'ä-seed', 'a.b', '%ZZ', 'x%2Fy'),
  )
  .chain((name) =>
    fc.constantFrom<BadRequest>(
      { kind: 'bad-name', method: 'PUT', path: `/seeds/${name}`, body: JSON.stringify(validSeed) },
      { kind: 'bad-name', method: 'GET', path: `/seeds/${name}` },
      { kind: 'bad-name', method: 'PUT', path: `/projects/${name}/shoots/api1`, body: JSON.stringify(validShoot) },
      { kind: 'bad-name', method: 'PUT', path: `/projects/dev/shoots/${name}`, body: JSON.stringify(validShoot) },
      { kind: 'bad-name', method: 'DELETE', path: `/projects/dev/shoots/${name}` },
    ),
  );

const longNames = fc
  .tuple(fc.integer({ min: 20, max: 30 }), fc.integer({ min: 30, max: 40 }))
  .map(([p, n]): BadRequest => ({
    kind: 'technical-id-too-long',
    method: 'PUT',
    path: `/projects/${'p'.repeat(p)}/shoots/${'s'.repeat(n)}`,
    body: JSON.stringify(validShoot),
  }));

const malformed = fc
  .tuple(
    fc.constantFrom(...docs),
    targetName,
    fc.oneof(fc.string({ maxLength: 40 }), fc.constant('{'), fc.constant('{"spec": }'), fc.constant('')),
  )
  .filter(([, , text]) => {
    try {
      JSON.parse(text);
      return false;
    } catch {
      return true;
    }
  })
  .map(([d, n, text]): BadRequest => ({ kind: 'malformed-json', method: 'PUT', path: d.path(n), body: text }));

const truncated = fc
  .tuple(fc.constantFrom(...docs), targetName, fc.integer({ min: 1, max: 200 }))
  .map(([d, n, cut]): BadRequest => {
    const text = JSON.stringify(d.doc);
    return {
      kind: 'malformed-json',
      method: 'PUT',
      path: d.path(n),
      body: text.slice(0, Math.max(1, text.length - cut)),
    };
  });

const oversized = fc
  .tuple(fc.constantFrom(...docs), targetName, fc.integer({ min: 257 * 1024, max: 400 * 1024 }))
  .map(([d, n, size]): BadRequest => {
    const padded = setAt(d.doc, ['metadata', 'annotations'], { pad: 'x'.repeat(size) });
    return { kind: 'oversized', method: 'PUT', path: d.path(n), body: JSON.stringify(padded) };
  });

const wrongMethod = fc.constantFrom<BadRequest>(
  { kind: 'wrong-method', method: 'POST', path: '/seeds/aws-eu1', body: JSON.stringify(validSeed) },
  { kind: 'wrong-method', method: 'PATCH', path: '/seeds/aws-eu1', body: '{}' },
  { kind: 'wrong-method', method: 'PUT', path: '/seeds', body: JSON.stringify(validSeed) },
  { kind: 'wrong-method', method: 'DELETE', path: '/seeds' },
  { kind: 'wrong-method', method: 'POST', path: '/projects/dev/shoots/api1', body: JSON.stringify(validShoot) },
  { kind: 'wrong-method', method: 'GET', path: '/seeds/aws-eu1/heartbeat' },
  { kind: 'wrong-method', method: 'POST', path: '/projects/dev/shoots', body: JSON.stringify(validShoot) },
  { kind: 'unknown-path', method: 'GET', path: '/nope' },
  { kind: 'unknown-path', method: 'PUT', path: '/seeds/aws-eu1/extra', body: '{}' },
);

const badPatch = fc
  .oneof(
    fc.constantFrom<Json>([1, 2], 'text', 7, null),
    fc.constantFrom<Json>(
      { spec: { seedName: 'other-seed' } },
      { spec: { region: 'us-east-1' } },
      { spec: { provider: { type: 'gcp' } } },
      { spec: { networking: { pods: '10.9.0.0/16' } } },
      { spec: { hibernation: { enabled: 'yes' } } },
      { spec: { purpose: 'fun' } },
      { metadata: { resourceVersion: '999' }, spec: { purpose: 'testing' } },
      { metadata: { name: 'renamed' } },
      { spec: null },
      { kind: 'Seed' },
    ),
  )
  .map((patch): BadRequest => ({
    kind: 'bad-patch',
    method: 'PATCH',
    path: '/projects/dev/shoots/api1',
    body: JSON.stringify(patch),
  }));

const badHeartbeat = fc
  .constantFrom<Json>(
    {},
    { conditions: 'ok' },
    { conditions: [{ type: 'GardenletReady', status: 'Maybe' }] },
    { conditions: [{ type: 'bad type', status: 'True' }] },
    { conditions: [], identity: 'aws-eu1-not-me' },
    { conditions: [], surprise: 1 },
  )
  .map((hb): BadRequest => ({
    kind: 'bad-heartbeat',
    method: 'POST',
    path: '/seeds/aws-eu1/heartbeat',
    body: JSON.stringify(hb),
  }));

const wrongContentType = fc
  .constantFrom('text/plain', 'application/xml', 'application/x-www-form-urlencoded')
  .map((ct): BadRequest => ({
    kind: 'content-type',
    method: 'PUT',
    path: '/seeds/aws-eu1',
    body: JSON.stringify(validSeed),
    headers: { 'content-type': ct },
  }));

const badRequest: fc.Arbitrary<BadRequest> = fc.oneof(
  { weight: 4, arbitrary: wrongType },
  { weight: 3, arbitrary: unknownField },
  { weight: 2, arbitrary: badName },
  { weight: 1, arbitrary: longNames },
  { weight: 2, arbitrary: malformed },
  { weight: 1, arbitrary: truncated },
  { weight: 1, arbitrary: wrongMethod },
  { weight: 2, arbitrary: badPatch },
  { weight: 1, arbitrary: badHeartbeat },
  { weight: 1, arbitrary: wrongContentType },
);

const REJECTIONS = new Set([400, 404, 405, 409, 413, 415, 422]);

describe('fuzzing the deployed API with bad requests', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    expect((await api.request('PUT', '/seeds/aws-eu1', { body: validSeed })).status).toBe(201);
    const shoot = structuredClone(validShoot) as { spec: Record<string, Json> };
    shoot.spec.seedName = 'aws-eu1';
    expect((await api.request('PUT', '/projects/dev/shoots/api1', { body: shoot })).status).toBe(201);
  });

  it('rejects 1,000+ generated bad requests with a JSON 4xx and writes nothing', async () => {
    // Prepare
    const requests = [
      ...fc.sample(badRequest, { numRuns: 1_000, seed: Number(process.env.FUZZ_SEED ?? 20261122) }),
      ...fc.sample(oversized, { numRuns: 12, seed: 7 }),
    ];
    // The shoot's Create runs on its own (its command goes out, then waits for an agent that never
    // answers): take the table once it is quiet, or that progress would read as a write of the fuzzing.
    let before = await scanTable(garden);
    for (let quiet = false, tries = 0; !quiet && tries < 20; tries++) {
      await new Promise((r) => setTimeout(r, 2_000));
      const again = await scanTable(garden);
      quiet = JSON.stringify(again) === JSON.stringify(before);
      before = again;
    }
    const limit = pLimit(6);

    // Act
    const results = await Promise.all(
      requests.map((r) =>
        limit(async () => {
          const res = await api.request(r.method, r.path, {
            ...(r.body !== undefined ? { body: r.body } : {}),
            ...(r.headers ? { headers: r.headers } : {}),
          });
          return { request: r, status: res.status, body: res.body };
        }),
      ),
    );

    // Assess
    const accepted = results.filter((r) => !REJECTIONS.has(r.status));
    expect(
      accepted.map((r) => ({
        kind: r.request.kind,
        method: r.request.method,
        path: r.request.path,
        status: r.status,
        body: r.request.body?.slice(0, 300),
      })),
    ).toEqual([]);
    const withoutErrorBody = results.filter(
      (r) =>
        typeof (r.body as { code?: unknown }).code !== 'string' ||
        typeof (r.body as { message?: unknown }).message !== 'string',
    );
    expect(withoutErrorBody.map((r) => r.request.kind)).toEqual([]);
    const kinds = new Set(results.map((r) => r.request.kind));
    expect([...kinds].sort()).toEqual(
      [
        'bad-heartbeat',
        'bad-name',
        'bad-patch',
        'content-type',
        'malformed-json',
        'oversized',
        'technical-id-too-long',
        'unknown-field',
        'unknown-path',
        'wrong-method',
        'wrong-type',
      ].sort(),
    );
    expect(await scanTable(garden)).toEqual(before);
  });
});
