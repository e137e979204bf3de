import { z } from 'zod';
import { verifyCopy } from '../../core/snapshots/index.js';
import { task } from '../shared/task.js';
import { copyConfig, copyPlan } from './schemas.js';
import { storesFor } from './stores.js';

/** Checks the destination as a whole: every planned object present, the restore reaches the planned revision. */
export const handler = task(z.object({ config: copyConfig, plan: copyPlan }), ({ config, plan }) =>
  verifyCopy({ destination: storesFor(config).destination, config, plan }),
);
