import { failureTolerance, type Shoot } from '../model/shoot.js';
import { formatOwnerValue } from '../ownership/owner-value.js';
import { MigrationTransitionError } from './errors.js';
import { MIGRATION_STEPS, stepDefinition, stepIndex, type MigrationStepId, type SkipGuardName } from './steps.js';

export type MigrationMode = 'auto' | 'good' | 'bad' | 'live';
export type MigrationPath = 'good' | 'bad' | 'live';
export type StepState = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';
export type MigrationState = 'Running' | 'Succeeded' | 'Error';

export interface MigrationSeed {
  name: string;
  /** The identity written into the owner record. */
  identity?: string;
  backupBucket?: string;
}

export interface MigrationStepStatus {
  id: MigrationStepId;
  title: string;
  state: StepState;
  startedAt?: string;
  endedAt?: string;
  message?: string;
  /** How often the step was started (a resume starts a failed step again). */
  attempts: number;
}

/**
 * The skip conditions of a migration, computed once when it is admitted and stored with it, so that every
 * Lambda of every attempt reads the same answers (Gardener's migrate flow computes them once, as named
 * booleans, before building the graph).
 */
export interface MigrationGuards {
  /** etcd runs at zero replicas: no sidecar, so no final snapshot will ever come (GEP-17 "Migration Flow Adaptations"). */
  hibernated: boolean;
  /** wait-final-snapshot runs, and copy-snapshots waits for a final snapshot up to its timeout. False when hibernated: the last full snapshot, taken when the shoot was hibernated, is the latest state. */
  waitForFinalSnapshot: boolean;
  /** The restore command starts etcd; false leaves the restored data with etcd at zero replicas until the shoot wakes up. */
  startEtcdAfterRestore: boolean;
  /** The shoot's HA setting: the destination restores a three-member etcd for `node` and `zone`. */
  failureTolerance?: 'node' | 'zone';
}

export interface MigrationRecord {
  apiVersion: 'core.gardenless.io/v1';
  kind: 'Migration';
  id: string;
  shoot: { project: string; name: string; technicalID: string };
  source: MigrationSeed;
  destination: MigrationSeed;
  mode: MigrationMode;
  /** Decided by choose-path; undefined before. */
  path?: MigrationPath;
  pathReason?: string;
  state: MigrationState;
  guards: MigrationGuards;
  steps: MigrationStepStatus[];
  lastCompletedStep?: MigrationStepId;
  /** When the good path gave up and the flow continued on the bad path. */
  switchedToBadPathAt?: string;
  badPathSwitch?: { failedStep: MigrationStepId; reason: string };
  /** Which ShootState the restore uses: the one persisted by this migration, or the last one persisted before. */
  shootState?: { source: 'migrated' | 'last-persisted'; version?: number };
  /** 1, plus one for every resume. */
  attempts: number;
  createdAt: string;
  updatedAt: string;
  finishedAt?: string;
  error?: { step: MigrationStepId; message: string };
  /**
   * The API record's TTL lowered for this migration (lower-api-record-ttl): from `from` seconds to `to`, and
   * once written, until when a resolver may still hold an answer given with `from` (the good path fences
   * no earlier). The switch writes the deployment's TTL back.
   */
  apiRecordTtl?: { from: number; to: number; cachedUntil?: string };
  /**
   * The live path: what the walk is of (etcd's cluster ID and the source's members when it began), as the
   * destination's survey answered it; every later round of the walk carries it back. With it, the
   * destination's load balancer, which the source's hands the shoot's connections over to from own-live on.
   */
  live?: {
    cluster: string;
    sourceMembers: { name: string; peerUrl: string; clientUrl: string }[];
    loadBalancer?: string;
    /**
     * The way out the destination took after the garden found the source lost mid-walk (docs/design.md
     * section 5, "Ways out"): `bad-path` once its member, which only learnt, was wiped (the snapshot path is
     * then safe to take), `force` or `continue` when the walk completes on the destination; after the
     * destination was lost, the source's: `abort-to-source` (its voters hold the quorum) or `force`.
     */
    wayOut?: 'continue' | 'force' | 'bad-path' | 'abort-to-source';
    /** How often live-reach had the walk taken again while both seeds held their leases (bounded). */
    walkedAgain?: number;
    /**
     * When the destination's latest walk round ends by its own timeout: a destination that lost its lease
     * but still runs (cut off from the garden, not from the source) may walk until then, so the way back
     * waits for it.
     */
    roundEndsAt?: string;
  };
  /** What copy-snapshots reported, for the restore: whether the copy holds the final snapshot, and its last revision. */
  copy?: { final: boolean; lastRevision?: number };
  /**
   * What the pre-copy did before the owner change (absent when it did not run or failed): objects copied and
   * found intact already, bytes copied, the revision the pre-copied snapshots reach, and the revision the
   * destination restored etcd ahead to when it did.
   */
  preCopy?: { copied: number; skipped: number; bytes: number; lastRevision: number; aheadRevision?: number };
  /**
   * What an operator overrode, when and in which attempt: `etcdDigestMismatch`, the destination serves etcd
   * even where its restored key space differs from the digest the source named (docs/design.md section 4,
   * "Fidelity"). Kept for the record's life.
   */
  overrides?: { etcdDigestMismatch?: { acceptedAt: string; attempt: number } };
  /**
   * An operator's longer wait for the source's final snapshot (a Go-style duration from the owner change): the
   * request's `finalSnapshotWait`, or the evacuated seed's. Absent: the source's bounds decide (`copyWait`).
   */
  finalSnapshotWait?: string;
  /**
   * How long the copy after the owner change waits for the source's final snapshot, as begin-copy decided it
   * (`finalWait` in core/snapshots/final-wait.ts): from `proceedAt` it copies the latest snapshot instead,
   * never before `floorAt` (the fence bound after the owner change).
   */
  copyWait?: {
    proceedAt: string;
    floorAt: string;
    basis: 'bounds' | 'bounds-since-lease-loss' | 'fixed' | 'explicit';
    reason: string;
    fenceBoundMs: number;
    /** The source's S3/S4 loss bound (ms) when it reported its settings. */
    lossBoundMs?: number;
  };
}

