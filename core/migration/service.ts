import { z } from 'zod';
import { parseCommandSuccess, parseFailureCause } from '../commands/protocol.js';
import type { SeedCommand } from '../commands/schema.js';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Clock, EventSink, IdSource } from '../garden/context.js';
import { discardEvents, randomIds, systemClock } from '../garden/context.js';
import type { SchedulingPolicy } from '../garden/placement.js';
import { chooseDestination } from '../garden/placement.js';
import type { GardenRepository } from '../garden/repository.js';
import { parseInput } from '../garden/validate.js';
import { dns1123Label } from '../model/names.js';
import type { Shoot } from '../model/shoot.js';
import { ownerRecordName } from '../ownership/record-name.js';
import type { OwnerRecords } from '../ownership/owner-records.js';
import type { OwnershipTimings } from '../ownership/timings.js';
import { currentFinalSnapshot } from '../snapshots/lookup.js';
import type { SnapshotStore } from '../snapshots/store.js';
import type { ShootStateStore } from '../shootstate/store.js';
import { SHOOT_STATE_API_VERSION, type PackedShootState } from '../shootstate/types.js';
import { admitMigration } from './admission.js';
import { commandForStep } from './commands.js';
import { admissionLock, holdsLock } from './lock.js';
import { choosePath } from './path.js';
import {
  completeStep,
  failStep,
  migrationLastOperation,
  migrationProgress,
  resumePoint,
  setPath,
  startStep,
  switchToBadPath,
  type MigrationRecord,
} from './record.js';
import { isMigrationStepId, type MigrationStepId } from './steps.js';
import type { MigrationStore } from './store.js';

/** Starts the migrate-shoot state machine. */
export interface MigrationWorkflow {
  start(options: { name: string; input: MigrationExecutionInput }): Promise<void>;
}

/** What an execution of migrate-shoot starts with; every step Lambda gets `ref`. */
export interface MigrationExecutionInput {
  ref: MigrationRef;
  /** The step to start at: the resume point (admit-and-lock already ran in the API). */
  resumeFrom: MigrationStepId;
}

export interface MigrationRef {
  project: string;
  name: string;
  migrationId: string;
}

export interface MigrationServiceOptions {
  garden: GardenRepository;
  migrations: MigrationStore;
  shootStates: ShootStateStore;
  owners: OwnerRecords;
  /** The backup bucket of a seed as a snapshot store (the source's, to find its final snapshot). */
  snapshots: (bucket: string) => SnapshotStore;
  workflow: MigrationWorkflow;
  internalDomain: string;
  /** The garden's state bucket: where agents put ShootState blobs over 100 KB. */
  stateBucket: string;
  events?: EventSink;
  clock?: Clock;
  ids?: IdSource;
  scheduling?: SchedulingPolicy;
  /** Seed agents' heartbeat interval, for choosing the path (default 10 s). */
  heartbeatIntervalMs?: number;
  /** How long the good path waits for the source's final snapshot before switching to the bad path (default 10 min). */
  waitFinalSnapshotMs?: number;
  /** What commands tell agents about their task's limits; the state machine's TimeoutSeconds match. */
  commandTimeoutSeconds?: number;
  commandHeartbeatSeconds?: number;
  /** The sidecars' owner-check timings, for the copy's fence bound. */
  fenceTimings?: Partial<OwnershipTimings>;
  /**
   * How long the copy waits for the source's final snapshot; never shorter than the fence bound of
   * `fenceTimings` (the copy refuses otherwise). Default: the copy's own (10 minutes).
   */
  copyWaitForFinalMs?: number;
}

export const migrateRequest = z
  .object({ destinationSeed: dns1123Label.optional(), mode: z.enum(['auto', 'good', 'bad']).optional() })
  .strict();

export interface MigrationView extends MigrationRecord {
  progress: number;
}

/**
 * Migration of a shoot's control plane between seeds (DESIGN section 5): admission and the lock for
 * the API, and one method per garden step of the migrate-shoot state machine. Every method is
 * idempotent (Step Functions retries them) and writes the record only under the migration's lock.
 */
