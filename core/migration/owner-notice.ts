import { buildCommand } from '../commands/build.js';
import { migrationCommandId } from '../commands/protocol.js';
import type { CommandOf } from '../commands/schema.js';
import type { MigrationRecord } from './record.js';

/** The two steps that change the owner record, and what each does to it. */
export type OwnerChangeStep = 'delete-owner-record' | 'set-owner-destination';

/**
 * Puts an owner-change notice (a `check-owner` command) on a seed's queue. Implementations bound the
 * call's time: the notice is worth something only at once, and the migration never waits for the seed.
 */
export interface OwnerChangeNotices {
  send(input: { command: CommandOf<'check-owner'>; queueUrl: string; messageGroupId: string }): Promise<void>;
}

export type OwnerNoticeOutcome =
  { readonly sent: true; readonly commandId: string } | { readonly sent: false; readonly reason: string };

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
