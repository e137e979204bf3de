import type { ActuatorSet } from '../extensions/actuator.js';
import { operateAll, type OperateOutcome } from '../extensions/driver.js';
import type { ExtensionOperationError } from '../extensions/errors.js';
import { annotate, MIGRATE_ORDER, RESTORE_ORDER, type ExtensionResource } from '../extensions/resource.js';
import type { BlobStore } from './blob-store.js';
import { applyShootState, collectShootState } from './collect.js';
import { packShootState, unpackShootState } from './pack.js';
import type { PackedShootState, ShootRef } from './types.js';

export interface MigrateExtensionsOptions {
  shoot: ShootRef;
  resources: readonly ExtensionResource[];
  actuators: ActuatorSet;
  /** Where states above the threshold go (the garden's state bucket). */
  blobs: BlobStore;
  seed: string;
  now: () => Date;
  inlineBudgetBytes?: number;
  signal?: AbortSignal;
}

export type MigrateExtensionsOutcome =
  | { ok: true; resources: ExtensionResource[]; outcomes: OperateOutcome[]; shootState: PackedShootState }
  | { ok: false; resources: ExtensionResource[]; outcomes: OperateOutcome[]; error: ExtensionOperationError };

/**
 * What a seed agent does for a `migrate` command: annotate every extension resource with `migrate`, run
 * the driver in MIGRATE_ORDER, then collect and pack the ShootState. Resources migrated by an earlier
 * attempt are skipped by the driver and collected again, so a repeated command answers the same state.
 * On failure nothing is collected; the annotations stay for the retry.
 */
export async function migrateExtensions(options: MigrateExtensionsOptions): Promise<MigrateExtensionsOutcome> {
  const migrated = (r: ExtensionResource) =>
    r.status.lastOperation?.type === 'Migrate' && r.status.lastOperation.state === 'Succeeded';
  const annotated = options.resources.map((r) => (migrated(r) ? r : annotate(r, 'migrate')));
  const result = await operateAll({
    resources: annotated,
    actuators: options.actuators,
    now: options.now,
    order: MIGRATE_ORDER,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (result.error) return { ok: false, resources: result.resources, outcomes: result.outcomes, error: result.error };
  const state = collectShootState({
    shoot: options.shoot,
    resources: result.resources,
    now: options.now(),
    seed: options.seed,
    after: 'migrate',
  });
  const shootState = await packShootState({
    state,
    blobs: options.blobs,
    ...(options.inlineBudgetBytes === undefined ? {} : { inlineBudgetBytes: options.inlineBudgetBytes }),
  });
  return { ok: true, resources: result.resources, outcomes: result.outcomes, shootState };
}

export interface RestoreExtensionsOptions {
  shootState: PackedShootState;
  blobs: BlobStore;
  actuators: ActuatorSet;
  now: () => Date;
  /** The resources the destination creates from the shoot spec; default: those the ShootState names. */
  desired?: readonly ExtensionResource[];
  signal?: AbortSignal;
}

/**
 * What a destination agent does for the extensions part of a `restore` command: read the blobs back
 * (sha256-verified), put each state onto its resource with the `restore` annotation, and run the driver
 * in RESTORE_ORDER. A resource whose restore fails keeps its annotation; pass the returned resources to
 * the next attempt instead of the ShootState again, so that finished restores are not repeated.
 */
export async function restoreExtensions(options: RestoreExtensionsOptions) {
  const state = await unpackShootState({ state: options.shootState, blobs: options.blobs });
  const resources = applyShootState({ state, ...(options.desired ? { resources: options.desired } : {}) });
  return operateAll({
    resources,
    actuators: options.actuators,
    now: options.now,
    order: RESTORE_ORDER,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