export class MigrationService {
  private readonly o: Required<Pick<MigrationServiceOptions, 'heartbeatIntervalMs' | 'waitFinalSnapshotMs' | 'commandTimeoutSeconds' | 'commandHeartbeatSeconds'>> & MigrationServiceOptions;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly events: EventSink;

  constructor(options: MigrationServiceOptions) {
    this.o = { heartbeatIntervalMs: 10_000, waitFinalSnapshotMs: 600_000, commandTimeoutSeconds: 300, commandHeartbeatSeconds: 60, ...options };
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? randomIds;
    this.events = options.events ?? discardEvents;
  }

  /** `POST .../migrate`: admits, takes the lock, starts (or resumes) the state machine. */
  async start(project: string, name: string, body: unknown): Promise<{ migrationId: string; resumed: boolean; destinationSeed: string; resumeFrom: MigrationStepId }> {
    const request = parseInput(migrateRequest, body ?? {});
    const shoot = await this.shoot(project, name);
    const running = await this.o.migrations.get(project, name);
    const source = shoot.status.seedName ? await this.o.garden.getSeed(shoot.status.seedName) : undefined;
    const wanted = running?.state === 'Error' ? running.destination.name : request.destinationSeed;
    let destination = wanted ? await this.o.garden.getSeed(wanted) : undefined;
    let schedulerSummary: string | undefined;
    if (!wanted && running?.state !== 'Running' && shoot.status.seedName) {
      const choice = await chooseDestination({ repo: this.o.garden, project, name, exclude: [], policy: this.o.scheduling ?? {} });
      schedulerSummary = choice.summary;
      destination = choice.seedName ? await this.o.garden.getSeed(choice.seedName) : undefined;
    }
    const admission = admitMigration({
      shoot, source, destination, running, request, id: this.ids.uuid(), now: this.clock.now(),
      ...(schedulerSummary ? { schedulerSummary } : {}),
    });
    const record = admission.record;
    await this.o.migrations.put(record, admissionLock(admission));
    await this.mirror(record);
    const resumeFrom = resumePoint(record) ?? 'finalize';
    try {
      await this.o.workflow.start({ name: `${record.id}-${record.attempts}`, input: { ref: { project, name, migrationId: record.id }, resumeFrom } });
    } catch (error) {
      // Without an execution nobody would ever release the lock: end the attempt in Error, so that a
      // repeated call resumes it.
      await this.save(failStep(record, { step: resumeFrom, now: this.clock.now(), message: `the state machine could not be started: ${messageOf(error)}` }));
      throw error;
    }
    await this.events.publish('MigrationStarted', {
      project, shoot: name, migrationId: record.id, source: record.source.name, destination: record.destination.name,
      mode: record.mode, resumed: admission.action === 'resume', resumeFrom,
    });
    return { migrationId: record.id, resumed: admission.action === 'resume', destinationSeed: record.destination.name, resumeFrom };
  }

  /** `GET .../migration`: the current or last migration with its steps. */
  async get(project: string, name: string): Promise<MigrationView> {
    const record = await this.o.migrations.get(project, name);
    if (!record) throw new NotFoundError(`shoot "${project}/${name}" has never been migrated`);
    return { ...record, progress: migrationProgress(record) };
  }

  /** choose-path: good while the source's heartbeat is fresh (mode auto), else bad. */
  async choosePath(ref: MigrationRef): Promise<{ path: 'good' | 'bad'; hibernated: boolean }> {
    const record = await this.record(ref);
    if (record.path) return { path: record.path, hibernated: record.guards.hibernated };
    const source = await this.o.garden.getSeed(record.source.name);
    const heartbeat = source?.status.lastHeartbeatTime ? Date.parse(source.status.lastHeartbeatTime) : undefined;
    const now = this.clock.now();
    const decision = choosePath({
      mode: record.mode,
      sourceHeartbeatAge: heartbeat === undefined ? undefined : now.getTime() - heartbeat,
      heartbeatInterval: this.o.heartbeatIntervalMs,
    });
    const next = await this.save(setPath(record, { ...decision, now }));
    return { path: next.path!, hibernated: next.guards.hibernated };
  }

