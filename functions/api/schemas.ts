import { z } from 'zod';
import { condition, operationState, operationType } from '../../core/model/common.js';
import { hostedControlPlane, seedCapability, seedSpec } from '../../core/model/seed.js';
import { dryRunRequest, shootSpec } from '../../core/model/shoot.js';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../core/garden/page.js';

/** Response shapes, for the OpenAPI document; requests are described by the validating schemas themselves. */
export const errorBody = z.object({ code: z.string(), message: z.string(), field: z.string().optional() }).meta({
  id: 'Error',
  description: 'Every error the API returns: 400 malformed, 404, 405, 409 conflict, 413, 415, 422 admission.',
});

const objectMeta = z.object({
  name: z.string(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  resourceVersion: z
    .string()
    .describe('Send it back in metadata.resourceVersion to make an update conditional (409 on mismatch).'),
  uid: z.string(),
  creationTimestamp: z.string(),
  deletionTimestamp: z
    .string()
    .optional()
    .describe('Set when a confirmed deletion was requested; the shoot goes once its control plane is gone.'),
});

const lastOperation = z.object({
  type: operationType,
  state: operationState,
  progress: z.number(),
  description: z.string(),
  lastUpdateTime: z.string(),
});

const rejection = z.object({ seed: z.string(), filter: z.string(), reason: z.string() });

export const seedResource = z
  .object({
    apiVersion: z.literal('core.gardenless.io/v1'),
    kind: z.literal('Seed'),
    metadata: objectMeta,
    spec: seedSpec,
    status: z.object({
      identity: z.string().describe('Written into owner records while this seed owns a control plane.'),
      conditions: z.array(condition),
      allocatable: z.object({ shoots: z.number() }).optional(),
      shoots: z.number(),
      lastHeartbeatTime: z.string().optional(),
      labels: z.record(z.string(), z.string()),
      controlPlanes: z.array(hostedControlPlane).optional(),
      capabilities: z
        .array(seedCapability)
        .optional()
        .describe("What the seed's runtime reported it can do: live-walk, a member of its own joins a shoot's etcd."),
      commandQueueUrl: z.string().optional(),
    }),
  })
  .meta({ id: 'Seed' });

export const shootResource = z
  .object({
    apiVersion: z.literal('core.gardenless.io/v1'),
    kind: z.literal('Shoot'),
    metadata: objectMeta.extend({ project: z.string() }),
    spec: shootSpec,
    status: z.object({
      technicalID: z.string(),
      seedName: z.string().optional(),
      lastOperation: lastOperation.optional(),
      migration: z.record(z.string(), z.unknown()).optional(),
      operation: z
        .object({
          id: z.string(),
          type: z.enum(['Create', 'Reconcile', 'Hibernate', 'Wake', 'Delete']),
          seedName: z.string(),
          attempts: z.number(),
          requestedAt: z.string(),
        })
        .optional()
        .describe('The lifecycle operation in flight on the seed, or the last one.'),
      conditions: z.array(condition),
      constraints: z.array(condition),
      advertisedAddresses: z
        .array(z.object({ name: z.string(), url: z.string() }))
        .optional()
        .describe(
          "Where clients reach the kube-apiserver: `external` is the API domain's URL, on the serving load balancer's port.",
        ),
      scheduling: z
        .object({
          lastAttemptTime: z.string(),
          summary: z.string(),
          rejected: z.array(rejection),
          rejectedOmitted: z.number().optional(),
        })
        .optional()
        .describe('Why no seed was found, when none was.'),
    }),
  })
  .meta({ id: 'Shoot' });

const listMeta = z.object({ continue: z.string().optional().describe('Pass as ?continue= to read the next page.') });
export const seedList = z
  .object({ kind: z.literal('SeedList'), items: z.array(seedResource), metadata: listMeta })
  .meta({ id: 'SeedList' });
export const shootList = z
  .object({ kind: z.literal('ShootList'), items: z.array(shootResource), metadata: listMeta })
  .meta({ id: 'ShootList' });
export const deleted = z.object({
  kind: z.literal('Status'),
  status: z.literal('Success'),
  details: z.object({ kind: z.string(), name: z.string() }),
});
export const health = z.object({ status: z.literal('ok'), version: z.string() });
export const heartbeatResult = z.object({
  seed: z.string(),
  identity: z.string(),
  lastHeartbeatTime: z.string(),
  resourceVersion: z.string(),
  commandQueueUrl: z.string().optional(),
  release: z
    .array(z.object({ technicalID: z.string(), reason: z.string() }))
    .optional()
    .describe(
      'Control planes the agent reported that this seed no longer owns and the garden places elsewhere (or deleted): the agent removes them after its own owner check.',
    ),
});

export const listQuery = z
  .object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_PAGE_LIMIT)
      .optional()
      .describe(`Page size, 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT}).`),
    continue: z.string().max(2048).optional(),
  })
  .strip();
export const deleteQuery = z
  .object({
    resourceVersion: z
      .string()
      .regex(/^[1-9][0-9]{0,14}$/)
      .optional(),
  })
  .strip();