export function migrationGuards(shoot: Pick<Shoot, 'spec'>): MigrationGuards {
  const hibernated = shoot.spec.hibernation?.enabled === true;
  const tolerance = failureTolerance(shoot.spec);
  return {
    hibernated,
    waitForFinalSnapshot: !hibernated,
    startEtcdAfterRestore: !hibernated,
    ...(tolerance ? { failureTolerance: tolerance } : {}),
  };
}

/** The skip guards as named booleans for one record. */
export function skipGuards(record: Pick<MigrationRecord, 'path' | 'guards'>): Record<SkipGuardName, boolean> {
  return {
    badPath: record.path === 'bad',
    livePath: record.path === 'live',
    snapshotPath: record.path === 'good' || record.path === 'bad',
    noFinalSnapshot: !record.guards.waitForFinalSnapshot,
    hibernated: record.guards.hibernated,
  };
}

/** Why a step is skipped in this record, or undefined when it runs. */
export function skipReason(record: Pick<MigrationRecord, 'path' | 'guards'>, id: MigrationStepId): string | undefined {
  const guards = skipGuards(record);
  const applying = stepDefinition(id).skipIf.filter((g) => guards[g]);
  if (applying.length === 0) return undefined;
  const words: Record<SkipGuardName, string> = {
    badPath: 'bad path: the source is not used',
    livePath: 'live path: the etcd cluster walks to the destination under raft; no snapshot is copied or restored',
    snapshotPath: 'not the live path: etcd moves as snapshots',
    noFinalSnapshot:
      'hibernated: etcd has no sidecar to take a final snapshot; the last full snapshot is the latest state',
    hibernated:
      'hibernated: etcd does not run, so nothing changes before the owner change; the copy after it takes the last full snapshot',
  };
  return applying.map((g) => words[g]).join('; ');
}

export interface NewMigrationOptions {
  id: string;
  shoot: Shoot;
  source: MigrationSeed;
  destination: MigrationSeed;
  mode: MigrationMode;
  now: Date;
  finalSnapshotWait?: string;
}

