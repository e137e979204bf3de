import { z } from 'zod';
import { batchItems, copyBatch } from '../../core/snapshots/index.js';
import { task } from '../shared/task.js';
import { batchPlan, copyConfig } from './schemas.js';
import { storesFor } from './stores.js';

const OBJECT_CONCURRENCY = Number(process.env.OBJECT_CONCURRENCY ?? 4);

/** Copies one batch server-side, skipping what is already there intact, verifying each copy. */
export const handler = task(z.object({ config: copyConfig, batch: batchPlan }), ({ config, batch }) => {
  const { source, destination, copier } = storesFor(config);
  return copyBatch({
    source,
    destination,
    copier,
    items: batchItems(config.technicalID, batch),
    concurrency: OBJECT_CONCURRENCY,
  });
});
