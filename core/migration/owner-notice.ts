import { buildCommand } from '../commands/build.js';
import { migrationCommandId } from '../commands/protocol.js';
import type { CommandOf } from '../commands/schema.js';
import type { GardenRepository } from '../garden/repository.js';
import type { MigrationRecord } from './record.js';

/** The two steps that change the owner record, and what each does to it. */
export type OwnerChangeStep = 'delete-owner-record' | 'set-owner-destination';

/** The fire-and-forget commands the garden puts on a seed's queue: nobody waits for their answer. */
export type SeedNotice = CommandOf<'check-owner'> | CommandOf<'hand-over'>;

/**
 * Puts a notice (an owner change, a hand-over) on a seed's queue. Implementations bound the call's time:
 * a notice is worth something only at once, and the migration never waits for the seed.
 */
export interface SeedNotices {
  send(input: { command: SeedNotice; queueUrl: string; messageGroupId: string }): Promise<void>;
}

export type OwnerNoticeOutcome =
  { readonly sent: true; readonly commandId: string } | { readonly sent: false; readonly reason: string };

/**
 * Sends a notice to a seed's queue (never to the seed, which on the bad path may be unreachable). A
 * failure is returned, not thrown: a notice only makes the seed act sooner than it would anyway.
 */
export async function noticeSeed(input: {
  garden: Pick<GardenRepository, 'getSeed'>;
  notices: SeedNotices;
  seedName: string;
  command: SeedNotice;
}): Promise<OwnerNoticeOutcome> {
  try {
    const queueUrl = (await input.garden.getSeed(input.seedName))?.status.commandQueueUrl;
    if (!queueUrl) return { sent: false, reason: `seed ${input.seedName} has no command queue` };
    const messageGroupId = ownerNoticeGroup(input.command.shoot.technicalID);
    await input.notices.send({ command: input.command, queueUrl, messageGroupId });
    return { sent: true, commandId: input.command.commandId };
  } catch (error) {
    return { sent: false, reason: `sending failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** The steps that send a hand-over, each under an id of its own. */
export type HandOverStep = 'own-live' | 'set-owner-destination' | 'switch-api-record';

/**
 * A hand-over: until `until`, the source's load balancer passes the shoot's new connections on to
 * `target`, the destination's load balancer; sent once the owner record names the destination
 * (`set-owner-destination`), or on the live path once it names both seeds (`own-live`), and again after
 * the API record's switch (`switch-api-record`).
 */
export function handOverCommand(
  record: Pick<MigrationRecord, 'id' | 'shoot' | 'source'>,
  handOver: { apiDomain: string; target: string; until: Date },
  now: Date,
  step: HandOverStep = 'switch-api-record',
): CommandOf<'hand-over'> {
  return buildCommand<'hand-over'>(
    {
      shoot: record.shoot,
      seed: record.source.name,
      commandId: `${migrationCommandId({ migrationId: record.id, step })}/hand-over`,
      issuedAt: now,
      migrationId: record.id,
    },
    {
      type: 'hand-over',
      apiDomain: handOver.apiDomain,
      target: handOver.target,
      until: handOver.until.toISOString(),
    },
  );
}

/**
 * Whether the source should hear of this owner change, and why not. Nothing runs there to hear it once
 * the good path deleted the source's control plane, or while the shoot is hibernated (no etcd, no sidecar).
 */
export function ownerNoticeSkipped(
  record: Pick<MigrationRecord, 'guards' | 'steps'>,
  step: OwnerChangeStep,
): string | undefined {
  if (record.guards.hibernated) return 'the shoot is hibernated: no sidecar runs on the source';
  if (
    step === 'set-owner-destination' &&
    record.steps.find((s) => s.id === 'delete-source-control-plane')?.state === 'succeeded'
  ) {
    return 'the source control plane is deleted already';
  }
  return undefined;
}

/** The notice for one owner change; the same id for every retry of the step (the queue drops repeats within its window). */
export function ownerNoticeCommand(
  record: Pick<MigrationRecord, 'id' | 'shoot' | 'source'>,
  step: OwnerChangeStep,
  now: Date,
): CommandOf<'check-owner'> {
  return buildCommand<'check-owner'>(
    {
      shoot: record.shoot,
      seed: record.source.name,
      commandId: `${migrationCommandId({ migrationId: record.id, step })}/check-owner`,
      issuedAt: now,
      migrationId: record.id,
    },
    { type: 'check-owner', change: step === 'delete-owner-record' ? 'deleted' : 'set' },
  );
}

/**
 * The message group of notices: their own, not the shoot's, so that a notice never waits in the FIFO
 * queue behind a command of the shoot that the agent has not taken yet.
 */
export function ownerNoticeGroup(technicalID: string): string {
  return `${technicalID}.owner-notice`;
}
