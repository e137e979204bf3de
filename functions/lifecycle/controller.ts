import middy from '@middy/core';
import { z } from 'zod';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { StepFunctionsOperationWorkflow } from '../../adapters/sfn/operation-workflow.js';
import { systemClock } from '../../core/garden/context.js';
import { LifecycleController } from '../../core/garden/lifecycle-controller.js';
import { parseInput } from '../../core/garden/validate.js';
import { dns1123Label } from '../../core/model/names.js';
import { logger } from '../shared/logger.js';
import { meteredClients, startMetering, takeCalls } from '../shared/metering.js';
import { observability } from '../shared/observability.js';
import { requireEnv, schedulingPolicyFromEnv } from '../shared/env.js';

const controller = new LifecycleController({
  repo: new DynamoGardenRepository({ tableName: requireEnv('TABLE_NAME'), client: meteredClients.dynamodb() }),
  workflow: new StepFunctionsOperationWorkflow({
    stateMachineArn: requireEnv('OPERATE_SHOOT_STATE_MACHINE_ARN'),
    client: meteredClients.sfn(),
  }),
  events: new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME'), client: meteredClients.events() }),
  clock: systemClock,
  policy: schedulingPolicyFromEnv(),
});

const shootEvent = z.looseObject({
  'detail-type': z.enum(['ShootCreated', 'ShootScheduled', 'ShootOperationRequested']),
  detail: z.looseObject({ project: dns1123Label, shoot: dns1123Label }),
});
const capacityEvent = z.looseObject({ 'detail-type': z.enum(['SeedReady', 'SeedRegistered', 'ShootDeleted']) });
/** The one-minute schedule (EventBridge's Scheduled Event), or an operator's `{"resync": true}`. */
const tick = z.union([
  z.looseObject({ 'detail-type': z.literal('Scheduled Event') }),
  z.object({ resync: z.literal(true) }),
]);
const input = z.union([shootEvent, capacityEvent, tick]);

/**
 * The shoot lifecycle controller: an operation requested on a shoot gets its operate-shoot execution;
 * a seed that became ready, a new seed or a freed place lets pending shoots be placed; the schedule
 * resyncs (pending shoots again, operations whose events were lost). Failures throw, so that
 * EventBridge retries the event (every step is idempotent).
 */
async function handle(event: unknown) {
  startMetering();
  const parsed = parseInput(input, event);
  if ('detail' in parsed && shootEvent.safeParse(parsed).success) {
    const { project, shoot } = shootEvent.parse(parsed).detail;
    const outcome = await controller.ensureOperation(project, shoot);
    logger.info('shoot operation', { project, shoot, ...outcome });
    return outcome;
  }
  if (capacityEvent.safeParse(parsed).success) {
    const outcome = await controller.placePendingShoots();
    logger.info('pending shoots', outcome);
    return outcome;
  }
  const outcome = await controller.resync();
  logger.info('lifecycle resync', outcome);
  return { ...outcome, calls: takeCalls('lifecycle resync') };
}

export const handler = middy(handle).use(observability());