/** 404: the API's Error, or API Gateway's own `{"message": "Not Found"}` for a path it routes nowhere. */
export const notFoundBody = z
  .object({ message: z.string(), code: z.string().optional(), field: z.string().optional() })
  .meta({
    id: 'NotFound',
    description:
      'An Error with code NotFound, or API Gateway\'s {"message": "Not Found"} for a request it routes nowhere.',
  });

/** What API Gateway answers itself (403 on a missing or refused signature); the handler's 403 is an errorBody. */
export const gatewayError = z
  .object({ message: z.string(), code: z.string().optional(), field: z.string().optional() })
  .meta({
    id: 'GatewayError',
    description: 'A refusal by API Gateway ({"message": "Forbidden"}) or by the handler (an Error).',
  });

export const dryRunInput = dryRunRequest.meta({ id: 'DryRunRequest' });
export const dryRunResult = z
  .object({
    seedName: z.string().optional(),
    strategy: z.string(),
    eligible: z.number(),
    total: z.number(),
    summary: z.string(),
    candidates: z.array(
      z.object({
        name: z.string(),
        rank: z.number(),
        score: z.number(),
        multiZonal: z.boolean(),
        shoots: z.number(),
        capacity: z.number().nullable(),
        utilisation: z.number(),
        provider: z.string(),
        region: z.string(),
        distance: z.number().optional(),
      }),
    ),
    rejected: z.array(rejection),
  })
  .meta({ id: 'DryRunResult' });
export const controlPlaneLayout = z
  .object({
    kind: z.literal('ControlPlaneLayout'),
    technicalID: z.string(),
    seedName: z.string(),
    failureTolerance: z.enum(['none', 'node', 'zone']),
    zones: z.array(z.string()),
    zonePinned: z.boolean(),
    items: z
      .array(z.record(z.string(), z.unknown()))
      .describe('Deployments/StatefulSets and PodDisruptionBudgets as Kubernetes objects'),
    etcd: z
      .object({ leader: z.string().optional(), members: hostedControlPlane.shape.etcdMembers.unwrap() })
      .optional()
      .describe(
        "The etcd cluster as the seed's agent last reported it: members with zone, role and health, and the leader",
      ),
  })
  .meta({ id: 'ControlPlaneLayout' });

/** `?dryRun=All`, as Kubernetes spells it: admission runs, nothing is written or started. */
export const migrateQuery = z.object({ dryRun: z.enum(['All']).optional() }).strict();
export const migrationPreview = z
  .object({
    dryRun: z.literal(true),
    migrationId: z.string(),
    resumed: z.boolean(),
    sourceSeed: z.string(),
    destinationSeed: z.string(),
    resumeFrom: z.string(),
    mode: z.enum(['auto', 'good', 'bad', 'live']),
    path: z.enum(['good', 'bad', 'live']),
    pathReason: z.string(),
    steps: z
      .array(z.object({ id: z.string(), title: z.string() }))
      .describe('The steps left to run on that path, in order'),
    fenceBoundMs: z.number().describe('How long after the owner change the source has fenced itself at the latest'),
  })
  .meta({ id: 'MigrationPreview' });
export const migrationStarted = z
  .object({ migrationId: z.string(), resumed: z.boolean(), destinationSeed: z.string(), resumeFrom: z.string() })
  .meta({ id: 'MigrationStarted' });
const migrationStep = z.object({
  id: z.string(),
  title: z.string(),
  state: z.enum(['pending', 'running', 'succeeded', 'failed', 'skipped']),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  message: z.string().optional(),
  attempts: z.number(),
});
const migrationSeed = z.object({
  name: z.string(),
  identity: z.string().optional(),
  backupBucket: z.string().optional(),
});
export const migration = z
  .object({
    id: z.string(),
    shoot: z.object({ project: z.string(), name: z.string(), technicalID: z.string() }),
    source: migrationSeed,
    destination: migrationSeed,
    mode: z.enum(['auto', 'good', 'bad', 'live']),
    path: z.enum(['good', 'bad', 'live']).optional(),
    state: z.enum(['Running', 'Succeeded', 'Error']),
    progress: z.number(),
    steps: z.array(migrationStep),
    lastCompletedStep: z.string().optional(),
    switchedToBadPathAt: z.string().optional(),
    attempts: z.number(),
    createdAt: z.string(),
    updatedAt: z.string(),
    finishedAt: z.string().optional(),
    error: z.object({ step: z.string(), message: z.string() }).optional(),
    preCopy: z
      .object({
        copied: z.number(),
        skipped: z.number(),
        bytes: z.number(),
        lastRevision: z.number(),
        aheadRevision: z.number().optional(),
      })
      .optional()
      .describe(
        'What the pre-copy did before the owner change (absent when it did not run or failed): objects copied and found intact, bytes copied, the revision they reach, and the revision the destination restored etcd ahead to',
      ),
    overrides: z
      .object({
        etcdDigestMismatch: z.object({ acceptedAt: z.string(), attempt: z.number() }).optional(),
      })
      .optional()
      .describe(
        'What an operator overrode: etcdDigestMismatch, the destination serves etcd even where its restored key space differs from the digest the source named (resumed with acceptEtcdDigestMismatch; when, and from which attempt)',
      ),
  })
  .passthrough()
  .meta({ id: 'Migration' });
