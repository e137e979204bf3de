import { DEFAULT_PAGE_LIMIT } from '../../core/garden/page.js';
import type { ShootKubeconfigs } from '../../core/garden/kubeconfigs.js';
import type { KubeconfigRole } from '../../core/kubeconfig/issue.js';
import {
  adminKubeconfigRequest,
  adminKubeconfigResponse,
  viewerKubeconfigRequest,
  viewerKubeconfigResponse,
  type KubeconfigRequest,
} from '../../core/kubeconfig/request.js';
import { migrateRequest, type MigrationAdmission } from '../../core/migration/migration-admission.js';
import { parseInput } from '../../core/garden/validate.js';
import { dns1123Label } from '../../core/model/names.js';
import { HEARTBEAT_MAX_BODY_BYTES, heartbeatInput, seedInput } from '../../core/model/seed.js';
import { shootInput, shootMergePatch } from '../../core/model/shoot.js';
import { HttpError, json } from './http.js';
import type { Route, RouteContext } from './route.js';
import { evacuationRoutes } from './evacuation-routes.js';
import * as s from './schemas.js';

export type { Method, Route, RouteContext } from './route.js';

const name = dns1123Label;
const project = dns1123Label;
const errors = {
  400: { description: 'Malformed request', schema: s.errorBody },
  404: { description: 'Not found', schema: s.notFoundBody },
};

function page(query: RouteContext['query']) {
  const q = parseInput(s.listQuery, query);
  return { limit: q.limit ?? DEFAULT_PAGE_LIMIT, ...(q.continue ? { continue: q.continue } : {}) };
}

function deleteVersion(query: RouteContext['query']) {
  return parseInput(s.deleteQuery, query).resourceVersion;
}

