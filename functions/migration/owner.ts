import { z } from 'zod';
import { task } from '../shared/task.js';
import { migrationService } from './deps.js';
import { ref } from './input.js';

const service = migrationService({ owners: true });

const input = z.discriminatedUnion('action', [
  z.object({ action: z.literal('delete-owner-record'), ref }).strict(),
  z.object({ action: z.literal('set-owner-destination'), ref }).strict(),
]);

/** The two owner-record changes of a migration: the only function that writes owner records. */
export const handler = task(input, async (event) =>
  event.action === 'delete-owner-record' ? service.deleteOwnerRecord(event.ref) : service.setOwnerDestination(event.ref),
);
