import { describe, expect, it } from 'vitest';
import {
  BAD_PATH_ENTRY,
  defineFlow,
  FlowDefinitionError,
  GOOD_PATH_STEPS,
  MIGRATION_STEP_IDS,
  MIGRATION_STEPS,
  PREPARE_STEPS,
  stepDefinition,
  stepIndex,
} from '../../../core/migration/index.js';

describe('the migration flow', () => {
  it('has the stable step ids in execution order, each depending on an earlier one', () => {
    // Assess
    expect(MIGRATION_STEPS.map((s) => s.id)).toEqual([...MIGRATION_STEP_IDS]);
    expect(MIGRATION_STEP_IDS).toEqual([
      'admit-and-lock',
      'choose-path',
      'pre-copy-snapshots',
      'restore-etcd-ahead',
      'migrate-extensions',
      'persist-shootstate',
      'survey-live',
      'own-live',
      'walk-live',
      'delete-owner-record',
      'wait-final-snapshot',
      'delete-source-control-plane',
      'set-owner-destination',
      'finish-live',
      'retire-source',
      'copy-snapshots',
      'restore-etcd',
      'restore-extensions',
      'switch-api-record',
      'finalize',
    ]);
    expect(GOOD_PATH_STEPS).toEqual([
      'migrate-extensions',
      'persist-shootstate',
      'delete-owner-record',
      'wait-final-snapshot',
      'delete-source-control-plane',
    ]);
    expect(PREPARE_STEPS).toEqual(['pre-copy-snapshots', 'restore-etcd-ahead']);
  });

  it('pre-copies on both paths, right after choose-path and before anything changes ownership, each step best effort and skipped for a hibernated shoot', () => {
    // Assess
    expect(PREPARE_STEPS.map(stepIndex)).toEqual([stepIndex('choose-path') + 1, stepIndex('choose-path') + 2]);
    expect(Math.max(...PREPARE_STEPS.map(stepIndex))).toBeLessThan(
      Math.min(stepIndex(BAD_PATH_ENTRY), ...GOOD_PATH_STEPS.map(stepIndex)),
    );
    // The survey of a live walk too: it changes nothing, so the good path can do its work; and the retirement
    // of a lost source, whose own agent deletes what is left once it is back.
    expect(MIGRATION_STEPS.filter((s) => s.bestEffort !== undefined).map((s) => s.id)).toEqual([
      ...PREPARE_STEPS,
      'survey-live',
      'retire-source',
    ]);
    expect(stepDefinition('pre-copy-snapshots')).toMatchObject({
      actor: 'garden',
      skipIf: ['hibernated', 'livePath'],
      operation: 'Migrate',
    });
    expect(stepDefinition('pre-copy-snapshots').command).toBeUndefined();
    expect(stepDefinition('restore-etcd-ahead')).toMatchObject({
      actor: 'destination',
      command: 'restore',
      dependencies: ['pre-copy-snapshots'],
      skipIf: ['hibernated', 'livePath'],
      operation: 'Migrate',
    });
    expect(stepDefinition('restore-etcd-ahead').bestEffort?.without).toMatch(/restore-etcd restores etcd in full/);
  });

  it('pairs the final-snapshot wait with the action that causes it, and sends commands only from seed steps', () => {
    // Assess
    expect(MIGRATION_STEPS.filter((s) => s.kind === 'wait').map((s) => [s.id, s.waitsFor])).toEqual([
      ['wait-final-snapshot', 'delete-owner-record'],
    ]);
    for (const s of MIGRATION_STEPS) expect(s.command === undefined).toBe(s.actor === 'garden');
    // The source acts on the good path, and on the live path only once its members left (retire-source).
    expect(MIGRATION_STEPS.filter((s) => s.actor === 'source').map((s) => [s.id, s.phase])).toEqual([
      ['migrate-extensions', 'good'],
      ['delete-source-control-plane', 'good'],
      ['retire-source', 'live'],
    ]);
  });

  it('walks on the live path only, and skips there every step that moves etcd as snapshots', () => {
    const live = MIGRATION_STEPS.filter((s) => s.phase === 'live');
    expect(live.map((s) => s.id)).toEqual(['survey-live', 'own-live', 'walk-live', 'finish-live', 'retire-source']);
    for (const s of live) expect(s.skipIf).toEqual(['snapshotPath']);
    expect(MIGRATION_STEPS.filter((s) => s.skipIf.includes('livePath')).map((s) => s.id)).toEqual([
      'pre-copy-snapshots',
      'restore-etcd-ahead',
      'delete-owner-record',
      'wait-final-snapshot',
      'delete-source-control-plane',
      'copy-snapshots',
      'restore-etcd',
    ]);
    // The rounds of the walk are commands to the destination; the owner record between them is the garden's.
    expect(live.map((s) => [s.id, s.actor, s.command])).toEqual([
      ['survey-live', 'destination', 'live-walk'],
      ['own-live', 'garden', undefined],
      ['walk-live', 'destination', 'live-walk'],
      ['finish-live', 'destination', 'live-walk'],
      ['retire-source', 'source', 'delete-control-plane'],
    ]);
  });

  it.each([
    [
      'a duplicate id',
      [
        { id: 'a', dependencies: [], weight: 50 },
        { id: 'a', dependencies: [], weight: 50 },
      ],
      /defined twice/,
    ],
    ['an unknown dependency', [{ id: 'a', dependencies: ['x'], weight: 100 }], /unknown step x/],
    [
      'a dependency that comes later',
      [
        { id: 'a', dependencies: ['b'], weight: 50 },
        { id: 'b', dependencies: [], weight: 50 },
      ],
      /comes later/,
    ],
    ['weights that do not add up to 100', [{ id: 'a', dependencies: [], weight: 99 }], /add up to 99/],
  ])('refuses %s when the flow is built', (_name, steps, message) => {
    // Act / Assess
    expect(() => defineFlow(steps)).toThrow(FlowDefinitionError);
    expect(() => defineFlow(steps)).toThrow(message);
  });
});
