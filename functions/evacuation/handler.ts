import middy from '@middy/core';
import { z } from 'zod';
import { DynamoEvacuationStore } from '../../adapters/dynamodb/evacuations.js';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { DynamoMigrationStore } from '../../adapters/dynamodb/migration-store.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { StepFunctionsEvacuationDueTimer } from '../../adapters/sfn/evacuation-due-timer.js';
import { StepFunctionsMigrationWorkflow } from '../../adapters/sfn/migration-workflow.js';
import { AdmissionMover } from '../../core/evacuation/admission-mover.js';
import { runEvacuationRounds } from '../../core/evacuation/round.js';
import { railsFrom } from '../../core/evacuation/settings.js';
import { parseInput } from '../../core/garden/validate.js';
import { MigrationAdmission } from '../../core/migration/migration-admission.js';
import { optionalNumberEnv, requireEnv, schedulingPolicyFromEnv } from '../shared/env.js';
import { logger } from '../shared/logger.js';
import { migrationJournal } from '../shared/migration-journal.js';
import { observability } from '../shared/observability.js';
import { meteredClients, startMetering, takeCalls } from '../shared/metering.js';

const tableName = requireEnv('TABLE_NAME');
const scheduling = schedulingPolicyFromEnv();
const rails = railsFrom({
  maxConcurrentEvacuations: optionalNumberEnv('EVACUATION_MAX_SEEDS'),
  maxLostShare: optionalNumberEnv('EVACUATION_MAX_LOST_SHARE'),
  maxAttempts: optionalNumberEnv('EVACUATION_MAX_ATTEMPTS'),
});
const client = meteredClients.dynamodb();
const repo = new DynamoGardenRepository({ tableName, client });
const migrations = new DynamoMigrationStore({ tableName, client });
const store = new DynamoEvacuationStore({ tableName, client });
const events = new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME'), client: meteredClients.events() });
const dueTimer = new StepFunctionsEvacuationDueTimer({
  stateMachineArn: requireEnv('EVACUATION_DUE_STATE_MACHINE_ARN'),
  client: meteredClients.sfn(),
});
const mover = new AdmissionMover(
  new MigrationAdmission({
    journal: migrationJournal(),
    workflow: new StepFunctionsMigrationWorkflow({ stateMachineArn: requireEnv('MIGRATE_SHOOT_STATE_MACHINE_ARN') }),
    scheduling,
  }),
);

/**
 * What wakes the controller: a lost lease, a seed back, an evacuation due (`after` has passed: the
 * evacuation-due state machine each round asks for), an owner record moved or a migration that ended (a
 * place may be free: core/evacuation/slots.ts), the one-minute schedule (a fallback for the `after` clock,
 * and the retry of shoots that fit nowhere), or an operator's `{"round": true}`. Every one runs the same
 * idempotent round.
 */
const input = z.union([
  z.looseObject({
    'detail-type': z.enum([
      'SeedLeaseLost',
      'SeedReady',
      'SeedRegistered',
      'OwnershipTransferred',
      'MigrationSucceeded',
      'MigrationFailed',
      'EvacuationResumed',
      'EvacuationDue',
      'Scheduled Event',
    ]),
  }),
  z.object({ round: z.literal(true) }),
]);

/**
 * The evacuation controller (docs/design.md section 13). Every write is conditional: a round that loses a
 * race runs again at once (`runEvacuationRounds`), so that the change an event announced is not left to
 * the next minute. Failures throw, so that EventBridge retries (every step is idempotent).
 */
async function evacuate(event: unknown) {
  startMetering();
  const parsed = parseInput(input, event ?? {});
  const result = await runEvacuationRounds({
    repo,
    migrations,
    store,
    mover,
    events,
    rails,
    scheduling,
    dueTimer,
    now: () => new Date(),
  });
  const summary = {
    trigger: 'detail-type' in parsed ? parsed['detail-type'] : 'round',
    written: result.plan.writes.map((w) => `${w.record.seed}:${w.record.phase}`),
    started: result.started,
    rejected: result.rejected,
    lostRaces: result.lostRaces,
    waiting: result.plan.waiting,
    queued: result.plan.queued,
    ...(result.timerErrors.length > 0 ? { timerErrors: result.timerErrors } : {}),
    ...(result.plan.held ? { held: result.plan.held } : {}),
  };
  if (
    summary.written.length > 0 ||
    result.started.length > 0 ||
    result.rejected.length > 0 ||
    result.plan.held ||
    result.timerErrors.length > 0
  )
    logger.info('evacuation round', summary);
  return { ...summary, calls: takeCalls('evacuation round') };
}

export const handler = middy(evacuate).use(observability());
