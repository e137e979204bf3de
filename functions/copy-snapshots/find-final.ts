import { findFinalSnapshot } from '../../core/snapshots/index.js';
import { task } from '../shared/task.js';
import { withConfig } from './schemas.js';
import { storesFor } from './stores.js';

/** One poll of the source bucket for this migration's final snapshot. */
export const handler = task(withConfig, ({ config }) => findFinalSnapshot({ source: storesFor(config).source, config, now: Date.now() }));
