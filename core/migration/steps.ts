import type { CommandType } from '../commands/schema.js';
import { FlowDefinitionError } from './errors.js';

export const MIGRATION_STEP_IDS = [
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
] as const;
export type MigrationStepId = (typeof MIGRATION_STEP_IDS)[number];

/** Named skip conditions; each is a boolean computed once (see `skipGuards`), never re-derived inside a step. */
export type SkipGuardName = 'badPath' | 'livePath' | 'snapshotPath' | 'noFinalSnapshot' | 'hibernated';

export interface MigrationStepDefinition {
  /** Stable: stored in records, used in command ids, state names and the API. Never derived from the title. */
  readonly id: MigrationStepId;
  /** What an operator reads ("Migrating extensions"). */
  readonly title: string;
  /**
   * `admit`: before any change; `prepare`: on both paths, before the owner record changes, while the source
   * may still serve (the pre-copy); `good`: only on the good path, against the source; `restore`: on both
   * paths, from the owner change on; `live`: only on the live path (docs/design.md section 5, "The live path").
   */
  readonly phase: 'admit' | 'prepare' | 'good' | 'live' | 'restore';
  /** An action changes something; a wait only observes until its action took effect. */
  readonly kind: 'action' | 'wait';
  /** The action a wait belongs to ("Deleting the owner record" / "Waiting for the final snapshot"). */
  readonly waitsFor?: MigrationStepId;
  /** Who does the work: the garden itself (Lambdas), or a seed agent through a command. */
  readonly actor: 'garden' | 'source' | 'destination';
  readonly command?: CommandType;
  readonly dependencies: readonly MigrationStepId[];
  readonly skipIf: readonly SkipGuardName[];
  /**
   * A step the migration can do without: any failure of it is recorded (the step `failed`, the reason in its
   * message, the migration still Running) and the flow goes on as if it had never run; `without` says what
   * does its work then.
   */
  readonly bestEffort?: { readonly without: string };
  /** Share of the progress (all weights add up to 100). */
  readonly weight: number;
  /** The shoot's `lastOperation.type` while this step runs. */
  readonly operation: 'Migrate' | 'Restore';
}

/**
 * Builds a flow as Gardener's `flow.Graph` does: a duplicate id, an unknown dependency or one that is not
 * earlier in the list (a cycle, or an order that cannot run) fails here, when the module loads, not
 * halfway through a migration.
 */
export function defineFlow<T extends { id: string; dependencies: readonly string[]; weight: number }>(
  steps: readonly T[],
): readonly T[] {
  const seen = new Set<string>();
  for (const step of steps) {
    if (seen.has(step.id)) throw new FlowDefinitionError(`step ${step.id} is defined twice`);
    for (const dependency of step.dependencies) {
      if (!seen.has(dependency)) {
        const known = steps.some((s) => s.id === dependency);
        throw new FlowDefinitionError(
          known
            ? `step ${step.id} depends on ${dependency}, which comes later`
            : `step ${step.id} depends on unknown step ${dependency}`,
        );
      }
    }
    seen.add(step.id);
  }
  const total = steps.reduce((sum, s) => sum + s.weight, 0);
  if (steps.length > 0 && total !== 100) throw new FlowDefinitionError(`step weights add up to ${total}, not 100`);
  return steps;
}

