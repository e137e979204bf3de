import middy from '@middy/core';
import { z } from 'zod';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { DynamoWatchdogStateStore } from '../../adapters/dynamodb/watchdog-store.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { HttpExternalProber } from '../../adapters/http/external-prober.js';
import { SqsSeedCommandQueues } from '../../adapters/sqs/seed-command-queues.js';
import { SqsWatchdogCommands } from '../../adapters/sqs/watchdog-commands.js';
import { runPartitionRound, type PartitionOutcome } from '../../core/dwd/fan-out-round.js';
import { parseInput } from '../../core/garden/validate.js';
import { dns1123Label } from '../../core/model/names.js';
import { outboundPolicyFrom } from '../../core/net/outbound-url.js';
import { requireEnv } from '../shared/env.js';
import { logger } from '../shared/logger.js';
import { meteredClients, startMetering, takeCalls } from '../shared/metering.js';
import { observability } from '../shared/observability.js';

const input = z
  .object({
    seeds: z.array(dns1123Label).min(1).max(1_000),
    dueAtMs: z.number().int().positive(),
    intervalSeconds: z.number().int().min(1).max(60),
  })
  .strict();

const tableName = requireEnv('TABLE_NAME');
const dynamodb = meteredClients.dynamodb();
const repo = new DynamoGardenRepository({ tableName, client: dynamodb });
const store = new DynamoWatchdogStateStore({ tableName, client: dynamodb });
const prober = new HttpExternalProber({
  timeoutMs: Number(process.env.PROBE_TIMEOUT_MS ?? 2_000),
  policy: outboundPolicyFrom(process.env.OUTBOUND_ALLOW),
  onRefused: (url, reason) => logger.warn('probe refused by the outbound policy', { url, reason }),
});
const commands = new SqsWatchdogCommands({
  queues: new SqsSeedCommandQueues({ prefix: requireEnv('SEED_QUEUE_PREFIX'), client: meteredClients.sqs() }),
});
const events = new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME'), client: meteredClients.events() });
// PROBE_VIA=api-domain: probe through the shoots' API domains (DNS must serve EXTERNAL_DOMAIN where this runs).
const apiDomain =
  process.env.PROBE_VIA === 'api-domain' ? { externalDomain: requireEnv('EXTERNAL_DOMAIN') } : undefined;

/**
 * One partition of a dependency-watchdog round (functions/dwd/handler.ts fans the round out): the seeds
 * it is given and the shoots placed on them, probed, decided and acted on as docs/design.md section 8 says.
 */
async function partition(event: unknown): Promise<PartitionOutcome> {
  startMetering();
  const started = Date.now();
  const request = parseInput(input, event);
  const outcome = await runPartitionRound({
    repo,
    request,
    store,
    prober,
    commands,
    events,
    now: new Date(),
    ...(apiDomain ? { apiDomain } : {}),
    ...(process.env.EXTERNAL_DOMAIN ? { externalDomain: process.env.EXTERNAL_DOMAIN } : {}),
  });
  if (outcome.missed) logger.warn('watchdog partition skipped: it started after its round slot', { request });
  else if (outcome.acted.length > 0 || outcome.skipped.length > 0)
    logger.info('watchdog partition', { seeds: request.seeds, acted: outcome.acted, skipped: outcome.skipped });
  return { ...outcome, calls: takeCalls('watchdog partition'), durationMs: Date.now() - started };
}

export const handler = middy(partition).use(observability());
