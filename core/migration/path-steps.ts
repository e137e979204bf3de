import { ConflictError } from '../errors.js';
import { expiredLease } from '../garden/lease-monitor.js';
import { describeError, stepOf, type MigrationJournal, type MigrationRef } from './journal.js';
import { choosePathForSeeds } from './path.js';
import {
  continueWithoutStep,
  leaveLivePath,
  noteStep,
  resumePoint,
  setPath,
  switchToBadPath,
  type MigrationPath,
  type MigrationRecord,
} from './record.js';
import {
  DESTINATION_LEASE_EXPIRED,
  SOURCE_LEASE_EXPIRED,
  waitsOnSource,
  type SourceWaitIndex,
} from './source-waits.js';
import { PREPARE_STEPS, type MigrationStepId } from './steps.js';

/**
 * What choose-path answers the state machine: the path, and where the pre-copy starts (`none`: skipped, as
 * for a hibernated shoot, or settled already); a resume at a pre-copy step comes through choose-path too.
 */
export interface PathChoice {
  path: MigrationPath;
  hibernated: boolean;
  preCopyFrom: MigrationStepId | 'none';
}

export interface PathStepsOptions {
  journal: MigrationJournal;
  /** Seed agents' heartbeat interval, for choosing the path (default 10 s). */
  heartbeatIntervalMs?: number;
  /** Task tokens filed under the source seed; a switch removes the one of the step that gave up. */
  sourceWaits?: SourceWaitIndex;
}

/**
 * How often walk-live may be taken again after LiveWalkPeerLost while both seeds hold their leases (a source
 * whose etcd restarts), 10 s apart, before the migration ends in Error: with the round's own 10 s of
 * silence, about six minutes.
 */
export const LIVE_WALK_ATTEMPTS = 18;
export const LIVE_WALK_RETRY_SECONDS = 10;

/** What live-reach answers the state machine: take the way out of a lost seed, or walk again after a wait. */
export type LiveReach =
  { next: 'source-lost' } | { next: 'destination-lost' } | { next: 'walk-again'; waitSeconds: number };

/** Which path a migration takes (docs/design.md section 5, step 2) and the switch from the good path to the bad. */
export class PathSteps {
  private readonly journal: MigrationJournal;

  constructor(private readonly options: PathStepsOptions) {
    this.journal = options.journal;
  }

  /** choose-path: with mode auto, live or good while the source's heartbeat is fresh, else bad. */
  async choosePath(ref: MigrationRef): Promise<PathChoice> {
    const record = await this.journal.current(ref);
    if (record.path) return pathChoice(record);
    return pathChoice(
      await this.journal.save(await withChosenPath(this.journal, record, this.options.heartbeatIntervalMs)),
    );
  }

  /**
   * The live walk's survey failed: nothing changed yet, so the migration goes on as on the good path (its
   * next step deletes the owner record, and the source fences as on any good path).
   */
  async leaveLivePath(ref: MigrationRef, error: unknown): Promise<{ path: 'good' }> {
    const record = await this.journal.current(ref);
    await this.journal.save(leaveLivePath(record, { reason: describeError(error), now: this.journal.now() }));
    return { path: 'good' };
  }

