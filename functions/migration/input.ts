import { z } from 'zod';
import { dns1123Label } from '../../core/model/names.js';
import { MIGRATION_STEP_IDS } from '../../core/migration/steps.js';

export const ref = z
  .object({ project: dns1123Label, name: dns1123Label, migrationId: z.string().min(1).max(128) })
  .strict();
export const stepId = z.enum(MIGRATION_STEP_IDS);
/** What a Catch puts into `$.error`. */
export const stepError = z.object({ Error: z.string(), Cause: z.string().optional() }).passthrough();
