import { setTimeout as sleep } from 'node:timers/promises';
import { watchForFinalSnapshot } from '../../core/snapshots/index.js';
import { task } from '../shared/task.js';
import { withConfig } from './schemas.js';
import { storesFor } from './stores.js';

/** Looks for this migration's final snapshot in the source bucket, several times a second for a few seconds. */
export const handler = task(withConfig, ({ config }) =>
  watchForFinalSnapshot({ source: storesFor(config).source, config, now: Date.now, sleep: (ms) => sleep(ms) }),
);
