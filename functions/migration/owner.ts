import { z } from 'zod';
import { Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { OwnerSteps } from '../../core/migration/owner-steps.js';
import { requireEnv } from '../shared/env.js';
import { migrationJournal } from '../shared/migration-journal.js';
import { task } from '../shared/task.js';
import { ref } from './input.js';

const steps = new OwnerSteps({
  journal: migrationJournal(),
  owners: new Route53OwnerRecords({ hostedZoneId: requireEnv('HOSTED_ZONE_ID') }),
  internalDomain: requireEnv('INTERNAL_DOMAIN'),
});

const input = z.discriminatedUnion('action', [
  z.object({ action: z.literal('delete-owner-record'), ref }).strict(),
  z.object({ action: z.literal('set-owner-destination'), ref }).strict(),
]);

/** The two owner-record changes of a migration: the only function that writes owner records. */
export const handler = task(input, async (event) =>
  event.action === 'delete-owner-record' ? steps.deleteOwnerRecord(event.ref) : steps.setOwnerDestination(event.ref),
);