/** The migrate-shoot flow (docs/design.md section 5), in execution order. */
export const MIGRATION_STEPS: readonly MigrationStepDefinition[] = defineFlow<MigrationStepDefinition>([
  {
    id: 'admit-and-lock',
    title: 'Admitting the migration and locking the shoot',
    phase: 'admit',
    kind: 'action',
    actor: 'garden',
    dependencies: [],
    skipIf: [],
    weight: 2,
    operation: 'Migrate',
  },
  {
    id: 'choose-path',
    title: 'Choosing the good or the bad path',
    phase: 'admit',
    kind: 'action',
    actor: 'garden',
    dependencies: ['admit-and-lock'],
    skipIf: [],
    weight: 2,
    operation: 'Migrate',
  },
  {
    id: 'pre-copy-snapshots',
    title: 'Pre-copying the etcd snapshots to the destination bucket before the owner changes',
    phase: 'prepare',
    kind: 'action',
    actor: 'garden',
    dependencies: ['choose-path'],
    skipIf: ['hibernated', 'livePath'],
    weight: 8,
    operation: 'Migrate',
    bestEffort: {
      without: 'copy-snapshots copies everything after the owner change, and restore-etcd restores etcd in full',
    },
  },
  {
    id: 'restore-etcd-ahead',
    title: 'Restoring etcd ahead in the destination seed (not serving yet)',
    phase: 'prepare',
    kind: 'action',
    actor: 'destination',
    command: 'restore',
    dependencies: ['pre-copy-snapshots'],
    skipIf: ['hibernated', 'livePath'],
    weight: 6,
    operation: 'Migrate',
    bestEffort: { without: 'restore-etcd restores etcd in full after the owner change' },
  },
  {
    id: 'migrate-extensions',
    title: 'Migrating the extensions in the source seed',
    phase: 'good',
    kind: 'action',
    actor: 'source',
    command: 'migrate',
    dependencies: ['restore-etcd-ahead'],
    skipIf: ['badPath'],
    weight: 12,
    operation: 'Migrate',
  },
  {
    id: 'persist-shootstate',
    title: 'Persisting the ShootState',
    phase: 'good',
    kind: 'action',
    actor: 'garden',
    dependencies: ['migrate-extensions'],
    skipIf: ['badPath'],
    weight: 5,
    operation: 'Migrate',
  },
  {
    id: 'survey-live',
    title: "Reading the etcd cluster the live walk moves from the source's members",
    phase: 'live',
    kind: 'action',
    actor: 'destination',
    command: 'live-walk',
    dependencies: ['persist-shootstate'],
    skipIf: ['snapshotPath'],
    weight: 2,
    operation: 'Migrate',
    bestEffort: {
      without:
        'the good path: the source fences and takes its final snapshot, and the destination restores from the snapshots',
    },
  },
  {
    id: 'own-live',
    title: 'Letting the members of the walking etcd cluster serve on both seeds (owner record)',
    phase: 'live',
    kind: 'action',
    actor: 'garden',
    dependencies: ['survey-live'],
    skipIf: ['snapshotPath'],
    weight: 2,
    operation: 'Migrate',
  },
  {
    id: 'walk-live',
    title: "Walking the etcd cluster to the destination's members under raft",
    phase: 'live',
    kind: 'action',
    actor: 'destination',
    command: 'live-walk',
    dependencies: ['own-live'],
    skipIf: ['snapshotPath'],
    weight: 6,
    operation: 'Migrate',
  },
  {
    id: 'delete-owner-record',
    title: 'Deleting the owner record (the source fences itself)',
    phase: 'good',
    kind: 'action',
    actor: 'garden',
    dependencies: ['walk-live'],
    skipIf: ['badPath', 'livePath'],
    weight: 4,
    operation: 'Migrate',
  },
  {
    id: 'wait-final-snapshot',
    title: 'Waiting for the final snapshot in the source bucket',
    phase: 'good',
    kind: 'wait',
    waitsFor: 'delete-owner-record',
    actor: 'garden',
    dependencies: ['delete-owner-record'],
    skipIf: ['badPath', 'livePath', 'noFinalSnapshot'],
    weight: 8,
    operation: 'Migrate',
  },
  {
    id: 'delete-source-control-plane',
    title: 'Deleting the control plane in the source seed (backups and external resources kept)',
    phase: 'good',
    kind: 'action',
    actor: 'source',
    command: 'delete-control-plane',
    dependencies: ['wait-final-snapshot'],
    skipIf: ['badPath', 'livePath'],
    weight: 8,
    operation: 'Migrate',
  },
  {
    id: 'set-owner-destination',
    title: 'Setting the owner record to the destination',
    phase: 'restore',
    kind: 'action',
    actor: 'garden',
    dependencies: ['delete-source-control-plane'],
    skipIf: [],
    weight: 5,
    operation: 'Restore',
  },
  {
    id: 'finish-live',
    title: "Starting the control plane on the destination's members",
    phase: 'live',
    kind: 'action',
    actor: 'destination',
    command: 'live-walk',
    dependencies: ['set-owner-destination'],
    skipIf: ['snapshotPath'],
    weight: 4,
    operation: 'Restore',
  },
  {
    id: 'retire-source',
    title: 'Deleting what is left of the control plane in the source seed (backups and external resources kept)',
    phase: 'live',
    kind: 'action',
    actor: 'source',
    command: 'delete-control-plane',
    dependencies: ['finish-live'],
    skipIf: ['snapshotPath'],
    bestEffort: {
      without:
        "the source's agent deletes what is left once it is back: it hosts a plane the owner record gives another seed (the leftover rule)",
    },
    weight: 2,
    operation: 'Restore',
  },
  {
    id: 'copy-snapshots',
    title: 'Copying the etcd snapshots to the destination bucket',
    phase: 'restore',
    kind: 'action',
    actor: 'garden',
    dependencies: ['retire-source'],
    skipIf: ['livePath'],
    weight: 6,
    operation: 'Restore',
  },
  {
    id: 'restore-etcd',
    title: 'Restoring etcd in the destination seed',
    phase: 'restore',
    kind: 'action',
    actor: 'destination',
    command: 'restore',
    dependencies: ['copy-snapshots'],
    skipIf: ['livePath'],
    weight: 6,
    operation: 'Restore',
  },
  {
    id: 'restore-extensions',
    title: 'Restoring the extensions from the ShootState',
    phase: 'restore',
    kind: 'action',
    actor: 'destination',
    command: 'restore',
    dependencies: ['restore-etcd'],
    skipIf: [],
    weight: 8,
    operation: 'Restore',
  },
  {
    id: 'switch-api-record',
    title: 'Switching the API record to the destination once it serves',
    phase: 'restore',
    kind: 'action',
    actor: 'garden',
    dependencies: ['restore-extensions'],
    skipIf: [],
    weight: 2,
    operation: 'Restore',
  },
  {
    id: 'finalize',
    title: 'Setting the shoot onto the destination and releasing the lock',
    phase: 'restore',
    kind: 'action',
    actor: 'garden',
    dependencies: ['switch-api-record'],
    skipIf: [],
    weight: 2,
    operation: 'Restore',
  },
]);

const BY_ID = new Map(MIGRATION_STEPS.map((s, i) => [s.id, { step: s, index: i }]));

export function stepDefinition(id: MigrationStepId): MigrationStepDefinition {
  return BY_ID.get(id)!.step;
}

export function stepIndex(id: MigrationStepId): number {
  return BY_ID.get(id)!.index;
}

export function isMigrationStepId(value: unknown): value is MigrationStepId {
  return typeof value === 'string' && BY_ID.has(value as MigrationStepId);
}

export const GOOD_PATH_STEPS: readonly MigrationStepId[] = MIGRATION_STEPS.filter((s) => s.phase === 'good').map(
  (s) => s.id,
);
/** The pre-copy: on both paths, right after choose-path, before anything changes ownership; each one best effort. */
export const PREPARE_STEPS: readonly MigrationStepId[] = MIGRATION_STEPS.filter((s) => s.phase === 'prepare').map(
  (s) => s.id,
);
/** Where the bad path starts, and where a switch from the good path re-enters the flow. */
export const BAD_PATH_ENTRY: MigrationStepId = 'set-owner-destination';
