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
import {
  handOverCommand,
  noticeSeed,
  type HandOverStep,
  type OwnerNoticeOutcome,
  type SeedNotices,
} from './owner-notice.js';
import { completeStep, startStep, type MigrationRecord } from './record.js';

/** How long a hand-over sent at the owner change lasts at most: longer than a restore's command timeout (300 s). */
export const HAND_OVER_AHEAD_MS = 10 * 60_000;

export interface ApiRecordStepsOptions {
  journal: MigrationJournal;
  writer: ApiRecordWriter;
  /**
   * Where hand-over notices go (the seeds' command queues): once the record names the destination, the
   * source's load balancer is told to pass the shoot's connections on to it. Absent: none are sent, and
   * clients that still resolve the source fail until their answer expires.
   */
  notices?: SeedNotices;
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
    const before = await writer.current(shoot);
    const decision = decideSwitch({
      restored: restore.state === 'succeeded',
      destination,
      current: before,
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
    const handOver =
      // Also when a retry finds the record switched already: the notice keeps its id, and the queue drops a repeat.
      destination.serving && destination.externalUrl
        ? await this.handOver(record, { apiDomain: outcome.record, target: destination.externalUrl, before })
        : undefined;
    await journal.save(
      completeStep(record, {
        step: 'switch-api-record',
        now: journal.now(),
        message: handOver ? `${outcome.message}; ${describeHandOver(handOver)}` : outcome.message,
      }),
    );
    return {
      record: outcome.record,
      changed: outcome.changed,
      target: outcome.target ? `${outcome.target.type} ${outcome.target.value}` : null,
    };
  }

  /**
   * Right after the owner record names the destination (the owner function calls it after
   * set-owner-destination): the source's load balancer may pass the shoot's new connections on to the
   * destination's from now on, so that a client reaches the destination the moment it serves rather than
   * once the API record switched. Safe at any moment, because the destination's load balancer admits a
   * connection only while its own etcd serves as that seed's, and a route that serves on the source wins
   * over the hand-over. The target is the load balancer the destination reports for its standby (its
   * kube-apiserver starts on the restore ahead); without one, none is sent and the switch's hand-over is the
   * first. Until HAND_OVER_AHEAD_MS from now (a restore within its timeout); the switch's hand-over then sets
   * the end exactly. Fire-and-forget, as every notice.
   *
   * On the live path it is sent at own-live already, to the load balancer the destination's survey named:
   * its kube-apiserver follows the walk on the destination's member (one cluster, so either seed's serves
   * the same data), and the source's route stops serving the moment its member leaves, before the owner
   * record names the destination.
   */
  async handOverAhead(
    ref: MigrationRef,
    step: Exclude<HandOverStep, 'switch-api-record'> = 'set-owner-destination',
  ): Promise<OwnerNoticeOutcome> {
    const { journal, writer } = this.options;
    const record = await journal.current(ref);
    if (record.guards.hibernated) return { sent: false, reason: 'the shoot is hibernated: nothing serves' };
    const target = step === 'own-live' ? record.live?.loadBalancer : await this.destinationLoadBalancer(record);
    if (!target)
      return { sent: false, reason: `seed ${record.destination.name} reports no load balancer for the shoot yet` };
    const now = journal.now();
    return this.sendHandOver(
      record,
      {
        apiDomain: writer.nameOf({ project: ref.project, name: ref.name }),
        target,
        until: new Date(now.getTime() + HAND_OVER_AHEAD_MS),
      },
      step,
    );
  }

  /** The load balancer the destination reports for the shoot (its kube-apiserver runs there). */
  private async destinationLoadBalancer(record: MigrationRecord): Promise<string | undefined> {
    const seed = await this.options.journal.garden.getSeed(record.destination.name);
    return seed?.status.controlPlanes?.find((cp) => cp.technicalID === record.shoot.technicalID)?.externalUrl;
  }

  /**
   * Tells the source's load balancer to pass the shoot's connections on to the destination's, for as long
   * as resolvers may still answer the source: the answers given with the TTL of before the migration
   * (`cachedUntil`) and those given with the record's TTL up to the switch. Fire-and-forget, as the owner
   * notices: the source may be gone (the bad path), and then its clients wait out their answer.
   */
  private async handOver(
    record: MigrationRecord,
    input: { apiDomain: string; target: string; before: { ttl: number } | undefined },
  ): Promise<OwnerNoticeOutcome> {
    const { notices, journal } = this.options;
    if (notices === undefined) return { sent: false, reason: 'notices are off' };
    const now = journal.now();
    const until = new Date(
      Math.max(
        Date.parse(record.apiRecordTtl?.cachedUntil ?? '') || 0,
        now.getTime() + (input.before?.ttl ?? 0) * 1000,
      ),
    );
    if (until <= now) return { sent: false, reason: 'no resolver holds the source any more' };
    return this.sendHandOver(record, { apiDomain: input.apiDomain, target: input.target, until }, 'switch-api-record');
  }

  private async sendHandOver(
    record: MigrationRecord,
    handOver: { apiDomain: string; target: string; until: Date },
    step: HandOverStep,
  ): Promise<OwnerNoticeOutcome> {
    const { notices, journal } = this.options;
    if (notices === undefined) return { sent: false, reason: 'notices are off' };
    let command: ReturnType<typeof handOverCommand>;
    try {
      command = handOverCommand(record, handOver, journal.now(), step);
    } catch {
      // A destination reached otherwise than through a load balancer of its own (the memory hosting's URL).
      return {
        sent: false,
        reason: `the destination's address ${handOver.target} is no load balancer to pass connections to`,
      };
    }
    return noticeSeed({ garden: journal.garden, notices, seedName: record.source.name, command });
  }
}

function describeHandOver(notice: OwnerNoticeOutcome): string {
  return notice.sent
    ? "the source's load balancer hands the shoot's connections over"
    : `no hand-over by the source's load balancer (${notice.reason})`;
}
