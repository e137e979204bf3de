import { z } from 'zod';
import { ownershipTimingsSchema } from '../../core/ownership/timings.js';

/** The execution input of the copy-snapshots state machine. Durations in ms unless the name says seconds. */
export const copyRequest = z
  .object({
    technicalID: z.string().min(1).max(255),
    sourceBucket: z.string().min(3).max(63),
    destinationBucket: z.string().min(3).max(63),
    all: z.boolean().optional(),
    waitForFinalTimeoutMs: z
      .number()
      .int()
      .min(0)
      .max(24 * 3_600_000)
      .optional(),
    pollIntervalSeconds: z.number().int().min(1).max(3_600).optional(),
    /** Epoch ms: the migration's decision when the copy proceeds without the final snapshot (`finalWait`). */
    proceedWithoutFinalAt: z.number().int().min(0).optional(),
    fenceTimings: ownershipTimingsSchema.optional(),
    /** Epoch ms, or an ISO time. */
    ownerChangedAt: z
      .union([z.number().int().min(0), z.iso.datetime({ offset: true }).transform((s) => Date.parse(s))])
      .optional(),
    clockSkewMs: z.number().int().min(0).max(3_600_000).optional(),
    sourceHibernated: z.boolean().optional(),
    expectedLastRevision: z.number().int().min(0).optional(),
    batchSize: z.number().int().min(1).max(100).optional(),
    multipartThresholdBytes: z
      .number()
      .int()
      .min(5 * 1024 * 1024)
      .optional(),
    /** Before the owner change: no wait for a final snapshot, no fence-bound gate (nothing serves from it). */
    precopy: z.boolean().optional(),
  })
  .strict();

export const copyConfig = z.object({
  technicalID: z.string().min(1),
  sourceBucket: z.string().min(3),
  destinationBucket: z.string().min(3),
  all: z.boolean(),
  waitForFinalTimeoutMs: z.number(),
  pollIntervalSeconds: z.number().int().min(1),
  fenceBoundMs: z.number(),
  ownerChangedAt: z.number().nullable(),
  notBefore: z.number().nullable(),
  sourceHibernated: z.boolean(),
  expectedLastRevision: z.number().nullable(),
  batchSize: z.number().int().min(1),
  multipartThresholdBytes: z.number().nullable(),
  startedAt: z.number(),
  deadline: z.number(),
  precopy: z.boolean().default(false),
});

const plannedObject = z.object({ name: z.string().min(1), size: z.number().int().min(0) });
export const batchPlan = z.object({ objects: z.array(plannedObject) });

export const copyPlan = z.object({
  batches: z.array(batchPlan),
  objects: z.number(),
  bytes: z.number(),
  finalFound: z.boolean(),
  lastRevision: z.number(),
  fullKey: z.string(),
  deltas: z.number(),
});

export const batchResult = z.object({
  copied: z.number(),
  skipped: z.number(),
  bytesCopied: z.number(),
  bytesSkipped: z.number(),
  sizeOnlyVerified: z.number(),
});

export const withConfig = z.object({ config: copyConfig });
