import { parseCommandSuccess } from '../commands/protocol.js';
import { apiDomainName } from '../dns/api-domain.js';
import type { CommandResult, SeedCommand } from '../commands/schema.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { SourceLeaseExpiredError } from './errors.js';
import { expiredLease } from '../garden/lease-monitor.js';
import { saveKeepingSecrets, type ShootSecretsKeeper } from '../shootstate/secrets-keeper.js';
import type { ShootStateStore } from '../shootstate/store.js';
import { SHOOT_STATE_API_VERSION, type PackedShootState } from '../shootstate/types.js';
import { assertRound, commandForStep, RESTORE_AHEAD_HEARTBEAT_SECONDS, type StepRound } from './commands.js';
import type { MigrationJournal, MigrationRef } from './journal.js';
import {
  completeStep,
  continueWithoutStep,
  noteStep,
  startStep,
  walkedBack,
  type MigrationPath,
  type MigrationRecord,
} from './record.js';
import {
  sourceLeaseExpired,
  switchesEarly,
  waitsOnDestination,
  waitsOnSource,
  type SourceWaitIndex,
} from './source-waits.js';
import { stepDefinition, type MigrationStepId } from './steps.js';

export interface SeedCommandsOptions {
  journal: MigrationJournal;
  /** The restore of the extensions carries the persisted ShootState. */
  shootStates: ShootStateStore;
  /** The garden's state bucket: where agents put ShootState blobs over 100 KB. */
  stateBucket: string;
  /** What commands tell agents about their task's limits; the state machine's TimeoutSeconds match. Defaults 300 s and 60 s. */
  commandTimeoutSeconds?: number;
  commandHeartbeatSeconds?: number;
  /** Where a mode-auto good-path step files its task token under the source seed, for the lease monitor. */
  sourceWaits?: SourceWaitIndex;
  /** The shoot's secrets, sealed for the destination in restore-etcd. Without it the command carries none. */
  secrets?: ShootSecretsKeeper;
  /** The deployment's external domain: restore-etcd names the shoot's API domain under it. */
  externalDomain?: string;
}

/**
 * The steps that start the control plane's components on the destination, and so carry its secrets and
 * API domain (the walk starts kube-apiserver on the destination's member once it votes).
 */
const STARTS_COMPONENTS: ReadonlySet<MigrationStepId> = new Set([
  'restore-etcd-ahead',
  'restore-etcd',
  'walk-live',
  'finish-live',
]);

/**
 * The steps a seed agent does (migrate the extensions, delete the source's control plane, restore etcd
 * and the extensions): the command of each, to be sent to the seed's queue.
 */
export class SeedCommands {
  private readonly journal: MigrationJournal;

  constructor(private readonly options: SeedCommandsOptions) {
    this.journal = options.journal;
  }

