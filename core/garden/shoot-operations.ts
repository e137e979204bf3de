import { AdmissionError, ConflictError } from '../errors.js';
import type { LastOperation } from '../model/common.js';
import { failureTolerance, type Shoot, type ShootOperation } from '../model/shoot.js';

/** Gardener's deletion confirmation: without it a shoot is not deleted. */
export const DELETION_CONFIRMATION_ANNOTATION = 'confirmation.gardener.cloud/deletion';

/** Commands sent for one operation before it is Failed (each failure before that is an Error, retried). */
export const MAX_OPERATION_ATTEMPTS = 5;

/** Seconds between attempts: 10, 20, 40, 80 (Gardener's reconciler backs off likewise). */
export function retryDelaySeconds(attempts: number): number {
  return 10 * 2 ** Math.max(0, Math.min(attempts - 1, 6));
}

export type ShootOperationType = ShootOperation['type'];

/**
 * Which lifecycle operation an update of a placed shoot needs on its seed: hibernation toggled is
 * Hibernate or Wake; anything else the control plane's layout depends on (the HA failure tolerance) is a
 * Reconcile; metadata and fields the seed never sees need none.
 */
export function operationForUpdate(previous: Shoot, next: Shoot): ShootOperationType | undefined {
  if (!previous.status.seedName) return undefined;
  const wasHibernated = previous.spec.hibernation?.enabled === true;
  const hibernated = next.spec.hibernation?.enabled === true;
  if (wasHibernated !== hibernated) return hibernated ? 'Hibernate' : 'Wake';
  if (failureTolerance(previous.spec) !== failureTolerance(next.spec)) return 'Reconcile';
  return undefined;
}

/** Whether a migration holds the shoot: lifecycle operations wait for it, deletion is refused. */
export function migrationRunning(shoot: Shoot): boolean {
  return (shoot.status.migration as { state?: string } | undefined)?.state === 'Running';
}

/**
 * Whether the shoot's Create was never sent to its seed (it waits to be dispatched, or for a migration):
 * then no control plane, owner record or snapshot exists anywhere, and a migration would have nothing to
 * move. Once the command was sent, a migration may start: the source's queue runs the migration's
 * commands after the Create, and a Create that answers after the shoot moved is dropped (`operationMoved`).
 */
export function createNotSent(shoot: Shoot): boolean {
  const op = shoot.status.operation;
  const last = shoot.status.lastOperation;
  return (
    op?.type === 'Create' &&
    op.attempts === 0 &&
    last?.type === 'Create' &&
    (last.state === 'Processing' || last.state === 'Pending')
  );
}

/**
 * Whether a migration moved the shoot away from the seed its operation was requested on. A Create is
 * then done (the migration restored the control plane on its new seed); any other operation is requested
 * again on the new seed: what it asks for (hibernation, the HA layout) is still wanted there.
 */
export function operationMoved(shoot: Shoot, op: ShootOperation): boolean {
  return op.seedName !== shoot.status.seedName;
}

/** The shoot without its operation: a migration moved it before its Create was dispatched or answered. */
export function operationDropped(shoot: Shoot): Shoot {
  const { operation: _dropped, ...status } = shoot.status;
  return { ...shoot, status };
}

/** Whether the shoot is being deleted (its deletion was confirmed and requested). */
export function deleting(shoot: Shoot): boolean {
  return shoot.metadata.deletionTimestamp !== undefined;
}

const describe: Record<ShootOperationType, (seed: string) => string> = {
  Create: (seed) => `Creating the control plane on seed ${seed}`,
  Reconcile: (seed) => `Reconciling the control plane on seed ${seed}`,
  Hibernate: (seed) => `Hibernating the control plane on seed ${seed} (full snapshot, etcd stopped, components at 0)`,
  Wake: (seed) => `Waking the control plane on seed ${seed}`,
  Delete: (seed) => `Deleting the control plane on seed ${seed}`,
};

/**
 * The shoot with a new operation requested on its seed: `lastOperation` Processing at 0 % and
 * `status.operation` naming it. A newer operation supersedes one still in flight (the seed's queue keeps
 * their commands in order, and the older one's results no longer write the shoot).
 */
export function withOperation(shoot: Shoot, options: { type: ShootOperationType; id: string; now: Date }): Shoot {
  const seedName = shoot.status.seedName;
  if (!seedName)
    throw new RangeError(
      `shoot ${shoot.metadata.project}/${shoot.metadata.name} has no seed to run ${options.type} on`,
    );
  const at = options.now.toISOString();
  const operation: ShootOperation = { id: options.id, type: options.type, seedName, attempts: 0, requestedAt: at };
  return {
    ...shoot,
    status: {
      ...shoot.status,
      operation,
      lastOperation: {
        type: options.type,
        state: 'Processing',
        progress: 0,
        description: describe[options.type](seedName),
        lastUpdateTime: at,
      },
    },
  };
}