  /**
   * A round of the live walk failed (the source's members stopped answering, the round ran out of time): the
   * seeds' leases tell what the garden can still reach (docs/design.md section 5, "Ways out"). One seed
   * lost and the other held: the held one's way out. Both held: walk again shortly, a bounded number of
   * times, after a source that fell silent (LiveWalkPeerLost), else Error. Both lost: Error (LiveWalkHeld):
   * nothing safe can be done, and a resume walks on once one is back.
   */
  async liveReach(ref: MigrationRef, error: unknown): Promise<LiveReach> {
    const record = await this.journal.current(ref);
    const now = this.journal.now();
    const [source, destination] = await Promise.all([
      this.journal.garden.getSeed(record.source.name),
      this.journal.garden.getSeed(record.destination.name),
    ]);
    const sourceLost = source ? expiredLease(source, now) : undefined;
    const destinationLost = destination ? expiredLease(destination, now) : undefined;
    const why = describeError(error);
    if (destinationLost && sourceLost)
      throw new ConflictError(
        `${why}; the leases of both seeds expired (the destination ${record.destination.name}'s at ${destinationLost.expiredAt}, the source's at ${sourceLost.expiredAt}): the walk holds where it stands (resume the migration once one is back)`,
        { code: 'LiveWalkHeld' },
      );
    const lost = sourceLost
      ? { side: 'source' as const, seed: record.source.name, lease: sourceLost }
      : destinationLost
        ? { side: 'destination' as const, seed: record.destination.name, lease: destinationLost }
        : undefined;
    if (lost) {
      if (stepOf(record, 'walk-live').state === 'running')
        await this.journal.save(
          noteStep(record, {
            step: 'walk-live',
            now,
            message: `${why}; the ${lost.side} seed ${lost.seed}'s lease expired at ${lost.lease.expiredAt}: taking the walk's way out`,
          }),
        );
      return { next: lost.side === 'source' ? 'source-lost' : 'destination-lost' };
    }
    // Only a seed that fell silent is worth walking again for: a source restarting its etcd, a destination
    // whose lease the monitor saw expire and that renewed it since.
    const name = (error as { Error?: unknown } | undefined)?.Error;
    if (name !== 'LiveWalkPeerLost' && name !== DESTINATION_LEASE_EXPIRED)
      throw new ConflictError(`${why}; both seeds hold their leases`, { code: 'LiveWalkStalled' });
    const again = (record.live?.walkedAgain ?? 0) + 1;
    if (again > LIVE_WALK_ATTEMPTS || record.live === undefined)
      throw new ConflictError(
        `${why}; both seeds hold their leases, and the walk did not go on in ${LIVE_WALK_ATTEMPTS} more rounds`,
        { code: 'LiveWalkStalled' },
      );
    await this.journal.save({ ...record, live: { ...record.live, walkedAgain: again } });
    return { next: 'walk-again', waitSeconds: LIVE_WALK_RETRY_SECONDS };
  }

  /**
   * retire-source could not be sent: the source's lease expired (a live walk that completed without it).
   * What is left there is deleted by its own agent once it is back (the leftover rule, docs/design.md
   * section 11): its member left the cluster or was forced out of it, and the record names another seed.
   */
  async skipRetireSource(ref: MigrationRef, error: unknown): Promise<{ skipped: true }> {
    const record = await this.journal.current(ref);
    await this.journal.save(
      continueWithoutStep(record, {
        step: 'retire-source',
        now: this.journal.now(),
        outcome: 'failed',
        reason: describeError(error),
      }),
    );
    return { skipped: true };
  }

  /** A good-path step timed out or failed: continue at set-owner-destination. */
  async switchToBadPath(ref: MigrationRef, error: unknown): Promise<{ path: 'bad' }> {
    const record = await this.journal.current(ref);
    // The step that gave up is the one running; a wait that ran out has no error of its own.
    const failedStep =
      record.steps.find((s) => s.state === 'running')?.id ?? resumePoint(record) ?? 'migrate-extensions';
    const reason = describeError(error);
    const alreadySwitched = record.path === 'bad';
    await this.journal.save(switchToBadPath(record, { failedStep, reason, now: this.journal.now() }));
    if (waitsOnSource(failedStep))
      await this.options.sourceWaits?.remove({
        seed: record.source.name,
        project: ref.project,
        name: ref.name,
        migrationId: ref.migrationId,
        step: failedStep,
      });
    if (!alreadySwitched) {
      // `early`: the source's lease expired, so the flow did not wait for the command timeout.
      const early = (error as { Error?: unknown } | undefined)?.Error === SOURCE_LEASE_EXPIRED;
      await this.journal.events.publish('MigrationSwitchedToBadPath', {
        project: ref.project,
        shoot: ref.name,
        migrationId: ref.migrationId,
        failedStep,
        reason,
        early,
      });
    }
    return { path: 'bad' };
  }
}

/**
 * The record with the path mode auto (or the mode asked for) takes now, from both seeds as read now: what
 * choose-path saves and a migration's preview shows.
 */
export async function withChosenPath(
  journal: Pick<MigrationJournal, 'garden' | 'now'>,
  record: MigrationRecord,
  heartbeatIntervalMs = 10_000,
): Promise<MigrationRecord> {
  const [source, destination] = await Promise.all([
    journal.garden.getSeed(record.source.name),
    journal.garden.getSeed(record.destination.name),
  ]);
  const now = journal.now();
  const decision = choosePathForSeeds({
    mode: record.mode,
    guards: record.guards,
    source,
    destination,
    now,
    heartbeatInterval: heartbeatIntervalMs,
  });
  return setPath(record, { ...decision, now });
}

function pathChoice(record: MigrationRecord): PathChoice {
  const next = resumePoint(record);
  return {
    path: record.path!,
    hibernated: record.guards.hibernated,
    preCopyFrom: next !== undefined && PREPARE_STEPS.includes(next) ? next : 'none',
  };
}
