import { z } from 'zod';
import { task } from '../shared/task.js';
import { migrationService } from './deps.js';
import { ref, stepError, stepId } from './input.js';

const service = migrationService();

const input = z.discriminatedUnion('action', [
  z.object({ action: z.literal('choose-path'), ref }).strict(),
  z.object({ action: z.literal('persist-shootstate'), ref, output: z.unknown() }).strict(),
  z.object({ action: z.literal('switch-to-bad-path'), ref, error: stepError.optional() }).strict(),
  z.object({ action: z.literal('begin-copy'), ref }).strict(),
  z.object({ action: z.literal('complete-copy'), ref, output: z.object({ copied: z.number(), skipped: z.number(), bytes: z.number(), finalFound: z.boolean(), lastRevision: z.number() }).passthrough() }).strict(),
  z.object({ action: z.literal('complete-command'), ref, step: stepId, output: z.unknown() }).strict(),
  z.object({ action: z.literal('finalize'), ref }).strict(),
  z.object({ action: z.literal('fail'), ref, error: stepError.optional() }).strict(),
]);

/** The migrate-shoot steps the garden does itself with its own table (no Route 53, no seeds' buckets). */
export const handler = task(input, async (event) => {
  switch (event.action) {
    case 'choose-path':
      return service.choosePath(event.ref);
    case 'persist-shootstate':
      return service.persistShootState(event.ref, event.output);
    case 'switch-to-bad-path':
      return service.switchToBadPath(event.ref, event.error ?? { Error: 'Unknown' });
    case 'begin-copy':
      return service.beginCopy(event.ref);
    case 'complete-copy':
      return service.completeCopy(event.ref, event.output);
    case 'complete-command':
      return service.completeCommand(event.ref, event.step, event.output);
    case 'finalize':
      return service.finalize(event.ref);
    case 'fail':
      await service.fail(event.ref, '', event.error ?? { Error: 'Unknown' });
      return { failed: true };
  }
});
