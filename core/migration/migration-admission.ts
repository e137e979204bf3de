import { z } from 'zod';
import { NotFoundError } from '../errors.js';
import type { IdSource } from '../garden/context.js';
import { randomIds } from '../garden/context.js';
import { chooseDestination, type SchedulingPolicy } from '../garden/placement.js';
import { parseInput } from '../garden/validate.js';
import { duration } from '../model/duration.js';
import { dns1123Label } from '../model/names.js';
import { admitMigration, type AdmissionDecision } from './admission.js';
import { messageOf, type MigrationJournal, type MigrationRef } from './journal.js';
import { admissionLock } from './lock.js';
import {
  failStep,
  migrationProgress,
  resumePoint,
  stepsLeft,
  type MigrationPath,
  type MigrationRecord,
} from './record.js';
import type { MigrationStepId } from './steps.js';
import { withChosenPath } from './path-steps.js';
import { fenceBound } from '../ownership/fence.js';
import type { OwnershipTimings } from '../ownership/timings.js';

/** The migrate-shoot state machine. */
export interface MigrationWorkflow {
  start(options: { name: string; input: MigrationExecutionInput }): Promise<void>;
  /**
   * Whether the execution of this name has ended (succeeded, failed, timed out, stopped); false while it
   * runs or when there is none (it may be starting).
   */
  ended(name: string): Promise<boolean>;
}

/** What an execution of migrate-shoot starts with; every step Lambda gets `ref`. */
export interface MigrationExecutionInput {
  ref: MigrationRef;
  /** The step to start at: the resume point (admit-and-lock already ran in the API). */
  resumeFrom: MigrationStepId;
}

export const migrateRequest = z
  .object({
    destinationSeed: dns1123Label.optional(),
    mode: z.enum(['auto', 'good', 'bad', 'live']).optional(),
    /**
     * The operator's override of the fidelity check (docs/design.md section 4, "Fidelity"): resume a migration
     * that ended in Error at restore-etcd and let the destination serve even where its restored key space
     * differs from the digest the source's snapshot names. The record keeps it (`overrides`).
     */
    acceptEtcdDigestMismatch: z.boolean().optional(),
    /**
     * Wait at least this long after the owner change for the source's final snapshot before the copy takes
     * the latest one instead (a Go-style duration, 1s to 24h): no loss for a source cut off that long, at the
     * price of the shoot's recovery. Default: the source's bounds decide (docs/design.md section 4, "Copy").
     */
    finalSnapshotWait: duration.optional(),
  })
  .strict();

export interface MigrationView extends MigrationRecord {
  progress: number;
}

export interface MigrationAdmissionOptions {
  journal: MigrationJournal;
  workflow: MigrationWorkflow;
  scheduling?: SchedulingPolicy;
  ids?: IdSource;
  /** The agents' heartbeat interval, for predicting the path in a dry run (default 10 s, as choose-path). */
  heartbeatIntervalMs?: number;
  /** The deployment's ownership timings, for the fence bound a dry run reports (default: the design's). */
  ownershipTimings?: Partial<OwnershipTimings>;
}

/** What `POST .../migrate?dryRun=All` answers: the admission's outcome and the flow it would run. */
export interface MigrationPreview {
  dryRun: true;
  migrationId: string;
  resumed: boolean;
  sourceSeed: string;
  destinationSeed: string;
  resumeFrom: MigrationStepId;
  mode: MigrationRecord['mode'];
  /** The path choose-path would take now (a resumed migration keeps the one it chose). */
  path: MigrationPath;
  pathReason: string;
  /** The steps left to run on that path, in order. */
  steps: { id: MigrationStepId; title: string }[];
  /** How long after the owner change the source has fenced itself at the latest (the restore waits for it). */
  fenceBoundMs: number;
}

/**
 * The API's part of a migration (docs/design.md section 5, step 1): admit it, take the per-shoot lock with a
 * conditional write, start (or resume) the state machine; and show the current or last migration.
 */
export class MigrationAdmission {
  private readonly journal: MigrationJournal;
  private readonly ids: IdSource;

  constructor(private readonly options: MigrationAdmissionOptions) {
    this.journal = options.journal;
    this.ids = options.ids ?? randomIds;
  }