/** A new record, as the admit step writes it under the lock: admit-and-lock already succeeded. */
export function newMigrationRecord(options: NewMigrationOptions): MigrationRecord {
  const now = options.now.toISOString();
  const { project, name } = options.shoot.metadata;
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Migration',
    id: options.id,
    shoot: { project, name, technicalID: options.shoot.status.technicalID },
    source: options.source,
    destination: options.destination,
    mode: options.mode,
    state: 'Running',
    guards: migrationGuards(options.shoot),
    steps: MIGRATION_STEPS.map((s) =>
      s.id === 'admit-and-lock'
        ? {
            id: s.id,
            title: s.title,
            state: 'succeeded',
            startedAt: now,
            endedAt: now,
            attempts: 1,
            message: `migrating from ${options.source.name} to ${options.destination.name} (mode ${options.mode})`,
          }
        : { id: s.id, title: s.title, state: 'pending', attempts: 0 },
    ),
    lastCompletedStep: 'admit-and-lock',
    attempts: 1,
    createdAt: now,
    updatedAt: now,
    ...(options.finalSnapshotWait ? { finalSnapshotWait: options.finalSnapshotWait } : {}),
  };
}

/**
 * The record with every step of the current flow: a record admitted before a step existed (a deployment
 * during a migration) gets it as skipped, in its place, so that the flow never starts a step the
 * migration did not plan and never goes back for it.
 */
export function withCurrentSteps(record: MigrationRecord): MigrationRecord {
  const byId = new Map(record.steps.map((s) => [s.id, s]));
  if (MIGRATION_STEPS.every((d) => byId.has(d.id))) return record;
  const steps = MIGRATION_STEPS.map(
    (d): MigrationStepStatus =>
      byId.get(d.id) ?? {
        id: d.id,
        title: d.title,
        state: 'skipped',
        attempts: 0,
        message: 'not part of the flow when this migration was admitted',
      },
  );
  return { ...record, steps };
}

/**
 * Whether a step no longer matters to the flow: done, skipped, a best-effort step that failed (the flow went
 * on without it), or a good-path step left behind by a switch.
 */
function settled(record: MigrationRecord, status: MigrationStepStatus): boolean {
  if (status.state === 'succeeded' || status.state === 'skipped') return true;
  const definition = stepDefinition(status.id);
  if (status.state === 'failed' && definition.bestEffort !== undefined) return true;
  return record.path === 'bad' && definition.phase === 'good';
}

/** Settled, or skipped by a guard of the chosen path: nothing left to do for the step. */
function finished(record: MigrationRecord, status: MigrationStepStatus): boolean {
  return settled(record, status) || (record.path !== undefined && skipReason(record, status.id) !== undefined);
}

/** The steps the flow has still to run, in order. */
export function stepsLeft(record: MigrationRecord): MigrationStepStatus[] {
  return record.steps.filter((s) => !finished(record, s));
}

/**
 * The step the flow continues with: the first one that is neither done nor skipped (a skip guard that
 * applies counts as skipped). Undefined when the migration has nothing left to do. Calling migrate again
 * after an Error continues here: succeeded steps are never repeated.
 */
export function resumePoint(record: MigrationRecord): MigrationStepId | undefined {
  return stepsLeft(record)[0]?.id;
}

function update(
  record: MigrationRecord,
  id: MigrationStepId,
  now: Date,
  change: (s: MigrationStepStatus) => MigrationStepStatus,
): MigrationRecord {
  return { ...record, updatedAt: now.toISOString(), steps: record.steps.map((s) => (s.id === id ? change(s) : s)) };
}

function invalid(record: MigrationRecord, message: string, step?: MigrationStepId): MigrationTransitionError {
  return new MigrationTransitionError(`migration ${record.id}: ${message}`, {
    migrationId: record.id,
    ...(step ? { step } : {}),
    state: record.state,
  });
}

/** Marks the steps before `id` that their guards skip as skipped, with the reason. */
function settleSkips(record: MigrationRecord, upTo: MigrationStepId, now: Date): MigrationRecord {
  let out = record;
  for (const status of record.steps) {
    if (stepIndex(status.id) >= stepIndex(upTo)) break;
    const reason = status.state === 'pending' && out.path !== undefined ? skipReason(out, status.id) : undefined;
    if (reason !== undefined) out = update(out, status.id, now, (s) => ({ ...s, state: 'skipped', message: reason }));
  }
  return out;
}

