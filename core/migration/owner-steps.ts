import { ConflictError, NotFoundError } from '../errors.js';
import type { OwnerRecords } from '../ownership/owner-records.js';
import { ownerRecordName } from '../ownership/record-name.js';
import { stepOf, type MigrationJournal, type MigrationRef } from './journal.js';
import { completeStep, startStep, type MigrationRecord } from './record.js';

export interface OwnerStepsOptions {
  journal: MigrationJournal;
  owners: OwnerRecords;
  internalDomain: string;
}

/** The two changes of the owner record a migration makes; the only writer of owner records. */
export class OwnerSteps {
  private readonly journal: MigrationJournal;

  constructor(private readonly options: OwnerStepsOptions) {
    this.journal = options.journal;
  }

  /** delete-owner-record: the source's sidecar sees not-owner, fences, and takes its final snapshot. */
  async deleteOwnerRecord(ref: MigrationRef): Promise<{ ownerChangedAt: number; hibernated: boolean }> {
    const record = await this.journal.save(startStep(await this.journal.current(ref), { step: 'delete-owner-record', now: this.journal.now() }));
    const name = this.recordName(record);
    await this.options.owners.delete({ name, ...(record.source.identity ? { expected: record.source.identity } : {}) });
    const done = await this.journal.save(completeStep(record, { step: 'delete-owner-record', now: this.journal.now(), message: `deleted ${name}` }));
    return { ownerChangedAt: Date.parse(stepOf(done, 'delete-owner-record').endedAt!), hibernated: done.guards.hibernated };
  }

  /** set-owner-destination: ownership passes to the destination; in the bad path this is what fences the source. */
  async setOwnerDestination(ref: MigrationRef): Promise<{ ownerChangedAt: number }> {
    const record = await this.journal.save(startStep(await this.journal.current(ref), { step: 'set-owner-destination', now: this.journal.now() }));
    const name = this.recordName(record);
    const identity = record.destination.identity;
    if (!identity) throw new NotFoundError(`destination seed ${record.destination.name} has no identity`);
    const current = await this.options.owners.get(name);
    if (current && current.value !== identity && current.value !== record.source.identity) {
      throw new ConflictError(`owner record ${name} names ${current.value}, neither the source nor the destination of this migration`, { code: 'OwnerRecordUnexpected' });
    }
    await this.options.owners.set({ name, value: identity, expected: current?.value ?? null });
    const done = await this.journal.save(completeStep(record, { step: 'set-owner-destination', now: this.journal.now(), message: `${name} = ${identity}` }));
    await this.journal.events.publish('OwnershipTransferred', { project: ref.project, shoot: ref.name, migrationId: ref.migrationId, from: record.source.name, to: record.destination.name, record: name });
    return { ownerChangedAt: Date.parse(stepOf(done, 'set-owner-destination').endedAt!) };
  }

  private recordName(record: MigrationRecord): string {
    return ownerRecordName({ shoot: record.shoot.name, project: record.shoot.project, internalDomain: this.options.internalDomain });
  }
}