  /**
   * Starts a step and returns its command (without the task token, which the caller adds) and where to send
   * it. A mode-auto good-path step first looks at the source's lease: expired, it fails at once with
   * SourceLeaseExpired (the flow switches to the bad path); else it files `taskToken` under the source
   * seed, so that the lease monitor can cut the wait short when the lease expires while the agent works.
   */
  async beginCommand(
    ref: MigrationRef,
    step: MigrationStepId,
    options: { taskToken?: string; round?: StepRound } = {},
  ): Promise<{ command: SeedCommand; queueUrl: string; messageGroupId: string }> {
    assertRound(step, options.round);
    const now = this.journal.now();
    const timeoutSeconds = this.options.commandTimeoutSeconds ?? 300;
    const started = startStep(await this.journal.current(ref), { step, now });
    // The walk's own round only: the rounds of its ways out are sent once a seed was lost.
    const onDestination = waitsOnDestination(started, step) && options.round === undefined;
    // Until when the destination may still be walking, should its lease expire while it does (the way back):
    // its round ends before its command's timeout, counted from the command's issue (`now`).
    const record = await this.journal.save(
      onDestination && started.live
        ? {
            ...started,
            live: { ...started.live, roundEndsAt: new Date(now.getTime() + timeoutSeconds * 1_000).toISOString() },
          }
        : started,
    );
    const early = switchesEarly(record, step);
    // A live walk that completed without its lost source: nothing there would answer retire-source.
    if (early || step === 'retire-source') {
      const source = await this.journal.garden.getSeed(record.source.name);
      const lease = source && expiredLease(source, this.journal.now());
      if (lease)
        throw early
          ? sourceLeaseExpired(lease)
          : new SourceLeaseExpiredError(
              `the source seed ${lease.seed}'s lease expired at ${lease.expiredAt} (last renewed ${lease.lastRenewTime}): no agent there would answer ${step}`,
            );
    }
    if ((early || onDestination) && options.taskToken && this.options.sourceWaits) {
      const { project, name } = record.shoot;
      await this.options.sourceWaits.put({
        seed: early ? record.source.name : record.destination.name,
        project,
        name,
        migrationId: record.id,
        step,
        taskToken: options.taskToken,
        since: this.journal.now().toISOString(),
      });
    }
    const copy = step === 'restore-etcd' ? record.copy : undefined;
    const shootState = step === 'restore-extensions' ? await this.restoreShootState(record) : undefined;
    const startsComponents = STARTS_COMPONENTS.has(step);
    const sourceEtcdUrls = step === 'survey-live' ? await this.sourceEtcdUrls(record) : undefined;
    // The survey too: whether the destination's member can speak to the source's depends on the etcd peer
    // CA it will have (peer TLS or plain), and a walk refused there costs nothing, where later it is an Error.
    const secrets =
      startsComponents || step === 'survey-live'
        ? await this.options.secrets?.forSeed(record.shoot, record.destination.name)
        : undefined;
    const heartbeatSeconds = this.options.commandHeartbeatSeconds ?? 60;
    const command = commandForStep({
      record,
      step,
      now,
      stateBucket: this.options.stateBucket,
      timeoutSeconds,
      // A restore ahead is given up after three silent intervals: it beats more often than the steps that must finish.
      heartbeatSeconds:
        step === 'restore-etcd-ahead' ? Math.min(heartbeatSeconds, RESTORE_AHEAD_HEARTBEAT_SECONDS) : heartbeatSeconds,
      ...(shootState ? { shootState } : {}),
      ...(secrets ? { secrets } : {}),
      ...(startsComponents && this.options.externalDomain
        ? {
            apiDomain: apiDomainName({
              shoot: record.shoot.name,
              project: record.shoot.project,
              externalDomain: this.options.externalDomain,
            }),
          }
        : {}),
      ...(options.round === undefined ? {} : { round: options.round }),
      ...(sourceEtcdUrls ? { sourceEtcdUrls } : {}),
      ...(copy
        ? {
            etcd: {
              final: copy.final,
              ...(copy.lastRevision === undefined ? {} : { expectedLastRevision: copy.lastRevision }),
            },
          }
        : {}),
    });
    const seed = await this.journal.garden.getSeed(command.seed);
    if (!seed?.status.commandQueueUrl) throw new NotFoundError(`seed ${command.seed} has no command queue`);
    return { command, queueUrl: seed.status.commandQueueUrl, messageGroupId: record.shoot.technicalID };
  }

  /** Where the shoot's etcd serves on the source, as the source's last heartbeat reported it. */
  private async sourceEtcdUrls(record: MigrationRecord): Promise<string[]> {
    const source = await this.journal.garden.getSeed(record.source.name);
    const url = source?.status.controlPlanes?.find((p) => p.technicalID === record.shoot.technicalID)?.etcdClientUrl;
    if (url === undefined)
      throw new NotFoundError(
        `seed ${record.source.name} reports no serving etcd for ${record.shoot.technicalID}: a live walk has nothing to join`,
      );
    return [url];
  }

  /**
   * The ShootState the restore uses. When none was ever persisted (a bad-path migration of a shoot whose
   * state was never saved), the extensions are restored from an empty state: each is reconciled from its
   * spec, and their external resources are adopted, which is what restore without saved state means.
   */
  private async restoreShootState(record: MigrationRecord): Promise<{ state: PackedShootState; version: number }> {
    const stored = await this.options.shootStates.load({ project: record.shoot.project, name: record.shoot.name });
    if (stored) return { state: stored.state, version: stored.version };
    return {
      version: 0,
      state: {
        apiVersion: SHOOT_STATE_API_VERSION,
        kind: 'ShootState',
        shoot: record.shoot,
        extensions: [],
        collectedAt: this.journal.now().toISOString(),
        collectedAfter: 'reconcile',
      },
    };
  }
}

/** The seed agents' answers to those commands, and the ShootState a migrate answer carries. */
export class SeedAnswers {
  private readonly journal: MigrationJournal;

  constructor(
    private readonly options: {
      journal: MigrationJournal;
      shootStates: ShootStateStore;
      sourceWaits?: SourceWaitIndex;
    },
  ) {
    this.journal = options.journal;
  }