export const routes: Route[] = [
  {
    method: 'GET',
    path: '/healthz',
    operationId: 'health',
    summary: 'Liveness of the API',
    tags: ['health'],
    public: true,
    responses: { 200: { description: 'Healthy', schema: s.health } },
    handle: ({ version }) => json(200, { status: 'ok', version }),
  },
  {
    method: 'GET',
    path: '/openapi.json',
    operationId: 'openapi',
    access: { viewer: true },
    summary: 'This API as an OpenAPI 3 document',
    tags: ['health'],
    responses: { 200: { description: 'The OpenAPI document' } },
    // Filled in by the handler, which owns the generated document.
    handle: () => json(500, { code: 'Internal', message: 'openapi route not wired' }),
  },
  {
    method: 'GET',
    path: '/seeds',
    operationId: 'listSeeds',
    access: { viewer: true },
    summary: 'List seeds',
    tags: ['seeds'],
    query: s.listQuery,
    responses: { 200: { description: 'A page of seeds', schema: s.seedList }, 400: errors[400] },
    handle: async ({ service, query }) => {
      const res = await service.listSeeds(page(query));
      return json(200, {
        kind: 'SeedList',
        items: res.items,
        metadata: res.continue ? { continue: res.continue } : {},
      });
    },
  },
  {
    method: 'PUT',
    path: '/seeds/{name}',
    operationId: 'putSeed',
    summary: 'Register or update a seed',
    tags: ['seeds'],
    params: { name },
    body: seedInput,
    responses: {
      200: { description: 'Updated', schema: s.seedResource },
      201: { description: 'Registered', schema: s.seedResource },
      400: errors[400],
      404: errors[404],
      409: { description: 'resourceVersion mismatch', schema: s.errorBody },
      422: { description: 'Admission rule', schema: s.errorBody },
    },
    handle: async ({ service, params, body }) => {
      const res = await service.putSeed(params.name!, body);
      return json(res.created ? 201 : 200, res.resource);
    },
  },
  {
    method: 'GET',
    path: '/seeds/{name}',
    operationId: 'getSeed',
    access: { viewer: true, agent: 'own-seed' },
    summary: 'Read a seed',
    tags: ['seeds'],
    params: { name },
    responses: { 200: { description: 'The seed', schema: s.seedResource }, 400: errors[400], 404: errors[404] },
    handle: async ({ service, params }) => json(200, await service.getSeed(params.name!)),
  },
  {
    method: 'DELETE',
    path: '/seeds/{name}',
    operationId: 'deleteSeed',
    summary: 'Delete a seed that hosts no shoots',
    tags: ['seeds'],
    params: { name },
    query: s.deleteQuery,
    responses: {
      200: { description: 'Deleted', schema: s.deleted },
      400: errors[400],
      404: errors[404],
      409: { description: 'The seed hosts shoots, or resourceVersion mismatch', schema: s.errorBody },
    },
    handle: async ({ service, params, query }) => {
      await service.deleteSeed(params.name!, deleteVersion(query));
      return json(200, { kind: 'Status', status: 'Success', details: { kind: 'Seed', name: params.name } });
    },
  },
  {
    method: 'POST',
    path: '/seeds/{name}/heartbeat',
    operationId: 'seedHeartbeat',
    access: { agent: 'own-seed' },
    summary: 'Seed agent heartbeat: conditions, hosted control planes, internal probes',
    tags: ['seeds'],
    params: { name },
    body: heartbeatInput,
    maxBodyBytes: HEARTBEAT_MAX_BODY_BYTES,
    responses: {
      200: { description: 'Recorded', schema: s.heartbeatResult },
      400: errors[400],
      404: errors[404],
      409: { description: "The agent reports another registration's identity", schema: s.errorBody },
    },
    handle: async ({ service, params, body, onHeartbeat }) => {
      const { seed, release } = await service.heartbeat(params.name!, body);
      onHeartbeat?.(seed);
      return json(200, {
        seed: seed.metadata.name,
        identity: seed.status.identity,
        lastHeartbeatTime: seed.status.lastHeartbeatTime,
        resourceVersion: seed.metadata.resourceVersion,
        ...(seed.status.commandQueueUrl ? { commandQueueUrl: seed.status.commandQueueUrl } : {}),
        ...(release.length > 0 ? { release } : {}),
      });
    },
  },
  {
    method: 'GET',
    path: '/projects/{project}/shoots',
    operationId: 'listShoots',
    access: { viewer: true },
    summary: 'List the shoots of a project',
    tags: ['shoots'],
    params: { project },
    query: s.listQuery,
    responses: { 200: { description: 'A page of shoots', schema: s.shootList }, 400: errors[400] },
    handle: async ({ service, params, query }) => {
      const res = await service.listShoots(params.project!, page(query));
      return json(200, {
        kind: 'ShootList',
        items: res.items,
        metadata: res.continue ? { continue: res.continue } : {},
      });
    },
  },
  {
    method: 'GET',
    path: '/shoots',
    operationId: 'listAllShoots',
    access: { viewer: true },
    summary: 'List the shoots of every project',
    tags: ['shoots'],
    query: s.listQuery,
    responses: {
      200: { description: 'A page of shoots, sorted by project and name', schema: s.shootList },
      400: errors[400],
    },
    handle: async ({ service, query }) => {
      const res = await service.listAllShoots(page(query));
      return json(200, {
        kind: 'ShootList',
        items: res.items,
        metadata: res.continue ? { continue: res.continue } : {},
      });
    },
  },
  {
    method: 'PUT',
    path: '/projects/{project}/shoots/{name}',
    operationId: 'putShoot',
    summary: 'Create or update a shoot',
    tags: ['shoots'],
    params: { project, name },
    body: shootInput,
    responses: {
      200: { description: 'Updated', schema: s.shootResource },
      201: { description: 'Created', schema: s.shootResource },
      400: errors[400],
      404: errors[404],
      409: { description: 'resourceVersion mismatch', schema: s.errorBody },
      422: { description: 'Admission rule (immutable field, unknown or full seed)', schema: s.errorBody },
    },
    handle: async ({ service, params, body }) => {
      const res = await service.putShoot(params.project!, params.name!, body);
      return json(res.created ? 201 : 200, res.resource);
    },
  },
  {
    method: 'PATCH',
    path: '/projects/{project}/shoots/{name}',
    operationId: 'patchShoot',
    summary: 'Merge-patch a shoot',
    tags: ['shoots'],
    params: { project, name },
    body: shootMergePatch,
    bodyContentTypes: ['application/merge-patch+json', 'application/json'],
    responses: {
      200: { description: 'Updated', schema: s.shootResource },
      400: errors[400],
      404: errors[404],
      409: { description: 'resourceVersion mismatch', schema: s.errorBody },
      422: { description: 'Admission rule', schema: s.errorBody },
    },
    handle: async ({ service, params, body }) =>
      json(200, await service.patchShoot(params.project!, params.name!, body)),
  },
  {
    method: 'GET',
    path: '/projects/{project}/shoots/{name}',
    operationId: 'getShoot',
    access: { viewer: true, agent: 'placed-shoot' },
    summary: 'Read a shoot',
    tags: ['shoots'],
    params: { project, name },
    responses: { 200: { description: 'The shoot', schema: s.shootResource }, 400: errors[400], 404: errors[404] },
    handle: async ({ service, params }) => json(200, await service.getShoot(params.project!, params.name!)),
  },
  {
    method: 'DELETE',
    path: '/projects/{project}/shoots/{name}',
    operationId: 'deleteShoot',
    summary: 'Delete a shoot (needs the annotation confirmation.gardener.cloud/deletion: "true")',
    tags: ['shoots'],
    params: { project, name },
    query: s.deleteQuery,
    responses: {
      200: { description: 'Deleted (the shoot was never placed on a seed)', schema: s.deleted },
      202: {
        description:
          'Deletion requested: the shoot, with its deletionTimestamp, goes once its seed removed its control plane',
        schema: s.shootResource,
      },
      400: errors[400],
      404: errors[404],
      409: { description: 'resourceVersion mismatch, or a migration of the shoot runs', schema: s.errorBody },
      422: {
        description: 'The deletion is not confirmed by the annotation (DeletionNotConfirmed)',
        schema: s.errorBody,
      },
    },
    handle: async ({ service, params, query }) => {
      const deletion = await service.deleteShoot(params.project!, params.name!, deleteVersion(query));
      if (!deletion.removed) return json(202, deletion.shoot);
      return json(200, {
        kind: 'Status',
        status: 'Success',
        details: { kind: 'Shoot', name: `${params.project}/${params.name}` },
      });
    },
  },
  {
    method: 'GET',
    path: '/projects/{project}/shoots/{name}/controlplane',
    operationId: 'getControlPlaneLayout',
    access: { viewer: true, agent: 'placed-shoot' },
    summary: "The HA layout of the shoot's control-plane components (GEP-20) as Kubernetes objects",
    tags: ['shoots'],
    params: { project, name },
    responses: {
      200: { description: 'The layout', schema: s.controlPlaneLayout },
      400: errors[400],
      404: errors[404],
      409: { description: 'The shoot is not scheduled yet', schema: s.errorBody },
    },
    handle: async ({ service, params }) => json(200, await service.controlPlane(params.project!, params.name!)),
  },
  {
    method: 'POST',
    path: '/scheduling/dry-run',
    operationId: 'schedulingDryRun',
    access: { viewer: true },
    summary: 'Where the scheduler would place a shoot: ranked candidates and every rejected seed with its reason',
    tags: ['scheduling'],
    body: s.dryRunInput,
    responses: { 200: { description: 'The decision', schema: s.dryRunResult }, 400: errors[400] },
    handle: async ({ service, body }) => {
      const r = await service.dryRunSchedule(body);
      return json(200, {
        ...(r.seedName ? { seedName: r.seedName } : {}),
        strategy: r.strategy,
        eligible: r.eligible,
        total: r.total,
        summary: r.summary,
        candidates: r.candidates,
        rejected: r.rejected,
      });
    },
  },
  {
    method: 'POST',
    path: '/projects/{project}/shoots/{name}/migrate',
    operationId: 'migrateShoot',
    summary: "Move the shoot's control plane to another seed (GEP-7/17); resumes a migration that ended in Error",
    tags: ['migration'],
    params: { project, name },
    body: migrateRequest,
    query: s.migrateQuery,
    responses: {
      200: {
        description: 'dryRun=All: what the request would do; nothing written or started',
        schema: s.migrationPreview,
      },
      202: { description: 'Started (or resumed)', schema: s.migrationStarted },
      400: errors[400],
      404: errors[404],
      409: { description: 'A migration of this shoot is running, or the shoot is being deleted', schema: s.errorBody },
      422: {
        description:
          'Same seed, no suitable destination, destination cannot host the HA setting, or acceptEtcdDigestMismatch for a migration not in Error at restore-etcd',
        schema: s.errorBody,
      },
    },
    handle: async ({ migrations, params, body, query }) =>
      parseInput(s.migrateQuery, query).dryRun
        ? json(200, await migrationsOf(migrations).preview(params.project!, params.name!, body))
        : json(202, await migrationsOf(migrations).start(params.project!, params.name!, body)),
  },
  {
    method: 'GET',
    path: '/projects/{project}/shoots/{name}/migration',
    operationId: 'getMigration',
    access: { viewer: true },
    summary: 'The current or last migration: every step with its state and times',
    tags: ['migration'],
    params: { project, name },
    responses: { 200: { description: 'The migration', schema: s.migration }, 400: errors[400], 404: errors[404] },
    handle: async ({ migrations, params }) =>
      json(200, await migrationsOf(migrations).get(params.project!, params.name!)),
  },
  kubeconfigRoute('admin'),
  kubeconfigRoute('viewer'),
  ...evacuationRoutes,
];

