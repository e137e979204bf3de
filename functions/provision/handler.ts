import middy from '@middy/core';
import { z } from 'zod';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { SqsSeedCommandQueues } from '../../adapters/sqs/seed-command-queues.js';
import { parseInput } from '../../core/garden/validate.js';
import { dns1123Label } from '../../core/model/names.js';
import { provisionControlPlane, type ProvisionOutcome } from '../../core/provisioning/control-plane.js';
import { logger } from '../shared/logger.js';
import { observability } from '../shared/observability.js';
import { requireEnv } from '../shared/env.js';

/** The `ShootCreated` event from the bus. */
const event = z
  .object({
    'detail-type': z.literal('ShootCreated'),
    detail: z.object({ project: dns1123Label, shoot: dns1123Label, seedName: dns1123Label.nullable() }).passthrough(),
  })
  .passthrough();

const repo = new DynamoGardenRepository({ tableName: requireEnv('TABLE_NAME') });
const owners = new Route53OwnerRecords({ hostedZoneId: requireEnv('HOSTED_ZONE_ID') });
const queues = new SqsSeedCommandQueues({ prefix: requireEnv('SEED_QUEUE_PREFIX') });

/**
 * A shoot placed on a seed: owner record to that seed, create-control-plane to its agent. Failures throw,
 * so that EventBridge retries the event (both steps are idempotent).
 */
async function provision(input: unknown): Promise<ProvisionOutcome> {
  const { detail } = parseInput(event, input);
  if (!detail.seedName) return { action: 'skipped', reason: 'the shoot is not scheduled' };
  const [shoot, seed] = await Promise.all([repo.getShoot(detail.project, detail.shoot), repo.getSeed(detail.seedName)]);
  if (!shoot || !seed) return { action: 'skipped', reason: `shoot or seed is gone (${detail.project}/${detail.shoot} on ${detail.seedName})` };
  const outcome = await provisionControlPlane({ shoot, seed, owners, queue: queues, internalDomain: requireEnv('INTERNAL_DOMAIN'), now: new Date() });
  logger.info('control plane provisioning', { project: detail.project, shoot: detail.shoot, seed: detail.seedName, ...outcome });
  return outcome;
}

export const handler = middy(provision).use(observability());
