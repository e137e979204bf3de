import { z } from 'zod';
import { Route53OwnerLookup } from '../../adapters/route53/owner-lookup.js';
import { Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { assertOwner, ownerRecordName } from '../../core/ownership/index.js';
import { requireEnv } from '../shared/env.js';
import { task } from '../shared/task.js';

const internalDomain = requireEnv('INTERNAL_DOMAIN');
const lookup = new Route53OwnerLookup(new Route53OwnerRecords({ hostedZoneId: requireEnv('HOSTED_ZONE_ID') }));

const input = z
  .object({
    project: z.string().min(1).max(63),
    shoot: z.string().min(1).max(63),
    /** The seed identity the owner record must name. */
    identity: z.string().min(1).max(255),
  })
  .strict();

/**
 * "Assert that the owner is X" for the state machines: `{result: 'owner', ...}`, or the named errors
 * OwnershipAssertionFailed (someone else owns it: do not retry) and OwnerRecordsUnavailable (retry).
 */
export const handler = task(input, async ({ project, shoot, identity }) => {
  const name = ownerRecordName({ project, shoot, internalDomain });
  const check = await assertOwner({ lookup, name, identity });
  return { recordName: name, identity, ...check };
});