  /**
   * Starts a step done by a seed agent and returns its command (without the task token, which the
   * state machine adds) and where to send it.
   */
  async beginCommand(ref: MigrationRef, step: MigrationStepId): Promise<{ command: SeedCommand; queueUrl: string; messageGroupId: string }> {
    const record = await this.save(startStep(await this.record(ref), { step, now: this.clock.now() }));
    const copy = step === 'restore-etcd' ? record.copy : undefined;
    const shootState = step === 'restore-extensions' ? await this.restoreShootState(record) : undefined;
    const command = commandForStep({
      record, step, now: this.clock.now(), stateBucket: this.o.stateBucket,
      timeoutSeconds: this.o.commandTimeoutSeconds, heartbeatSeconds: this.o.commandHeartbeatSeconds,
      ...(shootState ? { shootState } : {}),
      ...(copy ? { etcd: { final: copy.final, ...(copy.lastRevision === undefined ? {} : { expectedLastRevision: copy.lastRevision }) } } : {}),
    });
    const seedName = command.seed;
    const seed = await this.o.garden.getSeed(seedName);
    if (!seed?.status.commandQueueUrl) throw new NotFoundError(`seed ${seedName} has no command queue`);
    return { command, queueUrl: seed.status.commandQueueUrl, messageGroupId: record.shoot.technicalID };
  }

  /** A seed step answered: record it (the migrate answer is persisted by the next step). */
  async completeCommand(ref: MigrationRef, step: MigrationStepId, output: unknown): Promise<{ message: string }> {
    const record = await this.record(ref);
    const type = commandForStepType(step);
    const answer = parseCommandSuccess(type, output);
    const message = summariseAnswer(answer.result);
    await this.save(step === 'migrate-extensions' ? record : completeStep(record, { step, now: this.clock.now(), message }));
    return { message };
  }

  /** persist-shootstate: the migrate answer's ShootState becomes the shoot's ShootState; completes migrate-extensions too. */
  async persistShootState(ref: MigrationRef, migrateOutput: unknown): Promise<{ version: number }> {
    let record = await this.record(ref);
    const now = this.clock.now();
    const answer = parseCommandSuccess('migrate', migrateOutput);
    record = completeStep(record, { step: 'migrate-extensions', now, message: `${answer.result.extensions.length} extensions migrated` });
    record = await this.save(startStep(record, { step: 'persist-shootstate', now }));
    const version = await this.o.shootStates.save({ project: ref.project, name: ref.name, state: answer.result.shootState });
    await this.save(completeStep(record, { step: 'persist-shootstate', now: this.clock.now(), shootStateVersion: version, message: `ShootState version ${version}` }));
    return { version };
  }

  /** delete-owner-record: the source's sidecar sees not-owner, fences, and takes its final snapshot. */
  async deleteOwnerRecord(ref: MigrationRef): Promise<{ ownerChangedAt: number; hibernated: boolean }> {
    const record = await this.save(startStep(await this.record(ref), { step: 'delete-owner-record', now: this.clock.now() }));
    const name = this.ownerRecord(record);
    await this.o.owners.delete({ name, ...(record.source.identity ? { expected: record.source.identity } : {}) });
    const done = await this.save(completeStep(record, { step: 'delete-owner-record', now: this.clock.now(), message: `deleted ${name}` }));
    return { ownerChangedAt: Date.parse(stepOf(done, 'delete-owner-record').endedAt!), hibernated: done.guards.hibernated };
  }

