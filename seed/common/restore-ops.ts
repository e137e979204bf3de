import type { CommandOf, CommandResult, SeedCommand } from '../../core/commands/index.js';
import type { OwnerCheckResult } from '../../core/ownership/index.js';
import type { SnapshotStore } from '../../core/snapshots/index.js';
import { AgentCommandError, messageOf } from '../agent/errors.js';
import { summarizeRestore, type RestoreSummary } from '../agent/restore-check.js';

/**
 * The checks every runtime makes before a restore activates anything (lifted from the local runtime):
 * the owner record names this seed, the bucket is known, and the copied snapshots restore.
 */

/** A restore activates only on `owner` (the destination must never serve before the source is fenced). */
export async function assertOwner(options: {
  command: SeedCommand;
  seed: string;
  ownerCheck?: (shoot: SeedCommand['shoot']) => Promise<OwnerCheckResult>;
}): Promise<void> {
  if (!options.ownerCheck) return;
  const check = await options.ownerCheck(options.command.shoot);
  if (check !== 'owner') {
    throw new AgentCommandError(
      'NotOwner',
      `the owner record of ${options.command.shoot.technicalID} does not name seed ${options.seed} (${check}); not activating`,
    );
  }
}

/**
 * A leftover goes only on this seed's own `not-owner` right now: the garden's release was decided on a
 * heartbeat's view, and a migration back here (or an owner check that cannot tell) keeps the plane.
 */
export async function assertNotOwner(options: {
  command: CommandOf<'delete-control-plane'>;
  seed: string;
  ownerCheck?: (shoot: SeedCommand['shoot']) => Promise<OwnerCheckResult>;
}): Promise<void> {
  if (!options.command.ifNotOwner) return;
  const check = options.ownerCheck ? await options.ownerCheck(options.command.shoot) : 'unknown';
  if (check !== 'not-owner') {
    throw new AgentCommandError(
      'StillOwner',
      `the owner check of ${options.command.shoot.technicalID} on seed ${options.seed} says ${check}; keeping the control plane`,
    );
  }
}

/**
 * A create or reconcile of a control plane this seed does not host builds a new one only while the owner
 * record does not name another seed: a command queued before a migration moved the shoot (a frozen agent
 * reads it when it wakes) must not bring the plane back here. An owner check that cannot tell lets it
 * build: the sidecar's own owner check fences etcd anyway, and a DNS blip must not fail a Create.
 */
export async function assertNotOwnedElsewhere(options: {
  command: SeedCommand;
  seed: string;
  ownerCheck?: (shoot: SeedCommand['shoot']) => Promise<OwnerCheckResult>;
}): Promise<void> {
  if (!options.ownerCheck) return;
  const check = await options.ownerCheck(options.command.shoot);
  if (check === 'not-owner') {
    throw new AgentCommandError(
      'NotOwner',
      `the owner record of ${options.command.shoot.technicalID} names another seed than ${options.seed}; not building its control plane here`,
    );
  }
}

/** The answer to a restore ahead that a runtime or shoot does not do: nothing happened, the restore will do all of it. */
export function notRestoredAhead(): CommandResult<'restore'> {
  return { etcd: { restoredRevision: 0, snapshots: 0, final: false, ahead: false } };
}

/** The backup bucket of a restore: the command's etcd or control plane spec, else the one the seed knows. */
export function restoreBucket(command: CommandOf<'restore'>, known: string | undefined): string {
  const bucket = command.etcd?.bucket ?? command.controlPlane?.backup.bucket ?? known;
  if (bucket === undefined)
    throw new AgentCommandError(
      'InvalidCommand',
      `a restore of ${command.shoot.technicalID} on a seed that does not host it needs etcd.bucket or controlPlane.backup`,
    );
  return bucket;
}

/** Lists the copies in the bucket and checks that they restore, before anything starts (EtcdRestoreFailed otherwise). */
export async function checkRestorable(options: {
  command: CommandOf<'restore'> & { etcd: NonNullable<CommandOf<'restore'>['etcd']> };
  snapshotStore: (bucket: string) => SnapshotStore;
}): Promise<RestoreSummary> {
  const { command } = options;
  const id = command.shoot.technicalID;
  const listed = await options
    .snapshotStore(command.etcd.bucket)
    .list(id)
    .catch((cause: unknown) => {
      throw new AgentCommandError(
        'SnapshotsUnavailable',
        `listing the snapshots of ${id} in ${command.etcd.bucket} failed: ${messageOf(cause)}`,
        undefined,
        { cause },
      );
    });
  const expected = command.etcd.expectedLastRevision;
  return summarizeRestore({
    technicalID: id,
    snapshots: listed,
    hibernated: command.hibernated,
    ...(expected === undefined ? {} : { expectedLastRevision: expected }),
  });
}
