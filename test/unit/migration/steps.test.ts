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
      'delete-owner-record',
      'wait-final-snapshot',
      'delete-source-control-plane',
      'set-owner-destination',
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
    expect(MIGRATION_STEPS.filter((s) => s.bestEffort !== undefined).map((s) => s.id)).toEqual([...PREPARE_STEPS]);
    expect(stepDefinition('pre-copy-snapshots')).toMatchObject({
      actor: 'garden',
      skipIf: ['hibernated'],
      operation: 'Migrate',
    });
    expect(stepDefinition('pre-copy-snapshots').command).toBeUndefined();
    expect(stepDefinition('restore-etcd-ahead')).toMatchObject({
      actor: 'destination',
      command: 'restore',
      dependencies: ['pre-copy-snapshots'],
      skipIf: ['hibernated'],
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
    expect(MIGRATION_STEPS.filter((s) => s.actor === 'source').every((s) => s.phase === 'good')).toBe(true);
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
