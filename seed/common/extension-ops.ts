import type { CommandOf } from '../../core/commands/index.js';
import {
  MIGRATE_ORDER,
  operateAll,
  RESTORE_ORDER,
  shootExtensions,
  type ActuatorSet,
  type ExtensionResource,
  type OperateOutcome,
} from '../../core/extensions/index.js';
import {
  BlobIntegrityError,
  BlobNotFoundError,
  BlobStoreError,
  migrateExtensions,
  restoreExtensions,
  type BlobStore,
  type PackedShootState,
} from '../../core/shootstate/index.js';
import { SnapshotStoreError } from '../../core/snapshots/index.js';
import { AgentCommandError } from '../agent/errors.js';

/**
 * The extension part of the seed commands, shared by every runtime (lifted from the local runtime):
 * which resources a create or reconcile wants, migrate into a ShootState, restore from one. Each returns
 * the resources as they are after the operation, also when it failed (the annotation stays for the
 * retry), so that the runtime keeps them before it throws `error`.
 */

export type ExtensionOutcome = {
  kind: ExtensionResource['kind'];
  name: string;
  purpose?: string;
  action: OperateOutcome['action'];
};

export interface ExtensionStep<R> {
  resources: ExtensionResource[];
  result?: R;
  error?: AgentCommandError;
}

type ControlPlaneSpec = CommandOf<'reconcile'>['controlPlane'];
interface Common {
  actuators: ActuatorSet;
  now: () => Date;
  signal?: AbortSignal;
}

/** A create or reconcile: the extensions the spec lists, or the ones there are, or the runtime's defaults. */
export async function reconcileExtensions(
  options: Common & { technicalID: string; spec: ControlPlaneSpec; current: readonly ExtensionResource[] },
): Promise<ExtensionStep<ExtensionOutcome[]>> {
  const { technicalID: id, spec } = options;
  const desired = spec.extensions?.map((e) => ({
    apiVersion: 'extensions.gardenless.io/v1' as const,
    kind: e.kind,
    name: e.name,
    namespace: id,
    ...(e.purpose === undefined ? {} : { purpose: e.purpose }),
    generation: 1,
    spec: e.spec,
    status: {},
    annotations: {},
  }));
  const resources =
    desired ??
    (options.current.length > 0
      ? [...options.current]
      : shootExtensions({ technicalID: id, backupBucket: spec.backup.bucket }));
  const outcome = await operateAll({
    resources,
    actuators: options.actuators,
    now: options.now,
    order: RESTORE_ORDER,
    ...signalOf(options),
  });
  return {
    resources: outcome.resources,
    result: outcomesOf(outcome.outcomes),
    ...(outcome.error ? { error: extensionFailure(outcome.error) } : {}),
  };
}

/** The good path's migrate: every extension migrated, the ShootState collected (large states to the state bucket). */
export async function migrateShootExtensions(
  options: Common & {
    command: CommandOf<'migrate'>;
    current: readonly ExtensionResource[];
    blobStore: (bucket: string) => BlobStore;
    seed: string;
  },
): Promise<ExtensionStep<{ shootState: PackedShootState; extensions: ExtensionOutcome[] }>> {
  const { command } = options;
  const result = await guardStores(() =>
    migrateExtensions({
      shoot: command.shoot,
      resources: [...options.current],
      actuators: options.actuators,
      blobs: options.blobStore(command.stateBucket),
      seed: options.seed,
      now: options.now,
      ...(command.inlineBudgetBytes === undefined ? {} : { inlineBudgetBytes: command.inlineBudgetBytes }),
      ...signalOf(options),
    }),
  );
  if (!result.ok) return { resources: result.resources, error: extensionFailure(result.error) };
  return {
    resources: result.resources,
    result: { shootState: result.shootState, extensions: outcomesOf(result.outcomes) },
  };
}

/**
 * A restore's extension part. Resources whose restore failed before keep their annotation: the retry
 * continues from them, not from the ShootState again.
 */
export async function restoreShootExtensions(
  options: Common & {
    extensions: NonNullable<CommandOf<'restore'>['extensions']>;
    current: readonly ExtensionResource[];
    blobStore: (bucket: string) => BlobStore;
  },
): Promise<ExtensionStep<ExtensionOutcome[]>> {
  const { shootState, stateBucket } = options.extensions;
  const pending = options.current.filter((e) => e.annotations['gardener.cloud/operation'] === 'restore');
  const outcome = await guardStores(async () =>
    pending.length > 0
      ? operateAll({
          resources: options.current,
          actuators: options.actuators,
          now: options.now,
          order: RESTORE_ORDER,
          ...signalOf(options),
        })
      : restoreExtensions({
          shootState,
          blobs: options.blobStore(stateBucket),
          actuators: options.actuators,
          now: options.now,
          ...signalOf(options),
        }),
  );
  return {
    resources: outcome.resources,
    result: outcomesOf(outcome.outcomes),
    ...(outcome.error ? { error: extensionFailure(outcome.error) } : {}),
  };
}

/** A shoot's deletion: every extension resource deleted with what it manages, in reverse order of creation. */
export async function deleteShootExtensions(
  options: Common & { current: readonly ExtensionResource[] },
): Promise<ExtensionStep<ExtensionOutcome[]>> {
  const at = options.now().toISOString();
  const resources = options.current.map((e) => (e.deletionTimestamp ? e : { ...e, deletionTimestamp: at }));
  const outcome = await operateAll({
    resources,
    actuators: options.actuators,
    now: options.now,
    order: MIGRATE_ORDER,
    ...signalOf(options),
  });
  return {
    resources: outcome.resources,
    result: outcomesOf(outcome.outcomes),
    ...(outcome.error ? { error: extensionFailure(outcome.error) } : {}),
  };
}

export function outcomesOf(outcomes: readonly OperateOutcome[]): ExtensionOutcome[] {
  return outcomes.flatMap((o) =>
    o.resource
      ? [
          {
            kind: o.resource.kind,
            name: o.resource.name,
            ...(o.resource.purpose === undefined ? {} : { purpose: o.resource.purpose }),
            action: o.action,
          },
        ]
      : [],
  );
}

export function extensionFailure(error: { message: string; details?: unknown }): AgentCommandError {
  return new AgentCommandError(
    'ExtensionOperationFailed',
    error.message,
    (error.details ?? {}) as Record<string, unknown>,
    { cause: error },
  );
}

/** Blob and bucket failures are the protocol's retryable "unavailable" answers; everything else is the caller's. */
export async function guardStores<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (cause) {
    if (cause instanceof BlobStoreError || cause instanceof BlobIntegrityError || cause instanceof BlobNotFoundError) {
      throw new AgentCommandError(
        'ShootStateUnavailable',
        `the state bucket failed: ${cause.message}`,
        { reason: cause.name },
        { cause },
      );
    }
    if (cause instanceof SnapshotStoreError)
      throw new AgentCommandError('SnapshotsUnavailable', cause.message, undefined, { cause });
    throw cause;
  }
}

function signalOf(options: { signal?: AbortSignal }): { signal?: AbortSignal } {
  return options.signal ? { signal: options.signal } : {};
}
