import { ConflictError, NotFoundError } from '../errors.js';
import type { OwnerRecords } from '../ownership/owner-records.js';
import { ownerRecordName } from '../ownership/record-name.js';
import { stepOf, type MigrationJournal, type MigrationRef } from './journal.js';
import {
  noticeSeed,
  ownerNoticeCommand,
  ownerNoticeSkipped,
  type OwnerChangeStep,
  type OwnerNoticeOutcome,
  type SeedNotices,
} from './owner-notice.js';
import {
  completeStep,
  liveOwnerValue,
  noteStep,
  startStep,
  type MigrationPath,
  type MigrationRecord,
} from './record.js';

export interface OwnerStepsOptions {
  journal: MigrationJournal;
  owners: OwnerRecords;
  internalDomain: string;
  /**
   * Where owner-change notices go (the seeds' command queues): right after each change the source's
   * sidecars are told to check now. Absent: none are sent, and the source learns at its next poll.
   */
  notices?: SeedNotices;
}

/** The two changes of the owner record a migration makes; the only writer of owner records. */
export class OwnerSteps {
  private readonly journal: MigrationJournal;

  constructor(private readonly options: OwnerStepsOptions) {
    this.journal = options.journal;
  }

  /**
   * delete-owner-record: the source's sidecar sees not-owner, fences, and takes its final snapshot. Not
   * before a resolver's answer given with the API record's TTL of before the migration has run out: until
   * then it answers how many seconds to wait, changing nothing (the source serves on), so that no client
   * goes on reaching the fenced source for longer than the lowered TTL once the record has switched.
   */
  async deleteOwnerRecord(
    ref: MigrationRef,
  ): Promise<{ ownerChangedAt: number; hibernated: boolean; notice: OwnerNoticeOutcome } | { waitSeconds: number }> {
    const record = await this.journal.save(
      startStep(await this.journal.current(ref), { step: 'delete-owner-record', now: this.journal.now() }),
    );
    const cachedFor = Date.parse(record.apiRecordTtl?.cachedUntil ?? '') - this.journal.now().getTime();
    if (cachedFor > 0) {
      const waitSeconds = Math.ceil(cachedFor / 1000);
      await this.journal.save(
        noteStep(record, {
          step: 'delete-owner-record',
          now: this.journal.now(),
          message: `waiting ${waitSeconds} s: resolvers may hold the API record's answer of before the migration (TTL ${record.apiRecordTtl!.from} s) until then`,
        }),
      );
      return { waitSeconds };
    }
    const name = this.recordName(record);
    await this.options.owners.delete({ name, ...(record.source.identity ? { expected: record.source.identity } : {}) });
    const notice = await this.noticeSource(record, 'delete-owner-record');
    const done = await this.journal.save(
      completeStep(record, {
        step: 'delete-owner-record',
        now: this.journal.now(),
        message: `deleted ${name}; ${describeNotice(notice)}`,
      }),
    );
    return {
      ownerChangedAt: Date.parse(stepOf(done, 'delete-owner-record').endedAt!),
      hibernated: done.guards.hibernated,
      notice,
    };
  }

  /** set-owner-destination: ownership passes to the destination; in the bad path this is what fences the source. */
  async setOwnerDestination(
    ref: MigrationRef,
  ): Promise<{ ownerChangedAt: number; notice: OwnerNoticeOutcome; path?: MigrationPath }> {
    const record = await this.journal.save(
      startStep(await this.journal.current(ref), { step: 'set-owner-destination', now: this.journal.now() }),
    );
    const name = this.recordName(record);
    const identity = record.destination.identity;
    if (!identity) throw new NotFoundError(`destination seed ${record.destination.name} has no identity`);
    const current = await this.options.owners.get(name);
    const live = liveOwnerValue(record);
    if (current && current.value !== identity && current.value !== record.source.identity && current.value !== live) {
      throw new ConflictError(
        `owner record ${name} names ${current.value}, neither the source nor the destination of this migration`,
        { code: 'OwnerRecordUnexpected' },
      );
    }
    await this.options.owners.set({ name, value: identity, expected: current?.value ?? null });
    const notice = await this.noticeSource(record, 'set-owner-destination');
    const done = await this.journal.save(
      completeStep(record, {
        step: 'set-owner-destination',
        now: this.journal.now(),
        message: `${name} = ${identity}; ${describeNotice(notice)}`,
      }),
    );
    await this.journal.events.publish('OwnershipTransferred', {
      project: ref.project,
      shoot: ref.name,
      migrationId: ref.migrationId,
      from: record.source.name,
      to: record.destination.name,
      record: name,
    });
    // The flow goes on by the path (the live path starts the control plane on the walked members), also after a resume.
    return {
      ownerChangedAt: Date.parse(stepOf(done, 'set-owner-destination').endedAt!),
      notice,
      ...(done.path ? { path: done.path } : {}),
    };
  }