/**
 * A step starts. Only the resume point may start; starting a step that is already running or done is a
 * no-op, so that a retried Lambda does not fail.
 */
export function startStep(record: MigrationRecord, options: { step: MigrationStepId; now: Date }): MigrationRecord {
  const status = record.steps.find((s) => s.id === options.step)!;
  if (status.state === 'running' || status.state === 'succeeded') return record;
  if (record.state !== 'Running')
    throw invalid(record, `cannot start ${options.step} while the migration is ${record.state}`, options.step);
  const next = resumePoint(record);
  if (next !== options.step)
    throw invalid(record, `cannot start ${options.step}: the flow is at ${next ?? 'its end'}`, options.step);
  const settledRecord = settleSkips(record, options.step, options.now);
  return update(settledRecord, options.step, options.now, (s) => {
    const { message: _m, endedAt: _e, ...rest } = s;
    return { ...rest, state: 'running', startedAt: options.now.toISOString(), attempts: s.attempts + 1 };
  });
}

/** What a running step is doing now (an operator reads it while it waits); the step must be running. */
export function noteStep(
  record: MigrationRecord,
  options: { step: MigrationStepId; now: Date; message: string },
): MigrationRecord {
  const status = record.steps.find((s) => s.id === options.step)!;
  if (status.state !== 'running')
    throw invalid(record, `cannot note ${options.step}: it is ${status.state}, not running`, options.step);
  return update(record, options.step, options.now, (s) => ({ ...s, message: options.message }));
}

/** A step succeeded. The last step releases the migration as Succeeded. Idempotent. */
export function completeStep(
  record: MigrationRecord,
  options: { step: MigrationStepId; now: Date; message?: string; shootStateVersion?: number },
): MigrationRecord {
  const status = record.steps.find((s) => s.id === options.step)!;
  if (status.state === 'succeeded') return record;
  if (status.state !== 'running')
    throw invalid(record, `cannot complete ${options.step}: it is ${status.state}, not running`, options.step);
  let out = update(record, options.step, options.now, (s) => ({
    ...s,
    state: 'succeeded',
    endedAt: options.now.toISOString(),
    ...(options.message ? { message: options.message } : {}),
  }));
  out = { ...out, lastCompletedStep: options.step };
  if (options.step === 'persist-shootstate')
    out = {
      ...out,
      shootState: {
        source: 'migrated',
        ...(options.shootStateVersion === undefined ? {} : { version: options.shootStateVersion }),
      },
    };
  if (resumePoint(out) === undefined) {
    // Skipped steps after the last completed one are settled too, so the record reads complete.
    out = settleSkips(out, 'finalize', options.now);
    out = { ...out, state: 'Succeeded', finishedAt: options.now.toISOString() };
  }
  return out;
}

/**
 * A step failed for good (its retries are exhausted): the migration ends in Error, the lock is released,
 * and a later migrate call resumes from this step. Idempotent.
 */
export function failStep(
  record: MigrationRecord,
  options: { step: MigrationStepId; now: Date; message: string },
): MigrationRecord {
  const status = record.steps.find((s) => s.id === options.step)!;
  if (status.state === 'failed' && record.state === 'Error') return record;
  if (status.state === 'succeeded' || status.state === 'skipped')
    throw invalid(record, `cannot fail ${options.step}: it is ${status.state}`, options.step);
  const out = update(record, options.step, options.now, (s) => ({
    ...s,
    state: 'failed',
    endedAt: options.now.toISOString(),
    message: options.message,
  }));
  return {
    ...out,
    state: 'Error',
    finishedAt: options.now.toISOString(),
    error: { step: options.step, message: options.message },
  };
}

/**
 * A best-effort step ended without its result: `failed` (it broke: an error, a timeout, an agent that did not
 * answer) or `skipped` (there was nothing for it to do, or the destination declined). The migration stays
 * Running and the flow goes on as if the step had never run; the message says why and what does its work
 * instead. Later best-effort steps that depend on a failed one are skipped with it (nothing to build on).
 * Idempotent; refused for a step that is not best effort, or that succeeded.
 */
