import {
  advertisedAddresses,
  ApiRecordWriter,
  DestinationNotServingError,
  decideSwitch,
  servingTarget,
} from '../dns/index.js';
import { ConflictError } from '../errors.js';
import { stepOf, type MigrationJournal, type MigrationRef } from './journal.js';
import { completeStep, startStep } from './record.js';

export interface ApiRecordStepsOptions {
  journal: MigrationJournal;
  writer: ApiRecordWriter;
}

/**
 * switch-api-record: the shoot's API domain follows its control plane to the destination, on both paths,
 * only once the destination serves (docs/design.md section 5). Until then the step throws
 * DestinationNotServing, which the state machine retries; when it gives up the migration fails and the
 * record stays where it was, on the source, whose control plane served last.
 */
export class ApiRecordSteps {
  constructor(private readonly options: ApiRecordStepsOptions) {}

  async switchApiRecord(ref: MigrationRef): Promise<{ record: string; changed: boolean; target: string | null }> {
    const { journal, writer } = this.options;
    const record = await journal.save(
      startStep(await journal.current(ref), { step: 'switch-api-record', now: journal.now() }),
    );
    const restore = stepOf(record, 'restore-extensions');
    const restoreStarted = stepOf(record, 'restore-etcd').startedAt;
    const destination = servingTarget({
      seed: await journal.garden.getSeed(record.destination.name),
      technicalID: record.shoot.technicalID,
      now: journal.now(),
      // A report from before the restore may be of an earlier stay of this shoot on the destination.
      ...(restoreStarted ? { notBefore: new Date(restoreStarted) } : {}),
    });
    const shoot = { project: ref.project, name: ref.name };
    const decision = decideSwitch({
      restored: restore.state === 'succeeded',
      destination,
      current: await writer.current(shoot),
      hibernated: record.guards.hibernated,
    });
    if (decision.action === 'wait')
      throw new DestinationNotServingError(`the API record stays until the destination serves: ${decision.reason}`);
    if (decision.action === 'keep')
      throw new ConflictError(`migration ${ref.migrationId}: ${decision.reason}`, { code: 'Conflict' });
    if (decision.action === 'no-address') {
      await journal.save(
        completeStep(record, { step: 'switch-api-record', now: journal.now(), message: decision.reason }),
      );
      return { record: writer.nameOf(shoot), changed: false, target: null };
    }
    const outcome = await writer.apply({
      shoot,
      decision,
      seedName: record.destination.name,
      migrationId: ref.migrationId,
    });
    // The record names the destination's load balancer now: so does the shoot's advertised URL (its port may differ).
    if (destination.serving && destination.externalUrl) {
      await journal.amendShootStatus(shoot, {
        advertisedAddresses: advertisedAddresses(outcome.record, destination.externalUrl),
      });
    }
    await journal.save(
      completeStep(record, { step: 'switch-api-record', now: journal.now(), message: outcome.message }),
    );
    return {
      record: outcome.record,
      changed: outcome.changed,
      target: outcome.target ? `${outcome.target.type} ${outcome.target.value}` : null,
    };
  }
}