  /**
   * own-live: the members of the shoot's etcd cluster on both seeds may serve (`source+destination@cluster`,
   * docs/design.md section 5, "The live path"), written only over the source's own value: of two writers
   * that would each move the shoot, one wins. The source's sidecars keep serving (their etcd reports that
   * cluster); nothing is noticed to them, since nothing changes for them.
   */
  async setOwnerLive(ref: MigrationRef): Promise<{ value: string }> {
    const record = await this.journal.save(
      startStep(await this.journal.current(ref), { step: 'own-live', now: this.journal.now() }),
    );
    const name = this.recordName(record);
    const value = liveOwnerValue(record);
    if (value === undefined || !record.source.identity)
      throw new NotFoundError(`own-live needs both seeds' identities and the survey's cluster (${record.id})`);
    const current = await this.options.owners.get(name);
    if (current?.value !== value) {
      if (current?.value !== record.source.identity)
        throw new ConflictError(
          `owner record ${name} names ${current?.value ?? 'no seed'}, not the source ${record.source.identity}: the walk does not begin`,
          { code: 'OwnerRecordUnexpected' },
        );
      await this.options.owners.set({ name, value, expected: current.value });
    }
    await this.journal.save(
      completeStep(record, { step: 'own-live', now: this.journal.now(), message: `${name} = ${value}` }),
    );
    return { value };
  }

  /**
   * The way out of a walk whose destination was lost (docs/design.md section 5, "Ways out"): the owner record
   * goes back from the live value to the source, conditionally, so that the destination's members fence
   * should they come back; only then does the source remove them or force its own member. walk-live stays
   * running (the walk-back round ends it). Idempotent.
   */
  async setOwnerSource(ref: MigrationRef): Promise<{ value: string }> {
    const record = await this.journal.current(ref);
    const name = this.recordName(record);
    const live = liveOwnerValue(record);
    const value = record.source.identity;
    if (live === undefined || !value)
      throw new NotFoundError(`walking back needs the source's identity and the survey's cluster (${record.id})`);
    const current = await this.options.owners.get(name);
    if (current?.value !== value) {
      if (current?.value !== live)
        throw new ConflictError(
          `owner record ${name} names ${current?.value ?? 'no seed'}, not the live value ${live}: the walk does not go back`,
          { code: 'OwnerRecordUnexpected' },
        );
      await this.options.owners.set({ name, value, expected: current.value });
    }
    await this.journal.save(
      noteStep(record, {
        step: 'walk-live',
        now: this.journal.now(),
        message: `${name} = ${value}: the walk goes back to the source`,
      }),
    );
    return { value };
  }

  /**
   * Tells the source's agent that the record changed, so that its sidecars check now instead of at their
   * next poll. Fire-and-forget: only the queue is called (never the seed, which on the bad path may be
   * unreachable), nothing waits for an answer, and a failure changes nothing but how soon the source
   * fences; its poll still bounds that.
   */
  private async noticeSource(record: MigrationRecord, step: OwnerChangeStep): Promise<OwnerNoticeOutcome> {
    const notices = this.options.notices;
    if (notices === undefined) return { sent: false, reason: 'notices are off' };
    const skipped = ownerNoticeSkipped(record, step);
    if (skipped) return { sent: false, reason: skipped };
    return noticeSeed({
      garden: this.journal.garden,
      notices,
      seedName: record.source.name,
      command: ownerNoticeCommand(record, step, this.journal.now()),
    });
  }

  private recordName(record: MigrationRecord): string {
    return ownerRecordName({
      shoot: record.shoot.name,
      project: record.shoot.project,
      internalDomain: this.options.internalDomain,
    });
  }
}

function describeNotice(notice: OwnerNoticeOutcome): string {
  return notice.sent
    ? 'source told to check now'
    : `source not told (${notice.reason}): it sees the change at its next owner check`;
}
