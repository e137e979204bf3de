import { parseCommandSuccess } from '../commands/protocol.js';
import type { SeedCommand } from '../commands/schema.js';
import { NotFoundError } from '../errors.js';
import { expiredLease } from '../garden/lease-monitor.js';
import type { ShootStateStore } from '../shootstate/store.js';
import { SHOOT_STATE_API_VERSION, type PackedShootState } from '../shootstate/types.js';
import { commandForStep } from './commands.js';
import type { MigrationJournal, MigrationRef } from './journal.js';
import { completeStep, startStep, type MigrationRecord } from './record.js';
import { sourceLeaseExpired, switchesEarly, waitsOnSource, type SourceWaitIndex } from './source-waits.js';
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
}

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
  async beginCommand(ref: MigrationRef, step: MigrationStepId, options: { taskToken?: string } = {}): Promise<{ command: SeedCommand; queueUrl: string; messageGroupId: string }> {
    const record = await this.journal.save(startStep(await this.journal.current(ref), { step, now: this.journal.now() }));
    const early = switchesEarly(record, step);
    if (early) {
      const source = await this.journal.garden.getSeed(record.source.name);
      const lease = source && expiredLease(source, this.journal.now());
      if (lease) throw sourceLeaseExpired(lease);
      if (options.taskToken && this.options.sourceWaits) {
        const { project, name } = record.shoot;
        await this.options.sourceWaits.put({ seed: record.source.name, project, name, migrationId: record.id, step, taskToken: options.taskToken, since: this.journal.now().toISOString() });
      }
    }
    const copy = step === 'restore-etcd' ? record.copy : undefined;
    const shootState = step === 'restore-extensions' ? await this.restoreShootState(record) : undefined;
    const command = commandForStep({
      record, step, now: this.journal.now(), stateBucket: this.options.stateBucket,
      timeoutSeconds: this.options.commandTimeoutSeconds ?? 300, heartbeatSeconds: this.options.commandHeartbeatSeconds ?? 60,
      ...(shootState ? { shootState } : {}),
      ...(copy ? { etcd: { final: copy.final, ...(copy.lastRevision === undefined ? {} : { expectedLastRevision: copy.lastRevision }) } } : {}),
    });
    const seed = await this.journal.garden.getSeed(command.seed);
    if (!seed?.status.commandQueueUrl) throw new NotFoundError(`seed ${command.seed} has no command queue`);
    return { command, queueUrl: seed.status.commandQueueUrl, messageGroupId: record.shoot.technicalID };
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
      state: { apiVersion: SHOOT_STATE_API_VERSION, kind: 'ShootState', shoot: record.shoot, extensions: [], collectedAt: this.journal.now().toISOString(), collectedAfter: 'reconcile' },
    };
  }
}

/** The seed agents' answers to those commands, and the ShootState a migrate answer carries. */
export class SeedAnswers {
  private readonly journal: MigrationJournal;

  constructor(private readonly options: { journal: MigrationJournal; shootStates: ShootStateStore; sourceWaits?: SourceWaitIndex }) {
    this.journal = options.journal;
  }

  /** The source answered: its filed task token is of no further use. */
  private async answered(ref: MigrationRef, record: MigrationRecord, step: MigrationStepId): Promise<void> {
    if (waitsOnSource(step)) await this.options.sourceWaits?.remove({ seed: record.source.name, project: ref.project, name: ref.name, migrationId: ref.migrationId, step });
  }

  /** A seed step answered: record it (the migrate answer is persisted by the next step). */
  async completeCommand(ref: MigrationRef, step: MigrationStepId, output: unknown): Promise<{ message: string }> {
    const record = await this.journal.current(ref);
    const type = stepDefinition(step).command;
    if (type === undefined) throw new RangeError(`step ${step} is not done by a seed agent`);
    const answer = parseCommandSuccess(type, output);
    const message = summariseAnswer(answer.result);
    await this.journal.save(step === 'migrate-extensions' ? record : completeStep(record, { step, now: this.journal.now(), message }));
    await this.answered(ref, record, step);
    return { message };
  }

  /** persist-shootstate: the migrate answer's ShootState becomes the shoot's ShootState; completes migrate-extensions too. */
  async persistShootState(ref: MigrationRef, migrateOutput: unknown): Promise<{ version: number }> {
    let record = await this.journal.current(ref);
    const now = this.journal.now();
    const answer = parseCommandSuccess('migrate', migrateOutput);
    record = completeStep(record, { step: 'migrate-extensions', now, message: `${answer.result.extensions.length} extensions migrated` });
    record = await this.journal.save(startStep(record, { step: 'persist-shootstate', now }));
    const version = await this.options.shootStates.save({ project: ref.project, name: ref.name, state: answer.result.shootState });
    await this.journal.save(completeStep(record, { step: 'persist-shootstate', now: this.journal.now(), shootStateVersion: version, message: `ShootState version ${version}` }));
    await this.answered(ref, record, 'migrate-extensions');
    return { version };
  }
}

function summariseAnswer(result: unknown): string {
  const r = result as { etcd?: { restoredRevision: number; snapshots: number; final: boolean }; extensions?: unknown[]; deleted?: boolean };
  if (r.etcd) return `etcd restored to revision ${r.etcd.restoredRevision} from ${r.etcd.snapshots} snapshots${r.etcd.final ? ' (final)' : ''}`;
  if (r.deleted !== undefined) return r.deleted ? 'control plane deleted' : 'control plane was gone already';
  if (r.extensions) return `${r.extensions.length} extensions`;
  return 'done';
}