/**
 * Gardener's `shoots/adminkubeconfig` (operators) and `shoots/viewerkubeconfig` (operators and viewers): a
 * kubeconfig for the shoot's API domain with a client certificate that expires after `expirationSeconds`.
 */
function kubeconfigRoute(role: KubeconfigRole): Route {
  const admin = role === 'admin';
  return {
    method: 'POST',
    path: `/projects/{project}/shoots/{name}/${role}kubeconfig`,
    operationId: admin ? 'createAdminKubeconfig' : 'createViewerKubeconfig',
    ...(admin ? {} : { access: { viewer: true } }),
    summary: admin
      ? 'A kubeconfig with cluster-admin rights (system:masters) for the shoot, valid for expirationSeconds'
      : 'A read-only kubeconfig for the shoot (every resource but Secrets), valid for expirationSeconds',
    tags: ['shoots'],
    params: { project, name },
    body: admin ? adminKubeconfigRequest : viewerKubeconfigRequest,
    responses: {
      201: {
        description: 'The kubeconfig (base64 YAML in status.kubeconfig) and when its certificate expires',
        schema: admin ? adminKubeconfigResponse : viewerKubeconfigResponse,
      },
      400: { description: 'Malformed request, or expirationSeconds out of 600-86400', schema: s.errorBody },
      404: errors[404],
      409: { description: 'The shoot advertises no API address yet (NoAdvertisedAddress)', schema: s.errorBody },
    },
    handle: async ({ kubeconfigs, params, body, caller, actor }) =>
      json(
        201,
        await kubeconfigsOf(kubeconfigs).issue({
          project: params.project!,
          name: params.name!,
          role,
          user: caller ?? `gardenless:${actor.kind}`,
          request: parseInput(admin ? adminKubeconfigRequest : viewerKubeconfigRequest, body) as KubeconfigRequest,
        }),
      ),
  };
}

function kubeconfigsOf(kubeconfigs: ShootKubeconfigs | undefined): ShootKubeconfigs {
  if (!kubeconfigs) throw new HttpError(404, 'NotFound', 'this deployment issues no kubeconfigs');
  return kubeconfigs;
}

function migrationsOf(migrations: MigrationAdmission | undefined): MigrationAdmission {
  if (!migrations) throw new HttpError(404, 'NotFound', 'this deployment has no migration workflow');
  return migrations;
}