/** A placed shoot's first operation; its id follows from the shoot's uid, so every retry of the placement names the same one. */
export function createOperation(shoot: Shoot, seedName: string, now: Date): ShootOperation {
  return { id: `create-${shoot.metadata.uid}`, type: 'Create', seedName, attempts: 0, requestedAt: now.toISOString() };
}

/** The operation the state machine was started for, unless a newer one (or none) is on the shoot now. */
export function currentOperation(shoot: Shoot | undefined, id: string): ShootOperation | undefined {
  const op = shoot?.status.operation;
  return op?.id === id ? op : undefined;
}

/** The next attempt is being sent: attempts counted, progress shown. */
export function attemptStarted(shoot: Shoot, now: Date): Shoot {
  const op = mustHaveOperation(shoot);
  const attempts = op.attempts + 1;
  const retry = attempts > 1 ? ` (attempt ${attempts} of ${MAX_OPERATION_ATTEMPTS})` : '';
  return progressed(
    shoot,
    { ...op, attempts },
    {
      state: 'Processing',
      progress: 50,
      description: `${describe[op.type](op.seedName)}: command sent to the seed agent${retry}`,
      now,
    },
  );
}

/** The agent answered: Succeeded at 100 %. */
export function operationSucceeded(shoot: Shoot, summary: string, now: Date): Shoot {
  const op = mustHaveOperation(shoot);
  const done: Record<ShootOperationType, string> = {
    Create: `Control plane created on seed ${op.seedName}`,
    Reconcile: `Control plane reconciled on seed ${op.seedName}`,
    Hibernate: `Control plane hibernated on seed ${op.seedName}`,
    Wake: `Control plane woken on seed ${op.seedName}`,
    Delete: `Control plane deleted from seed ${op.seedName}`,
  };
  return progressed(shoot, op, { state: 'Succeeded', progress: 100, description: `${done[op.type]}: ${summary}`, now });
}

/**
 * An attempt failed. Error (to be retried after `retryDelaySeconds`) while attempts remain, Failed after
 * the last: Gardener's distinction between an error the reconciler retries and one it gave up on.
 */
export function operationErrored(shoot: Shoot, message: string, now: Date): { shoot: Shoot; retryInSeconds?: number } {
  const op = mustHaveOperation(shoot);
  if (op.attempts >= MAX_OPERATION_ATTEMPTS) {
    return {
      shoot: progressed(shoot, op, {
        state: 'Failed',
        progress: 50,
        description: `${describe[op.type](op.seedName)} failed after ${op.attempts} attempts: ${message}`,
        now,
      }),
    };
  }
  const retryInSeconds = retryDelaySeconds(op.attempts);
  return {
    shoot: progressed(shoot, op, {
      state: 'Error',
      progress: 50,
      description: `${describe[op.type](op.seedName)}: attempt ${op.attempts} failed (${message}); retrying in ${retryInSeconds} s`,
      now,
    }),
    retryInSeconds,
  };
}

function progressed(
  shoot: Shoot,
  operation: ShootOperation,
  last: { state: LastOperation['state']; progress: number; description: string; now: Date },
): Shoot {
  return {
    ...shoot,
    status: {
      ...shoot.status,
      operation,
      lastOperation: {
        type: operation.type,
        state: last.state,
        progress: last.progress,
        description: last.description,
        lastUpdateTime: last.now.toISOString(),
      },
    },
  };
}

function mustHaveOperation(shoot: Shoot): ShootOperation {
  const op = shoot.status.operation;
  if (!op) throw new RangeError(`shoot ${shoot.metadata.project}/${shoot.metadata.name} has no operation`);
  return op;
}

/**
 * Deletion needs the confirmation annotation (Gardener's rule), no running migration (it moves the very
 * control plane being deleted), and is idempotent once requested.
 */
export function assertDeletable(shoot: Shoot): void {
  if (shoot.metadata.annotations?.[DELETION_CONFIRMATION_ANNOTATION] !== 'true') {
    throw new AdmissionError(
      `shoot "${shoot.metadata.project}/${shoot.metadata.name}" is not deleted without the annotation ${DELETION_CONFIRMATION_ANNOTATION}: "true"; set it (PATCH) and delete again`,
      { code: 'DeletionNotConfirmed', field: `metadata.annotations.${DELETION_CONFIRMATION_ANNOTATION}` },
    );
  }
  if (migrationRunning(shoot)) {
    throw new ConflictError(
      `shoot "${shoot.metadata.project}/${shoot.metadata.name}" is being migrated; delete it after the migration ends`,
      { code: 'MigrationInProgress' },
    );
  }
}