  /** wait-final-snapshot, one poll: whether the source's final full snapshot (taken after the owner change) is there. */
  async waitFinalSnapshot(ref: MigrationRef): Promise<{ found: boolean; deadlinePassed: boolean; snapshot?: string }> {
    let record = await this.record(ref);
    const now = this.clock.now();
    if (stepOf(record, 'wait-final-snapshot').state !== 'running') record = await this.save(startStep(record, { step: 'wait-final-snapshot', now }));
    const ownerChangedAt = Date.parse(stepOf(record, 'delete-owner-record').endedAt ?? now.toISOString());
    const bucket = record.source.backupBucket;
    if (!bucket) throw new NotFoundError(`source seed ${record.source.name} has no backup bucket`);
    const snapshots = await this.o.snapshots(bucket).list(record.shoot.technicalID);
    // Seeds' clocks may lag the garden's a little; a final snapshot from before the owner change is an older migration's.
    const final = currentFinalSnapshot(snapshots, { notBefore: Math.floor((ownerChangedAt - 30_000) / 1000) });
    if (final) {
      await this.save(completeStep(record, { step: 'wait-final-snapshot', now, message: `final snapshot ${final.name}` }));
      return { found: true, deadlinePassed: false, snapshot: final.name };
    }
    const started = Date.parse(stepOf(record, 'wait-final-snapshot').startedAt ?? now.toISOString());
    return { found: false, deadlinePassed: now.getTime() - started >= this.o.waitFinalSnapshotMs };
  }

  /** A good-path step timed out or failed: continue at set-owner-destination. */
  async switchToBadPath(ref: MigrationRef, error: unknown): Promise<{ path: 'bad' }> {
    const record = await this.record(ref);
    // The step that gave up is the one running; a wait that ran out has no error of its own.
    const failedStep = record.steps.find((s) => s.state === 'running')?.id ?? resumePoint(record) ?? 'migrate-extensions';
    await this.save(switchToBadPath(record, { failedStep, reason: describeError(error), now: this.clock.now() }));
    return { path: 'bad' };
  }

  /** set-owner-destination: ownership passes to the destination; in the bad path this is what fences the source. */
  async setOwnerDestination(ref: MigrationRef): Promise<{ ownerChangedAt: number }> {
    const record = await this.save(startStep(await this.record(ref), { step: 'set-owner-destination', now: this.clock.now() }));
    const name = this.ownerRecord(record);
    const identity = record.destination.identity;
    if (!identity) throw new NotFoundError(`destination seed ${record.destination.name} has no identity`);
    const current = await this.o.owners.get(name);
    if (current && current.value !== identity && current.value !== record.source.identity) {
      throw new ConflictError(`owner record ${name} names ${current.value}, neither the source nor the destination of this migration`, { code: 'OwnerRecordUnexpected' });
    }
    await this.o.owners.set({ name, value: identity, expected: current?.value ?? null });
    const done = await this.save(completeStep(record, { step: 'set-owner-destination', now: this.clock.now(), message: `${name} = ${identity}` }));
    await this.events.publish('OwnershipTransferred', { project: ref.project, shoot: ref.name, migrationId: ref.migrationId, from: record.source.name, to: record.destination.name, record: name });
    return { ownerChangedAt: Date.parse(stepOf(done, 'set-owner-destination').endedAt!) };
  }

  /** copy-snapshots starts: the input of the copy-snapshots state machine. */
  async beginCopy(ref: MigrationRef): Promise<{ technicalID: string; sourceBucket: string; destinationBucket: string; ownerChangedAt: number; sourceHibernated: boolean; fenceTimings?: Partial<OwnershipTimings>; waitForFinalTimeoutMs?: number }> {
    const record = await this.save(startStep(await this.record(ref), { step: 'copy-snapshots', now: this.clock.now() }));
    const sourceBucket = record.source.backupBucket;
    const destinationBucket = record.destination.backupBucket;
    if (!sourceBucket || !destinationBucket) throw new NotFoundError('both seeds need a backup bucket to copy snapshots');
    const ownerChangedAt = Date.parse(stepOf(record, 'set-owner-destination').endedAt ?? this.clock.now().toISOString());
    return {
      technicalID: record.shoot.technicalID, sourceBucket, destinationBucket, ownerChangedAt, sourceHibernated: record.guards.hibernated,
      ...(this.o.fenceTimings ? { fenceTimings: this.o.fenceTimings } : {}),
      ...(this.o.copyWaitForFinalMs === undefined ? {} : { waitForFinalTimeoutMs: this.o.copyWaitForFinalMs }),
    };
  }

