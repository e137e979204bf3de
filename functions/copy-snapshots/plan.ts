import { planCopyBatches } from '../../core/snapshots/index.js';
import { task } from '../shared/task.js';
import { withConfig } from './schemas.js';
import { storesFor } from './stores.js';

/** Lists the source and splits what the restore needs (or everything) into copy batches. */
export const handler = task(withConfig, ({ config }) => planCopyBatches({ source: storesFor(config).source, config }));