  /** The seed answered: the task token filed under it is of no further use. */
  private async answered(ref: MigrationRef, record: MigrationRecord, step: MigrationStepId): Promise<void> {
    const seed = waitsOnSource(step)
      ? record.source.name
      : waitsOnDestination(record, step)
        ? record.destination.name
        : undefined;
    if (seed !== undefined)
      await this.options.sourceWaits?.remove({
        seed,
        project: ref.project,
        name: ref.name,
        migrationId: ref.migrationId,
        step,
      });
  }

  /** A seed step answered: record it (the migrate answer is persisted by the next step). */
  async completeCommand(ref: MigrationRef, step: MigrationStepId, output: unknown): Promise<{ message: string }> {
    const record = await this.journal.current(ref);
    const type = stepDefinition(step).command;
    if (type === undefined) throw new RangeError(`step ${step} is not done by a seed agent`);
    const answer = parseCommandSuccess(type, output);
    if (step === 'restore-etcd-ahead') return this.completeAhead(record, answer.result as CommandResult<'restore'>);
    if (answer.type === 'live-walk') {
      const walked = await this.completeWalkRound(record, step, answer.result as CommandResult<'live-walk'>);
      await this.answered(ref, record, step);
      return walked;
    }
    const message = summariseAnswer(answer.result);
    await this.journal.save(
      step === 'migrate-extensions' ? record : completeStep(record, { step, now: this.journal.now(), message }),
    );
    await this.answered(ref, record, step);
    return { message };
  }

  /**
   * A round of the live walk answered: the survey's answer is what every later round carries, and each round
   * must stop where its step ends (the garden's next step is the one the flow takes next); a round that
   * stops elsewhere leaves the step running for the migration's failure.
   */
  private async completeWalkRound(
    record: MigrationRecord,
    step: MigrationStepId,
    result: CommandResult<'live-walk'>,
  ): Promise<{ message: string; next: CommandResult<'live-walk'>['next'] }> {
    // The walk-back round (the destination lost, the record the source's again) ends walk-live with `done`.
    const walkedBackNow =
      step === 'walk-live' &&
      result.next === 'done' &&
      result.wayOut !== undefined &&
      WALKS_BACK.has(record.live?.wayOut);
    const expected: Partial<Record<MigrationStepId, readonly string[]>> = {
      'survey-live': ['own-both'],
      'walk-live': ['own-destination', 'bad-path', 'own-source', ...(walkedBackNow ? ['done'] : [])],
      'finish-live': ['retire-source', 'done'],
    };
    if (!expected[step]?.includes(result.next))
      throw new ConflictError(
        `${step}: the walk waits for ${result.next}, not for ${expected[step]?.join(' or ') ?? 'nothing'}`,
        { code: 'LiveWalkOutOfStep' },
      );
    const walked = `${result.taken.length === 0 ? 'nothing left to walk' : result.taken.join(', ')}; next: ${result.next}`;
    const lost = result.next === 'own-source' || walkedBackNow ? 'destination' : 'source';
    const message =
      step === 'survey-live'
        ? `etcd cluster ${result.spec.cluster} with ${result.spec.sourceMembers.map((m) => m.name).join(', ')} on the source`
        : result.wayOut
          ? `the ${lost} is lost; way out: ${WAY_OUT_MESSAGES[lost][result.wayOut]}; ${walked}`
          : walked;
    const now = this.journal.now();
    if (walkedBackNow) {
      await this.journal.save(walkedBack(record, { now, message }));
      return { message, next: result.next };
    }
    // After the way out bad-path the step is not done: it fails where the flow switches to the bad path; nor
    // while the walk goes back to the source.
    const settled =
      result.wayOut === 'bad-path' || result.next === 'own-source'
        ? noteStep(record, { step, now, message })
        : completeStep(record, { step, now, message });
    const live =
      step === 'survey-live'
        ? { ...result.spec, ...(result.loadBalancer ? { loadBalancer: result.loadBalancer } : {}) }
        : result.wayOut
          ? { ...settled.live!, wayOut: result.wayOut }
          : settled.live;
    await this.journal.save(live ? { ...settled, live } : settled);
    return { message, next: result.next };
  }