  async completeCopy(ref: MigrationRef, output: { copied?: number; skipped?: number; bytes?: number; finalFound?: boolean; lastRevision?: number }): Promise<{ final: boolean; expectedLastRevision?: number }> {
    const record = await this.record(ref);
    const message = `${output.copied ?? 0} copied, ${output.skipped ?? 0} skipped, ${output.bytes ?? 0} bytes, ${output.finalFound ? 'final snapshot' : 'no final snapshot (latest used)'}, last revision ${output.lastRevision ?? '?'}`;
    const copy = { final: output.finalFound === true, ...(output.lastRevision === undefined ? {} : { lastRevision: output.lastRevision }) };
    await this.save({ ...completeStep(record, { step: 'copy-snapshots', now: this.clock.now(), message }), copy });
    await this.events.publish('SnapshotsCopied', { project: ref.project, shoot: ref.name, migrationId: ref.migrationId, ...output });
    return { final: output.finalFound === true, ...(output.lastRevision === undefined ? {} : { expectedLastRevision: output.lastRevision }) };
  }

  /** finalize: the shoot moves to the destination (counts too), lastOperation Restore Succeeded, lock released. */
  async finalize(ref: MigrationRef): Promise<{ seedName: string }> {
    let record = await this.save(startStep(await this.record(ref), { step: 'finalize', now: this.clock.now() }));
    for (let attempt = 0; ; attempt++) {
      const shoot = await this.shoot(ref.project, ref.name);
      if (shoot.status.seedName === record.destination.name) break;
      try {
        await this.o.garden.moveShoot(
          { ...shoot, spec: { ...shoot.spec, seedName: record.destination.name }, status: { ...shoot.status, seedName: record.destination.name } },
          { fromSeed: record.source.name, toSeed: record.destination.name, expectedVersion: shoot.metadata.resourceVersion },
        );
        break;
      } catch (error) {
        if (!(error instanceof ConflictError) || error.code !== 'Conflict' || attempt >= 5) throw error;
      }
    }
    record = await this.save(completeStep(record, { step: 'finalize', now: this.clock.now(), message: `shoot placed on ${record.destination.name}` }));
    await this.events.publish('MigrationSucceeded', {
      project: ref.project, shoot: ref.name, migrationId: ref.migrationId, source: record.source.name, destination: record.destination.name,
      path: record.path, switchedToBadPath: record.switchedToBadPathAt !== undefined,
    });
    return { seedName: record.destination.name };
  }

  /** A step failed for good: the migration ends in Error; calling migrate again resumes it. */
  async fail(ref: MigrationRef, step: string, error: unknown): Promise<void> {
    const record = await this.record(ref);
    if (record.state !== 'Running') return;
    const failed = isMigrationStepId(step) ? step : (record.steps.find((s) => s.state === 'running')?.id ?? resumePoint(record) ?? 'finalize');
    const next = await this.save(failStep(record, { step: failed, now: this.clock.now(), message: describeError(error) }));
    await this.events.publish('MigrationFailed', { project: ref.project, shoot: ref.name, migrationId: ref.migrationId, step: failed, error: next.error?.message });
  }

  /**
   * The ShootState the restore uses. When none was ever persisted (a bad-path migration of a shoot whose
   * state was never saved), the extensions are restored from an empty state: each is reconciled from its
   * spec, and their external resources are adopted, which is what restore without saved state means.
   */
  private async restoreShootState(record: MigrationRecord): Promise<{ state: PackedShootState; version: number }> {
    const stored = await this.o.shootStates.load({ project: record.shoot.project, name: record.shoot.name });
    if (stored) return { state: stored.state, version: stored.version };
    return {
      version: 0,
      state: { apiVersion: SHOOT_STATE_API_VERSION, kind: 'ShootState', shoot: record.shoot, extensions: [], collectedAt: this.clock.now().toISOString(), collectedAfter: 'reconcile' },
    };
  }