  /** `POST .../migrate`. */
  async start(
    project: string,
    name: string,
    body: unknown,
  ): Promise<{ migrationId: string; resumed: boolean; destinationSeed: string; resumeFrom: MigrationStepId }> {
    const { migrations } = this.journal;
    const admission = await this.admit(project, name, body, { repair: true });
    const record = admission.record;
    await migrations.put(record, admissionLock(admission));
    await this.journal.mirror(record);
    const resumeFrom = resumePoint(record) ?? 'finalize';
    try {
      await this.options.workflow.start({
        name: executionName(record),
        input: { ref: { project, name, migrationId: record.id }, resumeFrom },
      });
    } catch (error) {
      // Without an execution nobody would ever release the lock: end the attempt in Error, so that a
      // repeated call resumes it.
      await this.journal.save(
        failStep(record, {
          step: resumeFrom,
          now: this.journal.now(),
          message: `the state machine could not be started: ${messageOf(error)}`,
        }),
      );
      throw error;
    }
    await this.journal.events.publish('MigrationStarted', {
      project,
      shoot: name,
      migrationId: record.id,
      source: record.source.name,
      destination: record.destination.name,
      mode: record.mode,
      resumed: admission.action === 'resume',
      resumeFrom,
    });
    return {
      migrationId: record.id,
      resumed: admission.action === 'resume',
      destinationSeed: record.destination.name,
      resumeFrom,
    };
  }

  /**
   * `POST .../migrate?dryRun=All`: what the same request would do (destination, path, the steps left, the
   * fence bound), with every admission rule applied and nothing written or started.
   */
  async preview(project: string, name: string, body: unknown): Promise<MigrationPreview> {
    const admission = await this.admit(project, name, body, { repair: false });
    const record =
      admission.record.path === undefined
        ? await withChosenPath(this.journal, admission.record, this.options.heartbeatIntervalMs)
        : admission.record;
    const resumeFrom = resumePoint(admission.record) ?? 'finalize';
    const left = stepsLeft(record);
    return {
      dryRun: true,
      migrationId: record.id,
      resumed: admission.action === 'resume',
      sourceSeed: record.source.name,
      destinationSeed: record.destination.name,
      resumeFrom,
      mode: record.mode,
      path: record.path!,
      pathReason: record.pathReason ?? '',
      steps: left.map((s) => ({ id: s.id, title: s.title })),
      fenceBoundMs: fenceBound(this.options.ownershipTimings),
    };
  }

  private async admit(
    project: string,
    name: string,
    body: unknown,
    options: { repair: boolean },
  ): Promise<AdmissionDecision> {
    const { garden, migrations } = this.journal;
    const request = parseInput(migrateRequest, body ?? {});
    const shoot = await this.journal.shoot(project, name);
    const running = await this.withoutStaleLock(await migrations.get(project, name), options);
    const source = shoot.status.seedName ? await garden.getSeed(shoot.status.seedName) : undefined;
    const wanted = running?.state === 'Error' ? running.destination.name : request.destinationSeed;
    let destination = wanted ? await garden.getSeed(wanted) : undefined;
    let schedulerSummary: string | undefined;
    if (!wanted && running?.state !== 'Running' && shoot.status.seedName) {
      const choice = await chooseDestination({
        repo: garden,
        project,
        name,
        exclude: [],
        policy: this.options.scheduling ?? {},
      });
      schedulerSummary = choice.summary;
      destination = choice.seedName ? await garden.getSeed(choice.seedName) : undefined;
    }
    return admitMigration({
      shoot,
      source,
      destination,
      running,
      request,
      id: this.ids.uuid(),
      now: this.journal.now(),
      ...(schedulerSummary ? { schedulerSummary } : {}),
    });
  }

  /**
   * A migration whose record says Running while its execution has ended holds a lock nobody will
   * release: an execution that died without recording it (a runtime error no Catch reaches, an
   * operator's StopExecution). It ends in Error at its running step, so that this call resumes it.
   */
  private async withoutStaleLock(
    record: MigrationRecord | undefined,
    options: { repair: boolean },
  ): Promise<MigrationRecord | undefined> {
    if (record?.state !== 'Running' || !(await this.options.workflow.ended(executionName(record)))) return record;
    const step = record.steps.find((s) => s.state === 'running')?.id ?? resumePoint(record) ?? 'finalize';
    const failed = failStep(record, {
      step,
      now: this.journal.now(),
      message: `execution ${executionName(record)} ended without recording how; resumed from here`,
    });
    return options.repair ? this.journal.save(failed) : failed;
  }

  /** `GET .../migration`: the current or last migration with its steps. */
  async get(project: string, name: string): Promise<MigrationView> {
    const record = await this.journal.migrations.get(project, name);
    if (!record) throw new NotFoundError(`shoot "${project}/${name}" has never been migrated`);
    return { ...record, progress: migrationProgress(record) };
  }
}

/** One execution per attempt: a repeated start of the same attempt is a no-op. */
function executionName(record: Pick<MigrationRecord, 'id' | 'attempts'>): string {
  return `${record.id}-${record.attempts}`;
}
