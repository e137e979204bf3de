import { z } from 'zod';
import { summariseCopy } from '../../core/snapshots/index.js';
import { task } from '../shared/task.js';
import { batchResult, copyConfig, copyPlan } from './schemas.js';

/** Adds up the batches and applies the fence bound: ready to restore, or when it will be. */
export const handler = task(
  z.object({ config: copyConfig, plan: copyPlan, batches: z.array(batchResult) }),
  async ({ config, plan, batches }) => summariseCopy({ config, plan, batches, now: Date.now() }),
);