  private ownerRecord(record: MigrationRecord): string {
    return ownerRecordName({ shoot: record.shoot.name, project: record.shoot.project, internalDomain: this.o.internalDomain });
  }

  private async shoot(project: string, name: string): Promise<Shoot> {
    const shoot = await this.o.garden.getShoot(project, name);
    if (!shoot) throw new NotFoundError(`shoot "${project}/${name}" not found`);
    return shoot;
  }

  private async record(ref: MigrationRef): Promise<MigrationRecord> {
    const record = await this.o.migrations.get(ref.project, ref.name);
    if (!record || record.id !== ref.migrationId) throw new ConflictError(`migration ${ref.migrationId} is not the current migration of ${ref.project}/${ref.name}`, { code: 'MigrationLockLost' });
    return record;
  }

  /** Writes under the lock, then shows the migration on the shoot (lastOperation, status.migration). */
  private async save(record: MigrationRecord): Promise<MigrationRecord> {
    await this.o.migrations.put({ ...record, updatedAt: this.clock.now().toISOString() }, holdsLock(record.id));
    await this.mirror(record);
    return record;
  }

  private async mirror(record: MigrationRecord): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const shoot = await this.o.garden.getShoot(record.shoot.project, record.shoot.name);
      if (!shoot) return;
      const lastOperation = { ...migrationLastOperation(record, this.clock.now()), lastUpdateTime: this.clock.now().toISOString() };
      const step = record.steps.find((s) => s.state === 'running')?.id ?? record.lastCompletedStep;
      const migration = { id: record.id, state: record.state, path: record.path ?? null, source: record.source.name, destination: record.destination.name, step: step ?? null, progress: migrationProgress(record) };
      try {
        await this.o.garden.updateShoot({ ...shoot, status: { ...shoot.status, lastOperation, migration } }, shoot.metadata.resourceVersion);
        return;
      } catch (error) {
        // Another writer (the API, the audit) changed the shoot meanwhile: read it again.
        if (!(error instanceof ConflictError)) throw error;
      }
    }
  }
}

function stepOf(record: MigrationRecord, id: MigrationStepId) {
  return record.steps.find((s) => s.id === id)!;
}

function commandForStepType(step: MigrationStepId) {
  switch (step) {
    case 'migrate-extensions':
      return 'migrate' as const;
    case 'delete-source-control-plane':
      return 'delete-control-plane' as const;
    case 'restore-etcd':
    case 'restore-extensions':
      return 'restore' as const;
    default:
      throw new RangeError(`step ${step} is not done by a seed agent`);
  }
}

function summariseAnswer(result: unknown): string {
  const r = result as { etcd?: { restoredRevision: number; snapshots: number; final: boolean }; extensions?: unknown[]; deleted?: boolean };
  if (r.etcd) return `etcd restored to revision ${r.etcd.restoredRevision} from ${r.etcd.snapshots} snapshots${r.etcd.final ? ' (final)' : ''}`;
  if (r.deleted !== undefined) return r.deleted ? 'control plane deleted' : 'control plane was gone already';
  if (r.extensions) return `${r.extensions.length} extensions`;
  return 'done';
}

/** A Step Functions error (`{Error, Cause}`) or a thrown error, in one line for operators. */
export function describeError(error: unknown): string {
  const e = error as { Error?: string; Cause?: string } | undefined;
  if (e && typeof e === 'object' && typeof e.Error === 'string') {
    const agent = parseFailureCause(e.Cause);
    if (agent) return `${e.Error}: ${agent.message}`;
    let cause = e.Cause ?? '';
    try {
      const parsed = JSON.parse(cause) as { errorMessage?: string };
      if (parsed.errorMessage) cause = parsed.errorMessage;
    } catch {
      // Cause is plain text (timeouts, service errors): use it as it is.
    }
    if (e.Error === 'States.Timeout') return `States.Timeout: the seed did not answer in time${cause ? ` (${cause})` : ''}`;
    return `${e.Error}${cause ? `: ${cause}` : ''}`.slice(0, 2000);
  }
  return messageOf(error);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
