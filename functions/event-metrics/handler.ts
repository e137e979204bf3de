import middy from '@middy/core';
import { z } from 'zod';
import { parseInput } from '../../core/garden/validate.js';
import { logger } from '../shared/logger.js';
import { metrics, observability } from '../shared/observability.js';
import { recordEventMetrics } from './metrics.js';

const busEvent = z.looseObject({ 'detail-type': z.string().min(1), detail: z.record(z.string(), z.unknown()) });

/** Every gardenless bus event becomes metrics (the alarms on migrations in Error, split brain and lost leases read them). */
async function onEvent(input: unknown): Promise<void> {
  const event = parseInput(busEvent, input);
  recordEventMetrics(metrics, event['detail-type'], event.detail);
  if (event['detail-type'] === 'SplitBrainSuspected' || event['detail-type'] === 'MigrationFailed')
    logger.warn(event['detail-type'], { detail: event.detail });
}

export const handler = middy(onEvent).use(observability());