export function continueWithoutStep(
  record: MigrationRecord,
  options: { step: MigrationStepId; now: Date; outcome: 'failed' | 'skipped'; reason: string },
): MigrationRecord {
  const definition = stepDefinition(options.step);
  const status = record.steps.find((s) => s.id === options.step)!;
  if (definition.bestEffort === undefined)
    throw invalid(record, `${options.step} is not best effort: its failure fails the migration`, options.step);
  if (status.state === options.outcome) return record;
  if (status.state === 'succeeded' || status.state === 'skipped')
    throw invalid(record, `cannot end ${options.step} as ${options.outcome}: it is ${status.state}`, options.step);
  if (record.state !== 'Running')
    throw invalid(
      record,
      `cannot continue without ${options.step} while the migration is ${record.state}`,
      options.step,
    );
  // A step that failed before it could start (its first Lambda) ends too, but only where the flow is.
  if (status.state !== 'running' && resumePoint(record) !== options.step)
    throw invalid(
      record,
      `cannot end ${options.step}: the flow is at ${resumePoint(record) ?? 'its end'}`,
      options.step,
    );
  const now = options.now.toISOString();
  const message =
    options.outcome === 'failed'
      ? `${options.reason}; continuing without it: ${definition.bestEffort.without}`
      : options.reason;
  const out = update(settleSkips(record, options.step, options.now), options.step, options.now, (s) => ({
    ...s,
    state: options.outcome,
    endedAt: now,
    message,
  }));
  return options.outcome === 'failed' ? skipDependents(out, options.step, options.now) : out;
}

/** The pending best-effort steps that build on a failed one are skipped with it. */
function skipDependents(record: MigrationRecord, failed: MigrationStepId, now: Date): MigrationRecord {
  let out = record;
  for (const dependent of MIGRATION_STEPS) {
    if (dependent.bestEffort === undefined || !dependent.dependencies.includes(failed)) continue;
    if (out.steps.find((s) => s.id === dependent.id)?.state !== 'pending') continue;
    out = update(out, dependent.id, now, (s) => ({
      ...s,
      state: 'skipped',
      message: `${failed} failed: nothing to build on; ${dependent.bestEffort!.without}`,
    }));
  }
  return out;
}

/**
 * Records the path choose-path decided, and completes choose-path. On the bad path the good-path steps
 * are skipped, and the restore uses the last persisted ShootState.
 */
export function setPath(
  record: MigrationRecord,
  options: { path: MigrationPath; reason: string; now: Date },
): MigrationRecord {
  if (record.path !== undefined) {
    if (record.path === options.path) return record;
    throw invalid(
      record,
      `the path is ${record.path} already; use switchToBadPath to leave the good path`,
      'choose-path',
    );
  }
  let out: MigrationRecord = {
    ...record,
    path: options.path,
    pathReason: options.reason,
    ...(options.path === 'bad' ? { shootState: { source: 'last-persisted' as const } } : {}),
  };
  out = startStep(out, { step: 'choose-path', now: options.now });
  return completeStep(out, {
    step: 'choose-path',
    now: options.now,
    message: `${options.path} path: ${options.reason}`,
  });
}

/**
 * A good-path step timed out or failed: continue on the bad path at set-owner-destination, never from
 * scratch. The failed step is kept as failed (for the operator), the good-path steps not done are
 * skipped. The restore uses the ShootState this migration persisted when persist-shootstate succeeded,
 * else the last one persisted before. Idempotent; refused for a step that is not on the good path.
 */
