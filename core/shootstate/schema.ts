import { z } from 'zod';
import { EXTENSION_KINDS } from '../extensions/resource.js';
import { sealedSecretsSchema } from './sealed.js';
import { SHOOT_STATE_API_VERSION } from './types.js';

/** Schemas of the persisted ShootState, for documents that cross a process boundary (commands, task outputs). */
export const blobRefSchema = z
  .object({
    bucket: z.string().min(3).max(63).optional(),
    key: z.string().min(1).max(1024),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256'),
    size: z.number().int().min(0),
  })
  .strict();

export const storedStateSchema = z.union([
  z.object({ inline: z.unknown() }).strict(),
  z.object({ ref: blobRefSchema }).strict(),
]);

export const namedResourceReferenceSchema = z
  .object({
    name: z.string().min(1).max(253),
    resourceRef: z
      .object({
        kind: z.string().min(1).max(63),
        name: z.string().min(1).max(253),
        apiVersion: z.string().max(253).optional(),
      })
      .strict(),
  })
  .strict();

export const shootRefSchema = z
  .object({
    project: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label'),
    name: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS-1123 label'),
    technicalID: z
      .string()
      .min(1)
      .max(63)
      .regex(/^shoot--[a-z0-9-]+--[a-z0-9-]+$/, 'must be shoot--<project>--<name>'),
  })
  .strict();

export const packedShootStateSchema = z
  .object({
    apiVersion: z.literal(SHOOT_STATE_API_VERSION),
    kind: z.literal('ShootState'),
    shoot: shootRefSchema,
    extensions: z
      .array(
        z
          .object({
            kind: z.enum(EXTENSION_KINDS),
            name: z.string().min(1).max(253),
            purpose: z.string().min(1).max(63).optional(),
            state: storedStateSchema.optional(),
            resources: z.array(namedResourceReferenceSchema).max(64).optional(),
          })
          .strict(),
      )
      .max(64),
    collectedAt: z.string().datetime(),
    seed: z.string().min(1).max(63).optional(),
    collectedAfter: z.enum(['migrate', 'reconcile']),
    secrets: sealedSecretsSchema.optional(),
  })
  .strict();
