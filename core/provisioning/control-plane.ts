import { buildCommand, commandShoot } from '../commands/build.js';
import type { SeedCommand } from '../commands/schema.js';
import type { Seed } from '../model/seed.js';
import { failureTolerance, type Shoot } from '../model/shoot.js';
import { OwnerRecordConflictError } from '../ownership/errors.js';
import type { OwnerRecords } from '../ownership/owner-records.js';
import { ownerRecordName } from '../ownership/record-name.js';

/** Delivers a command that nobody waits for (no task token): the agent's heartbeats show the outcome. */
export interface CommandQueue {
  send(seedName: string, command: SeedCommand): Promise<unknown>;
}

export type ProvisionOutcome =
  | { action: 'provisioned'; ownerRecord: string; commandId: string }
  | { action: 'skipped'; reason: string };

/**
 * A shoot placed on a seed gets its control plane there: the owner record names the seed (created only
 * if absent — a record naming another seed belongs to a migration and is never overwritten here), then
 * the seed's agent is told to create the control plane. Both are idempotent: a repeated event finds the
 * record already naming this seed and sends the same command id, which the agent runs once.
 */
export async function provisionControlPlane(options: {
  shoot: Shoot;
  seed: Seed;
  owners: OwnerRecords;
  queue: CommandQueue;
  internalDomain: string;
  now: Date;
}): Promise<ProvisionOutcome> {
  const { shoot, seed } = options;
  if (shoot.status.seedName !== seed.metadata.name) return { action: 'skipped', reason: `shoot is placed on ${shoot.status.seedName ?? 'no seed'}, not ${seed.metadata.name}` };
  if (!seed.spec.backup) return { action: 'skipped', reason: `seed ${seed.metadata.name} has no backup bucket: its etcd could not be backed up` };
  const name = ownerRecordName({ shoot: shoot.metadata.name, project: shoot.metadata.project, internalDomain: options.internalDomain });
  try {
    await options.owners.set({ name, value: seed.status.identity, expected: null });
  } catch (error) {
    if (error instanceof OwnerRecordConflictError) return { action: 'skipped', reason: `owner record ${name} names another seed: ${error.message}` };
    throw error;
  }
  const tolerance = failureTolerance(shoot.spec);
  const command = buildCommand<'create-control-plane'>(
    { shoot: commandShoot(shoot), seed: seed.metadata.name, commandId: `create/${shoot.metadata.uid}/${seed.metadata.name}`, issuedAt: options.now },
    {
      type: 'create-control-plane',
      controlPlane: {
        hibernated: shoot.spec.hibernation?.enabled === true,
        ...(tolerance ? { failureTolerance: tolerance } : {}),
        backup: { bucket: seed.spec.backup.bucket, region: seed.spec.backup.region },
      },
    },
  );
  await options.queue.send(seed.metadata.name, command);
  return { action: 'provisioned', ownerRecord: name, commandId: command.commandId };
}