export function switchToBadPath(
  record: MigrationRecord,
  options: { failedStep: MigrationStepId; reason: string; now: Date },
): MigrationRecord {
  if (record.path === 'bad') return record;
  // The walk's own way out: its destination member only learnt and was wiped, so no second cluster can form.
  const wayOut = record.path === 'live' && record.live?.wayOut === 'bad-path' && options.failedStep === 'walk-live';
  if (stepDefinition(options.failedStep).phase !== 'good' && !wayOut)
    throw invalid(
      record,
      `${options.failedStep} is not on the good path; only good-path steps switch to the bad path`,
      options.failedStep,
    );
  if (record.path === 'live' && walkBegun(record) && !wayOut)
    throw invalid(
      record,
      'the live walk began: the bad path would restore a copy beside the cluster that walks',
      options.failedStep,
    );
  if (record.path === undefined)
    throw invalid(record, `cannot switch to the bad path before a path was chosen`, options.failedStep);
  if (record.state !== 'Running')
    throw invalid(record, `cannot switch to the bad path while the migration is ${record.state}`, options.failedStep);
  const now = options.now.toISOString();
  const persisted = record.steps.find((s) => s.id === 'persist-shootstate')?.state === 'succeeded';
  const steps = record.steps.map((s): MigrationStepStatus => {
    const phase = stepDefinition(s.id).phase;
    if ((phase !== 'good' && phase !== 'live') || s.state === 'succeeded' || s.state === 'skipped') return s;
    if (s.id === options.failedStep)
      return { ...s, state: 'failed', endedAt: now, message: `${options.reason}; switched to the bad path` };
    const { startedAt: _s, ...rest } = s;
    return { ...rest, state: 'skipped', message: `switched to the bad path after ${options.failedStep} failed` };
  });
  return {
    ...record,
    steps,
    path: 'bad',
    switchedToBadPathAt: now,
    badPathSwitch: { failedStep: options.failedStep, reason: options.reason },
    shootState:
      persisted && record.shootState?.source === 'migrated' ? record.shootState : { source: 'last-persisted' },
    updatedAt: now,
  };
}

/** The owner record's value while this migration's live walk runs, once its survey named the cluster. */
export function liveOwnerValue(record: Pick<MigrationRecord, 'source' | 'destination' | 'live'>): string | undefined {
  const { identity: origin } = record.source;
  const { identity: destination } = record.destination;
  if (!origin || !destination || record.live === undefined) return undefined;
  return formatOwnerValue({ kind: 'live', origin, destination, cluster: record.live.cluster });
}

/** The owner record was set to the live value: from here on, only the walk's own ways out are safe. */
export function walkBegun(record: MigrationRecord): boolean {
  return record.steps.some((s) => s.id === 'own-live' && s.state !== 'pending' && s.state !== 'skipped');
}

/**
 * The survey of a live walk failed (the destination cannot join, the source's etcd does not answer): nothing
 * changed yet (the owner record names the source alone), so the migration goes on as on the good path, whose
 * steps after persist-shootstate are all still to do. Idempotent.
 */
export function leaveLivePath(record: MigrationRecord, options: { reason: string; now: Date }): MigrationRecord {
  if (record.path === 'good') return record;
  if (record.path !== 'live')
    throw invalid(record, `the path is ${record.path ?? 'not chosen'}, not live`, 'survey-live');
  const out = continueWithoutStep(record, {
    step: 'survey-live',
    now: options.now,
    outcome: 'failed',
    reason: options.reason,
  });
  return {
    ...out,
    path: 'good',
    pathReason: `${record.pathReason ?? 'mode live'}; left the live path: ${options.reason}`,
  };
}

/**
 * The destination was lost mid-walk and the shoot walked back: the owner record names the source again, the
 * cluster is the source's members alone. walk-live stays running for the failure the flow records next; the
 * live steps before it are pending again and the survey's answer is dropped, so that a resume walks afresh
 * from survey-live (the destination's members of this walk were removed from the cluster or forced out of it).
 */
export function walkedBack(record: MigrationRecord, options: { now: Date; message: string }): MigrationRecord {
  if (record.path !== 'live' || record.live === undefined)
    throw invalid(record, `the path is ${record.path ?? 'not chosen'}, not a live walk`, 'walk-live');
  const noted = noteStep(record, { step: 'walk-live', now: options.now, message: options.message });
  const steps = noted.steps.map((s): MigrationStepStatus => {
    if (s.id !== 'survey-live' && s.id !== 'own-live') return s;
    const { startedAt: _s, endedAt: _e, ...rest } = s;
    return { ...rest, state: 'pending', message: `walked back to the source: ${options.message}` };
  });
  const { live: _live, ...rest } = noted;
  return { ...rest, steps };
}

