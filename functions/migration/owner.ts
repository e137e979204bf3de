import { SQSClient } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { sqsSeedNotices } from '../../adapters/sqs/command-sender.js';
import { ApiRecordSteps } from '../../core/migration/api-record-steps.js';
import { OwnerSteps } from '../../core/migration/owner-steps.js';
import { apiRecordWriter } from '../shared/api-records.js';
import { requireEnv } from '../shared/env.js';
import { migrationJournal } from '../shared/migration-journal.js';
import { task } from '../shared/task.js';
import { ref } from './input.js';

const journal = migrationJournal();
// One attempt: a notice is worth something only at once, and the source's poll bounds the fence anyway.
const notices = sqsSeedNotices({ client: new SQSClient({ maxAttempts: 1 }) });
const steps = new OwnerSteps({
  journal,
  owners: new Route53OwnerRecords({ hostedZoneId: requireEnv('HOSTED_ZONE_ID') }),
  internalDomain: requireEnv('INTERNAL_DOMAIN'),
  notices,
});
const apiRecord = new ApiRecordSteps({ journal, writer: apiRecordWriter(), notices });

const input = z.discriminatedUnion('action', [
  z.object({ action: z.literal('delete-owner-record'), ref }).strict(),
  z.object({ action: z.literal('set-owner-destination'), ref }).strict(),
  z.object({ action: z.literal('set-owner-live'), ref }).strict(),
  z.object({ action: z.literal('set-owner-source'), ref }).strict(),
  z.object({ action: z.literal('switch-api-record'), ref }).strict(),
  z.object({ action: z.literal('lower-api-record-ttl'), ref }).strict(),
]);

/**
 * The Route 53 changes of a migration: the only function that writes owner records (each change followed
 * by an owner-change notice on the source seed's queue; the one naming the destination, and the live
 * path's naming both seeds, also by a hand-over notice), and the API record's TTL and switch (followed by
 * a hand-over notice there).
 */
export const handler = task(input, async (event) => {
  switch (event.action) {
    case 'delete-owner-record':
      return steps.deleteOwnerRecord(event.ref);
    case 'set-owner-destination': {
      const owner = await steps.setOwnerDestination(event.ref);
      return { ...owner, handOver: await apiRecord.handOverAhead(event.ref) };
    }
    case 'set-owner-live': {
      const owner = await steps.setOwnerLive(event.ref);
      return { ...owner, handOver: await apiRecord.handOverAhead(event.ref, 'own-live') };
    }
    case 'set-owner-source':
      return steps.setOwnerSource(event.ref);
    case 'switch-api-record':
      return apiRecord.switchApiRecord(event.ref);
    case 'lower-api-record-ttl':
      return apiRecord.lowerTtl(event.ref);
  }
});
