import type { LastOperation } from '../model/common.js';
import type { ActuatorResult, ActuatorSet } from './actuator.js';
import { ActuatorMissingError, ExtensionOperationError } from './errors.js';
import {
  extensionId,
  requestedOperation,
  withoutOperationAnnotation,
  type ExtensionResource,
  type ExtensionStatus,
} from './resource.js';

/** What the driver does with a resource, decided from its annotation, deletion mark and status alone. */
export type DriverAction = 'reconcile' | 'migrate' | 'restore' | 'delete' | 'skip';

export interface DriverDecision {
  action: DriverAction;
  /** Why, in words, for logs and the command's answer. */
  reason: string;
}

/**
 * Gardener's generic reconciler dispatch, in its order:
 * 1. a resource whose last operation was a successful migrate is left alone, unless a restore is asked
 *    for: the source seed must never reconcile (recreate) what it handed over, and deleting it there
 *    only drops the object, never the external resources;
 * 2. `migrate` wins over a deletion in progress (a migrating shoot's resources may already be deleting);
 * 3. a deletion; 4. `restore`; 5. otherwise a reconcile, unless the spec's generation was already acted
 *    on successfully and no reconcile was asked for.
 */
export function decide(resource: ExtensionResource): DriverDecision {
  const operation = requestedOperation(resource);
  const last = resource.status.lastOperation;
  const migrated = last?.type === 'Migrate' && last.state === 'Succeeded';
  if (migrated && operation !== 'restore') {
    return {
      action: 'skip',
      reason: resource.deletionTimestamp
        ? 'migrated away: dropped without deleting external resources'
        : 'migrated away: not reconciled here any more',
    };
  }
  if (operation === 'migrate') return { action: 'migrate', reason: 'operation annotation migrate' };
  if (resource.deletionTimestamp !== undefined)
    return { action: 'delete', reason: `deletion requested at ${resource.deletionTimestamp}` };
  if (operation === 'restore') return { action: 'restore', reason: 'operation annotation restore' };
  const upToDate =
    resource.status.observedGeneration === resource.generation && last?.state === 'Succeeded' && last.type !== 'Delete';
  if (operation !== 'reconcile' && upToDate)
    return { action: 'skip', reason: `generation ${resource.generation} already reconciled` };
  return {
    action: 'reconcile',
    reason:
      operation === 'reconcile'
        ? 'operation annotation reconcile'
        : `generation ${resource.generation} not yet reconciled`,
  };
}

export interface OperateOptions {
  resource: ExtensionResource;
  actuators: ActuatorSet;
  now: Date;
  signal?: AbortSignal;
}

export interface OperateOutcome {
  action: DriverAction;
  reason: string;
  /** The resource after the operation; undefined when it is gone (deleted, or dropped after a migrate). */
  resource: ExtensionResource | undefined;
  /** Set when the actuator failed; the resource then carries `lastOperation.state = Error`. */
  error?: ExtensionOperationError;
}

type OperationType = LastOperation['type'];

/**
 * The one generic driver for every extension kind: decides the operation, calls the kind's actuator and
 * owns the `gardener.cloud/operation` annotation and `status` around it.
 *
 * - reconcile removes a `reconcile` annotation at the START, before the actuator runs (a failure is
 *   retried by the next reconcile, not by the annotation);
 * - migrate and restore remove their annotation only at the END of a success; on failure it stays, so
 *   that the next attempt repeats the same operation;
 * - migrate saves the actuator's `state` and `resources` into `status` and leaves external resources alone;
 * - restore hands the actuator the saved state (restored from the ShootState beforehand).
 *
 * Actuator failures do not throw: they are recorded in `lastOperation` and returned as `error`, as a
 * controller records them in status. A missing actuator throws (a misconfigured runtime).
 */
