import { z } from 'zod';
import { DynamoSourceWaitIndex } from '../../adapters/dynamodb/source-waits.js';
import { CopySteps } from '../../core/migration/copy-steps.js';
import { FinalizeSteps } from '../../core/migration/finalize-steps.js';
import { PathSteps } from '../../core/migration/path-steps.js';
import { PreCopySteps } from '../../core/migration/pre-copy-steps.js';
import { SeedAnswers } from '../../core/migration/seed-steps.js';
import { parseOwnershipTimings } from '../../core/ownership/index.js';
import { optionalNumberEnv, requireEnv } from '../shared/env.js';
import { migrationJournal, shootStateStore } from '../shared/migration-journal.js';
import { task } from '../shared/task.js';
import { ref, stepError, stepId } from './input.js';

const journal = migrationJournal();
const sourceWaits = new DynamoSourceWaitIndex({ tableName: requireEnv('TABLE_NAME') });
const paths = new PathSteps({ journal, heartbeatIntervalMs: optionalNumberEnv('HEARTBEAT_INTERVAL_MS'), sourceWaits });
const answers = new SeedAnswers({ journal, shootStates: shootStateStore(), sourceWaits });
const copy = new CopySteps({
  journal,
  ownershipTimings: parseOwnershipTimings(process.env.OWNERSHIP_TIMINGS),
  copyWaitForFinalMs: optionalNumberEnv('COPY_WAIT_FOR_FINAL_MS'),
});
const preCopy = new PreCopySteps(journal);
const finalize = new FinalizeSteps(journal);

const input = z.discriminatedUnion('action', [
  z.object({ action: z.literal('choose-path'), ref }).strict(),
  z.object({ action: z.literal('persist-shootstate'), ref, output: z.unknown() }).strict(),
  z.object({ action: z.literal('switch-to-bad-path'), ref, error: stepError.optional() }).strict(),
  z.object({ action: z.literal('leave-live-path'), ref, error: stepError.optional() }).strict(),
  z.object({ action: z.literal('live-reach'), ref, error: stepError.optional() }).strict(),
  z.object({ action: z.literal('skip-retire-source'), ref, error: stepError.optional() }).strict(),
  z.object({ action: z.literal('begin-pre-copy'), ref }).strict(),
  z
    .object({
      action: z.literal('complete-pre-copy'),
      ref,
      output: z
        .object({ copied: z.number(), skipped: z.number(), bytes: z.number(), lastRevision: z.number() })
        .passthrough(),
    })
    .strict(),
  z.object({ action: z.literal('pre-copy-failed'), ref, error: stepError.optional() }).strict(),
  z.object({ action: z.literal('begin-copy'), ref }).strict(),
  z
    .object({
      action: z.literal('complete-copy'),
      ref,
      output: z
        .object({
          copied: z.number(),
          skipped: z.number(),
          bytes: z.number(),
          finalFound: z.boolean(),
          lastRevision: z.number(),
        })
        .passthrough(),
    })
    .strict(),
  z.object({ action: z.literal('complete-command'), ref, step: stepId, output: z.unknown() }).strict(),
  z.object({ action: z.literal('finalize'), ref }).strict(),
  z.object({ action: z.literal('fail'), ref, error: stepError.optional() }).strict(),
]);

/** The migrate-shoot steps the garden does itself with its own table (no Route 53, no seeds' buckets). */
export const handler = task(input, async (event) => {
  switch (event.action) {
    case 'choose-path':
      return paths.choosePath(event.ref);
    case 'switch-to-bad-path':
      return paths.switchToBadPath(event.ref, event.error ?? { Error: 'Unknown' });
    case 'leave-live-path':
      return paths.leaveLivePath(event.ref, event.error ?? { Error: 'Unknown' });
    case 'live-reach':
      return paths.liveReach(event.ref, event.error ?? { Error: 'Unknown' });
    case 'skip-retire-source':
      return paths.skipRetireSource(event.ref, event.error ?? { Error: 'Unknown' });
    case 'persist-shootstate':
      return answers.persistShootState(event.ref, event.output);
    case 'complete-command':
      return answers.completeCommand(event.ref, event.step, event.output);
    case 'begin-pre-copy':
      return preCopy.beginPreCopy(event.ref);
    case 'complete-pre-copy':
      return preCopy.completePreCopy(event.ref, event.output);
    case 'pre-copy-failed':
      return preCopy.continueWithout(event.ref, event.error ?? { Error: 'Unknown' });
    case 'begin-copy':
      return copy.beginCopy(event.ref);
    case 'complete-copy':
      return copy.completeCopy(event.ref, event.output);
    case 'finalize':
      return finalize.finalize(event.ref);
    case 'fail':
      await finalize.fail(event.ref, event.error ?? { Error: 'Unknown' });
      return { failed: true };
  }
});
