import {
  advertisedAddresses,
  ApiRecordWriter,
  DestinationNotServingError,
  decideSwitch,
  MIGRATION_API_RECORD_TTL_SECONDS,
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

  /**
   * lower-api-record-ttl, right after choose-path: the record keeps pointing at the source, with a TTL of
   * MIGRATION_API_RECORD_TTL_SECONDS, so that resolvers hold the source's address only that long once the
   * switch has happened. The lowering is noted on the migration before the write (a retry after a crash
   * knows the TTL it lowered from), and the moment every answer with the old TTL has run out after it.
   * Nothing for a hibernated shoot (nothing serves) or a record that has no longer TTL. On the good path it
   * also answers how long until then (`waitSeconds`): the state machine waits that long before the
   * pre-copy, so that the copy and the restore ahead are as fresh as they can be when the source fences.
   */
  async lowerTtl(ref: MigrationRef): Promise<{ ttl: number | null; cachedUntil: string | null; waitSeconds?: number }> {
    const { journal } = this.options;
    const lowered = await this.lower(ref);
    const record = await journal.current(ref);
    const cachedFor = Date.parse(lowered.cachedUntil ?? '') - journal.now().getTime();
    return record.path === 'good' && cachedFor > 0 ? { ...lowered, waitSeconds: Math.ceil(cachedFor / 1000) } : lowered;
  }

  private async lower(ref: MigrationRef): Promise<{ ttl: number | null; cachedUntil: string | null }> {
    const { journal, writer } = this.options;
    let record = await journal.current(ref);
    const shoot = { project: ref.project, name: ref.name };
    const current = record.guards.hibernated ? undefined : await writer.current(shoot);
    const lowered = record.apiRecordTtl;
    if (current === undefined || (lowered === undefined && current.ttl <= MIGRATION_API_RECORD_TTL_SECONDS))
      return { ttl: current?.ttl ?? null, cachedUntil: lowered?.cachedUntil ?? null };
    if (lowered === undefined) {
      record = await journal.save({
        ...record,
        apiRecordTtl: { from: current.ttl, to: MIGRATION_API_RECORD_TTL_SECONDS },
      });
    }
    const ttl = record.apiRecordTtl!;
    await writer.retime({ shoot, current, ttl: ttl.to });
    if (ttl.cachedUntil !== undefined) return { ttl: ttl.to, cachedUntil: ttl.cachedUntil };
    const cachedUntil = new Date(journal.now().getTime() + ttl.from * 1000).toISOString();
    await journal.save({ ...record, apiRecordTtl: { ...ttl, cachedUntil } });
    return { ttl: ttl.to, cachedUntil };
  }

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