export async function operate(options: OperateOptions): Promise<OperateOutcome> {
  const { resource, now } = options;
  const { action, reason } = decide(resource);
  if (action === 'skip') return { action, reason, resource: resource.deletionTimestamp ? undefined : resource };

  const actuator = options.actuators[resource.kind];
  if (actuator === undefined) throw new ActuatorMissingError(resource.kind);

  const type = operationType(action, resource);
  // The reconcile annotation is consumed when the reconcile starts; the others only when they succeed.
  const started = action === 'reconcile' ? withoutOperationAnnotation(resource) : resource;
  const processing = withLastOperation(started, {
    type,
    state: 'Processing',
    progress: 0,
    description: `${describe(type)} ${extensionId(resource)}`,
    lastUpdateTime: now.toISOString(),
  });
  const input = { resource: processing, ...(options.signal ? { signal: options.signal } : {}) };

  let result: ActuatorResult | undefined;
  try {
    if (action === 'delete') await actuator.delete(input);
    else if (action === 'migrate') result = await actuator.migrate(input);
    else if (action === 'restore') result = await actuator.restore(input);
    else result = await actuator.reconcile(input);
  } catch (cause) {
    const message = `${describe(type)} ${extensionId(resource)} in ${resource.namespace} failed: ${cause instanceof Error ? cause.message : String(cause)}`;
    const error = new ExtensionOperationError(
      message,
      { kind: resource.kind, name: resource.name, namespace: resource.namespace, operation: action },
      { cause },
    );
    const failed = withLastOperation(processing, {
      type,
      state: 'Error',
      progress: 0,
      description: message,
      lastUpdateTime: now.toISOString(),
    });
    return { action, reason, resource: failed, error };
  }

  if (action === 'delete') return { action, reason, resource: undefined };
  const done = action === 'reconcile' ? processing : withoutOperationAnnotation(processing);
  const status: ExtensionStatus = {
    ...done.status,
    ...savedState(done.status, result),
    observedGeneration: resource.generation,
    lastOperation: {
      type,
      state: 'Succeeded',
      progress: 100,
      description: `${describe(type)} ${extensionId(resource)} succeeded`,
      lastUpdateTime: now.toISOString(),
    },
  };
  return { action, reason, resource: { ...done, status } };
}

/** The actuator's state and resources replace the saved ones; an actuator that returns none keeps them. */
function savedState(
  current: ExtensionStatus,
  result: ActuatorResult | undefined,
): Pick<ExtensionStatus, 'state' | 'resources'> {
  const state = result?.state !== undefined ? result.state : current.state;
  const resources = result?.resources !== undefined ? result.resources : current.resources;
  return { ...(state === undefined ? {} : { state }), ...(resources === undefined ? {} : { resources }) };
}

function operationType(action: Exclude<DriverAction, 'skip'>, resource: ExtensionResource): OperationType {
  if (action === 'migrate') return 'Migrate';
  if (action === 'restore') return 'Restore';
  if (action === 'delete') return 'Delete';
  const last = resource.status.lastOperation;
  // Gardener's rule: Create until the first create succeeded, Reconcile afterwards.
  return last === undefined || (last.type === 'Create' && last.state !== 'Succeeded') ? 'Create' : 'Reconcile';
}

function describe(type: OperationType): string {
  return {
    Create: 'creating',
    Reconcile: 'reconciling',
    Hibernate: 'hibernating',
    Wake: 'waking',
    Migrate: 'migrating',
    Restore: 'restoring',
    Delete: 'deleting',
  }[type];
}

function withLastOperation(resource: ExtensionResource, lastOperation: LastOperation): ExtensionResource {
  return { ...resource, status: { ...resource.status, lastOperation } };
}

export interface OperateAllOptions {
  resources: readonly ExtensionResource[];
  actuators: ActuatorSet;
  now: () => Date;
  /** The kind order (RESTORE_ORDER for reconcile and restore, MIGRATE_ORDER for migrate and delete). */
  order: readonly ExtensionResource['kind'][];
  signal?: AbortSignal;
}

export interface OperateAllOutcome {
  /** Every resource after its operation (the ones that are gone left out), in the given order. */
  resources: ExtensionResource[];
  outcomes: OperateOutcome[];
  /** The first failure; the resources after it in the order were not touched. */
  error?: ExtensionOperationError;
}

/**
 * Operates every resource, one kind after the other in `order`; stops at the first failure, as a
 * flow whose later steps depend on the earlier ones. The untouched resources are returned unchanged, so
 * their annotations are still there for the next attempt.
 */
export async function operateAll(options: OperateAllOptions): Promise<OperateAllOutcome> {
  const rank = (kind: ExtensionResource['kind']) => {
    const at = options.order.indexOf(kind);
    return at < 0 ? options.order.length : at;
  };
  const sorted = [...options.resources].sort(
    (a, b) => rank(a.kind) - rank(b.kind) || extensionId(a).localeCompare(extensionId(b)),
  );
  const out: ExtensionResource[] = [];
  const outcomes: OperateOutcome[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const resource = sorted[i]!;
    const outcome = await operate({
      resource,
      actuators: options.actuators,
      now: options.now(),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    outcomes.push(outcome);
    if (outcome.resource) out.push(outcome.resource);
    if (outcome.error) return { resources: [...out, ...sorted.slice(i + 1)], outcomes, error: outcome.error };
  }
  return { resources: out, outcomes };
}
