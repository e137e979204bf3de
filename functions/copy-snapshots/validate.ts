import { validateCopyRequest } from '../../core/snapshots/index.js';
import { task } from '../shared/task.js';
import { copyRequest } from './schemas.js';
import { storesFor } from './stores.js';

/** Validates the request (the wait is never shorter than the fence bound) and that both buckets can be used. */
export const handler = task(copyRequest, async (request) => {
  const config = validateCopyRequest(request, Date.now());
  const { source, destination } = storesFor(config);
  await Promise.all([source.checkBucket(), destination.checkBucket()]);
  return config;
});
