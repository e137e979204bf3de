import middy from '@middy/core';
import { z } from 'zod';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { DynamoWatchdogStateStore } from '../../adapters/dynamodb/watchdog-store.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { HttpExternalProber } from '../../adapters/http/external-prober.js';
import { SqsWatchdogCommands } from '../../adapters/sqs/watchdog-commands.js';
import { SqsSeedCommandQueues } from '../../adapters/sqs/seed-command-queues.js';
import { runWatchdogRound } from '../../core/dwd/watchdog-round.js';
import { listAllSeeds } from '../../core/garden/placement.js';
import { listAllShoots } from '../../core/garden/listing.js';
import { parseInput } from '../../core/garden/validate.js';
import { outboundPolicyFrom } from '../../core/net/outbound-url.js';
import { logger } from '../shared/logger.js';
import { METRIC } from '../shared/metric-names.js';
import { MetricUnit, metrics, observability } from '../shared/observability.js';
import { requireEnv } from '../shared/env.js';
import { runRounds } from '../shared/rounds.js';

/** A scheduled invocation runs a minute of rounds; a test or an operator may ask for fewer. */
const input = z
  .object({
    rounds: z.number().int().min(1).max(12).optional(),
    intervalSeconds: z.number().int().min(1).max(60).optional(),
  })
  .passthrough();

const repo = new DynamoGardenRepository({ tableName: requireEnv('TABLE_NAME') });
const store = new DynamoWatchdogStateStore({ tableName: requireEnv('TABLE_NAME') });
const prober = new HttpExternalProber({
  timeoutMs: Number(process.env.PROBE_TIMEOUT_MS ?? 2_000),
  policy: outboundPolicyFrom(process.env.OUTBOUND_ALLOW),
  onRefused: (url, reason) => logger.warn('probe refused by the outbound policy', { url, reason }),
});
const commands = new SqsWatchdogCommands({
  queues: new SqsSeedCommandQueues({ prefix: requireEnv('SEED_QUEUE_PREFIX') }),
});
const events = new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME') });
// PROBE_VIA=api-domain: probe through the shoots' API domains (DNS must serve EXTERNAL_DOMAIN where this runs).
const apiDomain =
  process.env.PROBE_VIA === 'api-domain' ? { externalDomain: requireEnv('EXTERNAL_DOMAIN') } : undefined;

/**
 * The dependency-watchdog prober and weeder for the whole fleet. EventBridge invokes it every minute;
 * it runs a round every `intervalSeconds` (default 10) within that minute, each round reading the
 * fleet afresh so that heartbeats and placements are current.
 */
async function watchdog(
  event: unknown,
): Promise<{ rounds: number; probes: number; commands: number; shootsOnSilentSeeds: string[] }> {
  const { rounds, intervalSeconds = 10 } = parseInput(input, event ?? {});
  let probes = 0;
  let sent = 0;
  const silent = new Set<string>();
  const planned = await runRounds(
    { what: 'watchdog', intervalSeconds, ...(rounds ? { rounds } : {}) },
    async (offset) => {
      const [shoots, seeds] = await Promise.all([listAllShoots(repo), listAllSeeds(repo)]);
      const results = await runWatchdogRound({
        shoots,
        seeds,
        store,
        prober,
        commands,
        events,
        now: new Date(),
        ...(apiDomain ? { apiDomain } : {}),
      });
      const acted = results.filter((r) => r.commands > 0);
      probes += results.filter((r) => r.external !== undefined).length;
      sent += acted.reduce((n, r) => n + r.commands, 0);
      const skipped = results.filter((r) => r.verdict === 'seed-lease-expired');
      for (const r of skipped) silent.add(r.shoot);
      logger.info('watchdog round', {
        offset,
        shoots: results.length,
        acted: acted.map((r) => ({ shoot: r.shoot, verdict: r.verdict, commands: r.commands })),
        // Shoots on seeds whose lease expired: not probed, nothing sent (docs/design.md section 8, partitions).
        skipped: skipped.map((r) => ({ shoot: r.shoot, reason: r.reason })),
      });
    },
  );
  metrics.addMetric(METRIC.watchdogProbes, MetricUnit.Count, probes);
  metrics.addMetric(METRIC.watchdogCommands, MetricUnit.Count, sent);
  return { rounds: planned, probes, commands: sent, shootsOnSilentSeeds: [...silent] };
}

export const handler = middy(watchdog).use(observability());
