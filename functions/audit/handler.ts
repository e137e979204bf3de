import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { Route53ApiRecords } from '../../adapters/route53/api-records.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { systemClock } from '../../core/garden/context.js';
import { runOwnershipAudit } from '../../core/ownership/index.js';
import { requireEnv } from '../shared/env.js';
import { logger } from '../shared/logger.js';
import { task } from '../shared/task.js';
import { meteredClients, startMetering, takeCalls } from '../shared/metering.js';
import { z } from 'zod';

const repository = new DynamoGardenRepository({
  tableName: requireEnv('TABLE_NAME'),
  client: meteredClients.dynamodb(),
});
const route53 = route53Api(meteredClients.route53());
const records = new Route53OwnerRecords({ hostedZoneId: requireEnv('HOSTED_ZONE_ID'), api: route53 });
const events = new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME'), client: meteredClients.events() });
const internalDomain = requireEnv('INTERNAL_DOMAIN');
const heartbeatMaxAgeMs = Number(process.env.HEARTBEAT_MAX_AGE_MS ?? 5 * 60_000);
const apiRecords = {
  records: new Route53ApiRecords({ hostedZoneId: requireEnv('API_HOSTED_ZONE_ID'), api: route53 }),
  externalDomain: requireEnv('EXTERNAL_DOMAIN'),
};

/** The scheduled event's content is irrelevant: every round audits the whole fleet. */
const scheduledEvent = z.unknown();

/** One ownership audit round; a failure fails the invocation (EventBridge retries it) instead of reporting success. */
export const handler = task(scheduledEvent, async () => {
  startMetering();
  const report = await runOwnershipAudit({
    repository,
    records,
    events,
    clock: systemClock,
    internalDomain,
    heartbeatMaxAgeMs,
    apiRecords,
  });
  const { findings, leftovers, apiRecordFindings, ...counts } = report;
  if (findings.length > 0) logger.warn('ownership disagreements', { ...counts, findings: findings.slice(0, 50) });
  else logger.info('ownership audit', { ...counts, leftovers: leftovers.length });
  if (apiRecordFindings.length > 0)
    logger.warn('API records that do not point at a seed hosting the shoot', {
      apiRecordFindings: apiRecordFindings.slice(0, 50),
    });
  if (leftovers.length > 0)
    logger.warn('leftover control planes past the bound', { leftovers: leftovers.slice(0, 50) });
  return { ...report, calls: takeCalls('ownership audit') };
});
