import middy from '@middy/core';
import { z } from 'zod';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { DynamoLostLeaseStore } from '../../adapters/dynamodb/lost-leases.js';
import { DynamoMigrationStore } from '../../adapters/dynamodb/migration-store.js';
import { DynamoSourceWaitIndex } from '../../adapters/dynamodb/source-waits.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { SfnTaskTokens } from '../../adapters/sfn/task-tokens.js';
import { runLeaseMonitorRound } from '../../core/garden/lease-monitor-round.js';
import { HEALTH_ONLY, listAllSeeds } from '../../core/garden/placement.js';
import { parseInput } from '../../core/garden/validate.js';
import { SourceLeaseSwitch } from '../../core/migration/source-waits.js';
import { requireEnv } from '../shared/env.js';
import { logger } from '../shared/logger.js';
import { observability } from '../shared/observability.js';
import { runRounds } from '../shared/rounds.js';
import { meteredClients, startMetering, takeCalls } from '../shared/metering.js';
import type { CallReport } from '../../adapters/metering/call-meter.js';

/** A scheduled invocation runs a minute of rounds; a test or an operator may ask for fewer. */
const input = z
  .object({
    rounds: z.number().int().min(1).max(60).optional(),
    intervalSeconds: z.number().int().min(1).max(60).optional(),
  })
  .passthrough();

const tableName = requireEnv('TABLE_NAME');
const client = meteredClients.dynamodb();
const repo = new DynamoGardenRepository({ tableName, client });
const store = new DynamoLostLeaseStore({ tableName, client });
const events = new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME'), client: meteredClients.events() });
const early = new SourceLeaseSwitch({
  waits: new DynamoSourceWaitIndex({ tableName, client }),
  migrations: new DynamoMigrationStore({ tableName, client }),
  tasks: new SfnTaskTokens({ client: meteredClients.sfn() }),
});

/**
 * The seed lease monitor. EventBridge invokes it every minute; it runs a round every `intervalSeconds`
 * (default 5) within that minute. Each round announces every newly lost lease once (SeedLeaseLost) and,
 * for every seed whose lease has expired, cuts short the mode-auto migrations still waiting on its agent
 * (SourceLeaseExpired: the flow switches to the bad path instead of waiting for the command timeout).
 */
async function monitor(
  event: unknown,
): Promise<{ rounds: number; announced: string[]; switched: string[]; calls: CallReport }> {
  startMetering();
  const { rounds, intervalSeconds = 5 } = parseInput(input, event ?? {});
  const announced: string[] = [];
  const switched: string[] = [];
  const planned = await runRounds(
    { what: 'lease monitor', intervalSeconds, ...(rounds ? { rounds } : {}) },
    async (offset) => {
      const seeds = await listAllSeeds(repo, HEALTH_ONLY);
      const result = await runLeaseMonitorRound({ seeds, store, events, now: new Date() });
      announced.push(...result.announced);
      for (const lease of result.expired) {
        for (const wait of await early.failWaitsOn(lease)) {
          if (wait.outcome === 'failed') switched.push(`${wait.project}/${wait.name}`);
          logger.info('source wait on a seed whose lease expired', { seed: lease.seed, ...wait });
        }
      }
      if (result.announced.length > 0 || result.forgotten.length > 0)
        logger.info('lease monitor round', {
          offset,
          announced: result.announced,
          forgotten: result.forgotten,
          expired: result.expired.map((l) => l.seed),
        });
    },
  );
  return { rounds: planned, announced, switched, calls: takeCalls('lease monitor') };
}

export const handler = middy(monitor).use(observability());
