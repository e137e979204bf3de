import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { heartbeatInput, seedSpec } from '../../../core/model/seed.js';
import { shootSpec } from '../../../core/model/shoot.js';
import { commonResponses, openApiDocument } from '../../../functions/api/openapi.js';
import { routes } from '../../../functions/api/routes.js';
import { VERSION, api } from './events.js';

interface Schema {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  pattern?: string;
}
interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema: Schema }[];
  requestBody?: { required: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, unknown>;
}
interface Document {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const root = new URL('../../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { version: string };
const doc = openApiDocument({ version: pkg.version }) as unknown as Document;

function resolve(schema: Schema): Schema {
  const ref = schema.$ref?.replace('#/components/schemas/', '');
  return ref ? resolve(doc.components.schemas[ref]!) : schema;
}

function operation(method: string, path: string): Operation {
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${path} is not in the document`);
  return op;
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3 with the package version', () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.version).toBe(pkg.version);
  });

  it.each(routes.map((r) => [r.method, r.path, r] as const))(
    'describes %s %s with its operation, parameters and responses',
    (method, path, route) => {
      // Act
      const op = operation(method, path);
      // Assess
      expect(op.operationId).toBe(route.operationId);
      const pathParams = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
      expect(pathParams.sort()).toEqual(Object.keys(route.params ?? {}).sort());
      expect(Object.keys(op.responses).sort()).toEqual(
        Object.keys({ ...commonResponses(route), ...route.responses }).sort(),
      );
      // Every answer the pipeline can give: 403 (gateway or handler) on signed routes, 413 and 415 where a body is read.
      if (!route.public) expect(Object.keys(op.responses)).toContain('403');
      if (route.body) expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '413', '415']));
      expect(Boolean(op.requestBody)).toBe(Boolean(route.body));
    },
  );

  it('describes no operation the route table does not have', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
  });

  it.each<[string, string, string, string[]]>([
    ['PUT', '/seeds/{name}', 'spec', Object.keys(seedSpec.shape)],
    ['PUT', '/projects/{project}/shoots/{name}', 'spec', Object.keys(shootSpec.shape)],
    ['POST', '/seeds/{name}/heartbeat', 'conditions', Object.keys(heartbeatInput.shape)],
  ])(
    'gives %s %s the validating schema: closed, requiring %s, with the same members',
    (method, path, requiredMember, members) => {
      // Act
      const body = operation(method, path).requestBody!;
      const schema = resolve(body.content['application/json']!.schema);
      // Assess
      expect(body.required).toBe(true);
      expect(schema.additionalProperties).toBe(false);
      expect(schema.required).toContain(requiredMember);
      const inner = requiredMember === 'spec' ? resolve(schema.properties!.spec!) : schema;
      expect(Object.keys(inner.properties ?? {}).sort()).toEqual([...members].sort());
      expect(inner.additionalProperties).toBe(false);
    },
  );

  it('gives PATCH the merge patch schema the server validates patches with: closed, null (removal) only where a member may be absent', () => {
    const body = operation('PATCH', '/projects/{project}/shoots/{name}').requestBody!;
    type Patch = Schema & { type?: string | string[]; properties: Record<string, Patch> };
    const schema = resolve(body.content['application/merge-patch+json']!.schema) as Patch;
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties).sort()).toEqual(['metadata', 'spec']);
    const spec = schema.properties.spec!;
    expect(spec.type).toBe('object');
    expect(Object.keys(spec.properties ?? {}).sort()).toEqual(Object.keys(shootSpec.shape).sort());
    expect(spec.properties.region!.type).toBe('string');
    expect(spec.properties.purpose!.type).toEqual(['string', 'null']);
    expect(schema.properties.metadata!.type).toEqual(['object', 'null']);
  });

  it('states the CIDR and date-time rules the server enforces', () => {
    const seed = resolve(operation('PUT', '/seeds/{name}').requestBody!.content['application/json']!.schema);
    const pods = resolve(resolve(seed.properties!.spec!).properties!.networks!).properties!.pods!;
    expect(new RegExp(pods.pattern!).test('10.1.0.0/16')).toBe(true);
    expect(new RegExp(pods.pattern!).test('10.1.0.1/16')).toBe(false);
    const conditions = resolve(
      operation('POST', '/seeds/{name}/heartbeat').requestBody!.content['application/json']!.schema,
    ).properties!.conditions! as Schema & { items: Schema };
    expect((resolve(conditions.items).properties!.lastTransitionTime as Schema & { format?: string }).format).toBe(
      'date-time',
    );
  });

  it('accepts a merge patch content type on PATCH only', () => {
    expect(Object.keys(operation('PATCH', '/projects/{project}/shoots/{name}').requestBody!.content).sort()).toEqual([
      'application/json',
      'application/merge-patch+json',
    ]);
    expect(Object.keys(operation('PUT', '/projects/{project}/shoots/{name}').requestBody!.content)).toEqual([
      'application/json',
    ]);
  });

  it('constrains name parameters to DNS-1123 labels', () => {
    const params = operation('GET', '/projects/{project}/shoots/{name}').parameters ?? [];
    for (const p of params.filter((x) => x.in === 'path')) {
      expect(p.required).toBe(true);
      expect(p.schema.pattern).toBe('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$');
    }
  });

  it('is served at GET /openapi.json', async () => {
    const res = await api().send('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(openApiDocument({ version: VERSION }));
  });

  it('is committed at openapi.json as generated', () => {
    // Prepare
    const expected = `${JSON.stringify(doc, null, 2)}\n`;
    let committed: string;
    try {
      committed = readFileSync(new URL('openapi.json', root), 'utf8');
    } catch {
      committed = '';
    }
    // Assess
    expect(
      committed === expected,
      'openapi.json is missing or out of date: run `npm run openapi` and commit the result',
    ).toBe(true);
  });
});