  /**
   * restore-etcd-ahead answered: restored ahead (it waits, not serving, for restore-etcd to catch it up), or
   * declined by a destination that does not restore ahead, which skips the step: restore-etcd does all of it.
   */
  private async completeAhead(record: MigrationRecord, result: CommandResult<'restore'>): Promise<{ message: string }> {
    const now = this.journal.now();
    const etcd = result.etcd;
    if (etcd?.ahead !== true) {
      const message =
        'the destination does not restore ahead (an HA cluster, the kubernetes runtime or a hibernated shoot): restore-etcd restores etcd in full after the owner change';
      await this.journal.save(
        continueWithoutStep(record, { step: 'restore-etcd-ahead', now, outcome: 'skipped', reason: message }),
      );
      return { message };
    }
    const message =
      etcd.aheadRevision === undefined
        ? `etcd restored ahead to revision ${etcd.restoredRevision} from ${etcd.snapshots} snapshots (not serving)`
        : `etcd restored ahead to revision ${etcd.aheadRevision}, refreshed to revision ${etcd.restoredRevision} from ${etcd.snapshots} snapshots (not serving)`;
    const done = completeStep(record, { step: 'restore-etcd-ahead', now, message });
    await this.journal.save(
      done.preCopy ? { ...done, preCopy: { ...done.preCopy, aheadRevision: etcd.restoredRevision } } : done,
    );
    return { message };
  }

  /**
   * persist-shootstate: the migrate answer's ShootState becomes the shoot's ShootState; completes
   * migrate-extensions too. Answers the path, which the flow takes from here (also after a resume).
   */
  async persistShootState(
    ref: MigrationRef,
    migrateOutput: unknown,
  ): Promise<{ version: number; path?: MigrationPath }> {
    let record = await this.journal.current(ref);
    const now = this.journal.now();
    const answer = parseCommandSuccess('migrate', migrateOutput);
    record = completeStep(record, {
      step: 'migrate-extensions',
      now,
      message: `${answer.result.extensions.length} extensions migrated`,
    });
    record = await this.journal.save(startStep(record, { step: 'persist-shootstate', now }));
    const version = await saveKeepingSecrets(
      this.options.shootStates,
      { project: ref.project, name: ref.name },
      answer.result.shootState,
    );
    await this.journal.save(
      completeStep(record, {
        step: 'persist-shootstate',
        now: this.journal.now(),
        shootStateVersion: version,
        message: `ShootState version ${version}`,
      }),
    );
    await this.answered(ref, record, 'migrate-extensions');
    return { version, ...(record.path ? { path: record.path } : {}) };
  }
}

/** The ways out that leave the shoot on the source (the destination lost). */
const WALKS_BACK = new Set<string | undefined>(['abort-to-source', 'force']);

const WAY_OUT_MESSAGES: Record<
  'source' | 'destination',
  Partial<Record<NonNullable<CommandResult<'live-walk'>['wayOut']>, string>>
> = {
  source: {
    continue: "the destination's voters hold the quorum, the walk goes on without the source",
    force:
      'the voters are split across the seeds: the owner record goes to the destination, whose member is forced into a cluster of its own with every acknowledged write',
    'bad-path': "the destination's member only learnt and was wiped: the bad path restores the snapshots",
  },
  destination: {
    'abort-to-source':
      "the source's voters hold the quorum: the owner record goes back to the source and the destination's members are removed",
    force:
      'the voters are split across the seeds: the owner record goes back to the source, whose member is forced into a cluster of its own with every acknowledged write',
  },
};

/** What the step's message says of the fidelity check (docs/design.md section 4). */
function fidelityNote(f: NonNullable<CommandResult<'restore'>['etcd']>['fidelity']): string {
  if (f === undefined) return '';
  if (f.overridden)
    return `; OVERRIDDEN by the operator: key-space digest ${f.digest} differs from ${f.expected ?? '?'} named by ${f.against ?? '?'}`;
  if (f.expected !== undefined)
    return `; key-space digest ${f.digest} as the source's ${f.against ?? 'snapshot'} names`;
  return `; key-space digest not checked: ${f.unchecked ?? 'nothing named one'}`;
}

function summariseAnswer(result: unknown): string {
  const r = result as { etcd?: CommandResult<'restore'>['etcd']; extensions?: unknown[]; deleted?: boolean };
  if (r.etcd) {
    const caughtUp =
      r.etcd.aheadRevision === undefined
        ? ''
        : `, caught up from the restore ahead at revision ${r.etcd.aheadRevision}`;
    return `etcd restored to revision ${r.etcd.restoredRevision} from ${r.etcd.snapshots} snapshots${r.etcd.final ? ' (final)' : ''}${caughtUp}${fidelityNote(r.etcd.fidelity)}`;
  }
  if (r.deleted !== undefined) return r.deleted ? 'control plane deleted' : 'control plane was gone already';
  if (r.extensions) return `${r.extensions.length} extensions`;
  return 'done';
}
