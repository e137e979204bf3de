import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BAD_PATH_ENTRY,
  completeStep,
  continueWithoutStep,
  failStep,
  migrationProgress,
  PREPARE_STEPS,
  resumeMigration,
  resumePoint,
  setPath,
  startStep,
  stepDefinition,
  stepIndex,
  switchToBadPath,
  type MigrationRecord,
} from '../../../core/migration/index.js';
import { aRecord, at } from './builders.js';

type Event = 'succeed' | 'fail' | 'timeout' | 'resume';

/**
 * What the state machine does on an event at the current step: a success completes it; a failure or a
 * timeout of a pre-copy step goes on without it; any other failure ends the migration in Error; a timeout
 * on the good path switches to the bad path (elsewhere it is a failure); a migrate call resumes a
 * migration in Error.
 */
function apply(record: MigrationRecord, event: Event, t: number): MigrationRecord {
  if (record.state === 'Error') return event === 'resume' ? resumeMigration(record, { now: at(t) }) : record;
  const step = resumePoint(record);
  if (record.state !== 'Running' || step === undefined) return record;
  const started = startStep(record, { step, now: at(t) });
  if ((event === 'fail' || event === 'timeout') && stepDefinition(step).bestEffort)
    return continueWithoutStep(started, { step, now: at(t + 0.5), outcome: 'failed', reason: `${event} at ${step}` });
  if (event === 'succeed' || event === 'resume')
    return completeStep(started, {
      step,
      now: at(t + 0.5),
      ...(step === 'persist-shootstate' ? { shootStateVersion: 3 } : {}),
    });
  if (event === 'timeout' && record.path === 'good' && stepDefinition(step).phase === 'good')
    return switchToBadPath(started, { failedStep: step, reason: 'States.Timeout', now: at(t + 0.5) });
  return failStep(started, { step, now: at(t + 0.5), message: `${event} at ${step}` });
}

const scenarios = fc.record({
  path: fc.constantFrom('good', 'bad') as fc.Arbitrary<'good' | 'bad'>,
  hibernated: fc.boolean(),
  events: fc.array(fc.constantFrom<Event>('succeed', 'succeed', 'succeed', 'fail', 'timeout', 'resume'), {
    maxLength: 60,
  }),
});

describe('migration record properties', () => {
  it('never repeats a succeeded step, never goes back to an earlier step, never loses progress', () => {
    fc.assert(
      fc.property(scenarios, ({ path, hibernated, events }) => {
        // Prepare
        let record = setPath(aRecord({ hibernated }), { path, reason: 'property', now: at(0) });
        let position = stepIndex(resumePoint(record)!);
        let progress = migrationProgress(record);

        events.forEach((event, i) => {
          // Act
          const before = record;
          record = apply(record, event, i + 1);

          // Assess
          for (const s of before.steps) {
            if (s.state === 'succeeded') expect(record.steps.find((x) => x.id === s.id)).toEqual(s);
          }
          const next = resumePoint(record);
          if (next !== undefined) {
            expect(record.steps.find((s) => s.id === next)?.state).not.toBe('succeeded');
            expect(stepIndex(next)).toBeGreaterThanOrEqual(position);
            position = stepIndex(next);
          }
          // The bad path runs the pre-copy, then starts at its entry; never a good-path step.
          if (record.path === 'bad' && next !== undefined && !PREPARE_STEPS.includes(next))
            expect(stepIndex(next)).toBeGreaterThanOrEqual(stepIndex(BAD_PATH_ENTRY));
          // No pre-copy step ever ends a migration in Error.
          if (record.state === 'Error') expect(PREPARE_STEPS).not.toContain(record.error?.step);
          if (record.switchedToBadPathAt !== undefined)
            expect(before.path === 'good' || before.switchedToBadPathAt !== undefined).toBe(true);
          const now = migrationProgress(record);
          expect(now).toBeGreaterThanOrEqual(progress);
          progress = now;
          if (record.state === 'Succeeded') expect(now).toBe(100);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('always reaches Succeeded when every failure is followed by a resume', () => {
    fc.assert(
      fc.property(scenarios, ({ path, hibernated, events }) => {
        // Prepare
        let record = setPath(aRecord({ hibernated }), { path, reason: 'property', now: at(0) });

        // Act
        events.forEach((event, i) => {
          record = apply(record, event, i + 1);
          if (record.state === 'Error') record = apply(record, 'resume', i + 1.7);
        });
        for (let t = 1000; record.state !== 'Succeeded' && t < 1100; t++) record = apply(record, 'succeed', t);

        // Assess
        expect(record.state).toBe('Succeeded');
        expect(record.shootState?.source).toBe(
          record.steps.find((s) => s.id === 'persist-shootstate')?.state === 'succeeded'
            ? 'migrated'
            : 'last-persisted',
        );
        if (hibernated)
          expect(
            record.steps
              .filter((s) => s.id === 'wait-final-snapshot' || PREPARE_STEPS.includes(s.id))
              .map((s) => s.state),
          ).toEqual(['skipped', 'skipped', 'skipped']);
      }),
      { numRuns: 300 },
    );
  });
});
