import { z } from 'zod';
import { cidr } from './cidr.js';
import {
  metadataInput,
  providerType,
  region,
  toleration,
  type Condition,
  type LastOperation,
  type ObjectMeta,
} from './common.js';
import { mergePatchSchema } from './merge-patch-schema.js';
import { dns1123Label, labels } from './names.js';

export const purpose = z.enum(['evaluation', 'testing', 'development', 'production', 'infrastructure']);
export const failureToleranceType = z.enum(['node', 'zone']);
export type FailureToleranceType = z.infer<typeof failureToleranceType>;

export const shootSpec = z
  .object({
    provider: z.object({ type: providerType }).strict(),
    region,
    purpose: purpose.optional(),
    seedName: dns1123Label.optional(),
    seedSelector: z
      .object({
        matchLabels: labels.optional(),
        providerTypes: z
          .array(z.union([providerType, z.literal('*')]))
          .max(16)
          .optional(),
      })
      .strict()
      .optional(),
    tolerations: z.array(toleration).max(32).optional(),
    networking: z
      .object({ nodes: cidr.optional(), pods: cidr.optional(), services: cidr.optional() })
      .strict()
      .optional(),
    controlPlane: z
      .object({
        highAvailability: z
          .object({ failureTolerance: z.object({ type: failureToleranceType }).strict() })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    hibernation: z.object({ enabled: z.boolean() }).strict().optional(),
  })
  .strict();
export type ShootSpec = z.infer<typeof shootSpec>;

/** What `PUT /projects/{p}/shoots/{n}` accepts. `status` is owned by the server and ignored. */
export const shootInput = z
  .object({
    apiVersion: z.literal('core.gardenless.io/v1').optional(),
    kind: z.literal('Shoot').optional(),
    metadata: metadataInput.extend({ project: dns1123Label.optional() }).strict().optional(),
    spec: shootSpec,
    status: z.unknown().optional(),
  })
  .strict();
export type ShootInput = z.infer<typeof shootInput>;

/**
 * A scheduling dry run: a shoot that need not exist. The scheduler ignores its metadata, but what the
 * metadata names must still have the types the API documents (a null project is refused, not ignored).
 */
export const dryRunRequest = z
  .object({
    shoot: z
      .object({
        metadata: z.object({ project: z.string().optional(), name: z.string().optional() }).passthrough().optional(),
        spec: shootSpec,
      })
      .strict(),
  })
  .strict();

/**
 * What `PATCH /projects/{p}/shoots/{n}` accepts: a JSON merge patch of metadata (labels, annotations,
 * resourceVersion, uid) and spec. `status` and the fields the server owns are not patchable.
 */
export const shootMergePatch = (
  mergePatchSchema(
    z.object({
      metadata: metadataInput.pick({ labels: true, annotations: true, resourceVersion: true, uid: true }).optional(),
      spec: shootSpec,
    }),
  ) as z.ZodType<{
    metadata?: { resourceVersion?: string | null; uid?: string | null } | null;
    spec?: Record<string, unknown> | null;
  }>
).meta({ id: 'ShootMergePatch' });

export interface ShootStatus {
  technicalID: string;
  seedName?: string;
  lastOperation?: LastOperation;
  migration?: Record<string, unknown>;
  /** The lifecycle operation the garden runs on the seed (create, reconcile, hibernate, wake, delete). */
  operation?: ShootOperation;
  conditions: Condition[];
  constraints: Condition[];
  /**
   * Where clients reach the shoot's kube-apiserver (Gardener's field): `external` is the API domain's URL,
   * set whenever the API record is written to a serving control plane's load balancer.
   */
  advertisedAddresses?: ShootAdvertisedAddress[];
  /** Why the scheduler found no seed, when it found none. */
  scheduling?: {
    lastAttemptTime: string;
    summary: string;
    rejected: { seed: string; filter: string; reason: string }[];
    /** Rejections beyond the stored ones; a dry run lists them all. */
    rejectedOmitted?: number;
  };
}

/** One of the shoot's kube-apiserver addresses, as Gardener's `ShootAdvertisedAddress`. */
export interface ShootAdvertisedAddress {
  /** `external`: the API domain. */
  name: string;
  url: string;
}

/** A lifecycle operation in flight or last run: the operate-shoot state machine works on the one named here. */
export interface ShootOperation {
  id: string;
  type: 'Create' | 'Reconcile' | 'Hibernate' | 'Wake' | 'Delete';
  /** The seed whose agent runs it. */
  seedName: string;
  /** Commands sent so far (a retry after an error sends again). */
  attempts: number;
  requestedAt: string;
}

export interface Shoot {
  apiVersion: 'core.gardenless.io/v1';
  kind: 'Shoot';
  metadata: ObjectMeta & { project: string };
  spec: ShootSpec;
  status: ShootStatus;
}

export function failureTolerance(spec: ShootSpec): FailureToleranceType | undefined {
  return spec.controlPlane?.highAvailability?.failureTolerance.type;
}