/**
 * A migrate call for a migration that ended in Error: the failed step is pending again, everything that
 * succeeded stays succeeded, and the flow resumes at `resumePoint`.
 */
export function resumeMigration(
  record: MigrationRecord,
  options: { now: Date; acceptEtcdDigestMismatch?: boolean; finalSnapshotWait?: string },
): MigrationRecord {
  if (record.state !== 'Error')
    throw invalid(record, `only a migration that ended in Error can be resumed; this one is ${record.state}`);
  const steps = record.steps.map((s): MigrationStepStatus => {
    if (s.state !== 'failed' && s.state !== 'running') return s;
    // A good-path (or live-path) step that failed before a switch stays failed: the bad path does not go back to it.
    const phase = stepDefinition(s.id).phase;
    if (record.path === 'bad' && (phase === 'good' || phase === 'live')) return s;
    // So does a best-effort step that failed: the flow went on without it, and later steps did its work.
    if (s.state === 'failed' && stepDefinition(s.id).bestEffort !== undefined) return s;
    return {
      ...s,
      state: 'pending',
      message: `failed in attempt ${record.attempts}: ${s.message ?? 'no message'}; resuming`,
    };
  });
  const { error: _e, finishedAt: _f, ...rest } = record;
  let out: MigrationRecord = {
    ...rest,
    steps,
    state: 'Running',
    attempts: record.attempts + 1,
    updatedAt: options.now.toISOString(),
    ...(options.acceptEtcdDigestMismatch
      ? {
          overrides: {
            ...record.overrides,
            etcdDigestMismatch: { acceptedAt: options.now.toISOString(), attempt: record.attempts + 1 },
          },
        }
      : {}),
    ...(options.finalSnapshotWait ? { finalSnapshotWait: options.finalSnapshotWait } : {}),
  };
  for (const s of steps)
    if (s.state === 'failed' && stepDefinition(s.id).bestEffort !== undefined)
      out = skipDependents(out, s.id, options.now);
  return out;
}

/** Which step the shoot's `lastOperation` should describe: the running one, else the resume point, else the last. */
function currentStep(record: MigrationRecord): MigrationStepId {
  return record.steps.find((s) => s.state === 'running')?.id ?? record.error?.step ?? resumePoint(record) ?? 'finalize';
}

/** 0-100: the weights of the steps that are settled (done, skipped, or left behind by a switch). */
export function migrationProgress(record: MigrationRecord): number {
  if (record.state === 'Succeeded') return 100;
  let done = 0;
  for (const status of record.steps) if (finished(record, status)) done += stepDefinition(status.id).weight;
  return Math.min(99, done);
}

/** The shoot's `lastOperation` for this migration (type Migrate until the restore path, Restore from there). */
export function migrationLastOperation(record: MigrationRecord, now: Date) {
  const step = currentStep(record);
  const definition = stepDefinition(step);
  const type = record.state === 'Succeeded' ? 'Restore' : definition.operation;
  const where = `${record.source.name} -> ${record.destination.name}${record.path ? `, ${record.path} path` : ''}`;
  const description =
    record.state === 'Succeeded'
      ? `Migrated to ${record.destination.name} (${where}${record.switchedToBadPathAt ? `, switched to the bad path after ${record.badPathSwitch?.failedStep}` : ''})`
      : record.state === 'Error'
        ? `Migration ${record.id} (${where}) failed at step ${step} (${definition.title}): ${record.error?.message ?? 'unknown error'}. Call migrate again to resume from ${resumePointAfterResume(record) ?? step}.`
        : `Migration ${record.id} (${where}): ${definition.title}`;
  return {
    type,
    state:
      record.state === 'Running'
        ? ('Processing' as const)
        : record.state === 'Succeeded'
          ? ('Succeeded' as const)
          : ('Error' as const),
    progress: migrationProgress(record),
    description,
    lastUpdateTime: now.toISOString(),
  };
}

function resumePointAfterResume(record: MigrationRecord): MigrationStepId | undefined {
  return record.state === 'Error'
    ? resumePoint(resumeMigration(record, { now: new Date(record.updatedAt) }))
    : resumePoint(record);
}
