import middy from '@middy/core';
import { z } from 'zod';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { DynamoLostLeaseStore } from '../../adapters/dynamodb/lost-leases.js';
import { DynamoMigrationStore } from '../../adapters/dynamodb/migration-store.js';
import { DynamoSourceWaitIndex } from '../../adapters/dynamodb/source-waits.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { SfnTaskTokens } from '../../adapters/sfn/task-tokens.js';
import { planProbeRounds, roundTiming } from '../../core/dwd/fan-out.js';
import { runLeaseMonitorRound } from '../../core/garden/lease-monitor-round.js';
import { listAllSeeds } from '../../core/garden/placement.js';
import { parseInput } from '../../core/garden/validate.js';
import { SourceLeaseSwitch } from '../../core/migration/source-waits.js';
import { requireEnv } from '../shared/env.js';
import { logger } from '../shared/logger.js';
import { observability } from '../shared/observability.js';

/** A scheduled invocation runs a minute of rounds; a test or an operator may ask for fewer. */
const input = z
  .object({ rounds: z.number().int().min(1).max(60).optional(), intervalSeconds: z.number().int().min(1).max(60).optional() })
  .passthrough();

const tableName = requireEnv('TABLE_NAME');
const repo = new DynamoGardenRepository({ tableName });
const store = new DynamoLostLeaseStore({ tableName });
const events = new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME') });
const early = new SourceLeaseSwitch({ waits: new DynamoSourceWaitIndex({ tableName }), migrations: new DynamoMigrationStore({ tableName }), tasks: new SfnTaskTokens() });

/**
 * The seed lease monitor. EventBridge invokes it every minute; it runs a round every `intervalSeconds`
 * (default 5) within that minute. Each round announces every newly lost lease once (SeedLeaseLost) and,
 * for every seed whose lease has expired, cuts short the mode-auto migrations still waiting on its agent
 * (SourceLeaseExpired: the flow switches to the bad path instead of waiting for the command timeout).
 */
async function monitor(event: unknown): Promise<{ rounds: number; announced: string[]; switched: string[] }> {
  const { rounds, intervalSeconds = 5 } = parseInput(input, event ?? {});
  const offsets = planProbeRounds({ intervalSeconds, windowSeconds: 60 }).slice(0, rounds ?? undefined);
  const started = Date.now();
  const announced: string[] = [];
  const switched: string[] = [];
  for (const offset of offsets) {
    const timing = roundTiming({ invocationStartMs: started, offsetSeconds: offset, intervalSeconds, nowMs: Date.now() });
    if (timing.missed) {
      logger.warn('lease monitor round skipped: the previous one ran past its slot', { offset });
      continue;
    }
    if (timing.delayMs > 0) await new Promise((r) => setTimeout(r, timing.delayMs));
    const result = await runLeaseMonitorRound({ seeds: await listAllSeeds(repo), store, events, now: new Date() });
    announced.push(...result.announced);
    for (const lease of result.expired) {
      for (const wait of await early.failWaitsOn(lease)) {
        if (wait.outcome === 'failed') switched.push(`${wait.project}/${wait.name}`);
        logger.info('source wait on a seed whose lease expired', { seed: lease.seed, ...wait });
      }
    }
    if (result.announced.length > 0 || result.forgotten.length > 0) logger.info('lease monitor round', { offset, announced: result.announced, forgotten: result.forgotten, expired: result.expired.map((l) => l.seed) });
  }
  return { rounds: offsets.length, announced, switched };
}

export const handler = middy(monitor).use(observability());
