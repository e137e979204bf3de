import { describe, expect, it } from 'vitest';
import {
  acquireLock,
  admissionLock,
  completeStep,
  continueWithoutStep,
  failStep,
  leaveLivePath,
  GOOD_PATH_STEPS,
  holdsLock,
  migrationLastOperation,
  migrationProgress,
  MigrationTransitionError,
  PREPARE_STEPS,
  resumeLock,
  resumeMigration,
  resumePoint,
  setPath,
  skipGuards,
  startStep,
  switchToBadPath,
  withCurrentSteps,
  type MigrationRecord,
  type MigrationStepId,
} from '../../../core/migration/index.js';
import { aRecord, at, NOW, onPath } from './builders.js';

/** Runs steps from the resume point until `stop` (exclusive) or the end; each takes one second. */
function runUntil(record: MigrationRecord, stop?: MigrationStepId, clock = { t: 1 }): MigrationRecord {
  let r = record;
  for (let next = resumePoint(r); next !== undefined && next !== stop; next = resumePoint(r)) {
    r = startStep(r, { step: next, now: at(clock.t++) });
    r = completeStep(r, {
      step: next,
      now: at(clock.t++),
      ...(next === 'persist-shootstate' ? { shootStateVersion: 7 } : {}),
    });
  }
  return r;
}

const states = (r: MigrationRecord) => Object.fromEntries(r.steps.map((s) => [s.id, s.state]));
/** The live path's own steps: skipped on the paths that move etcd as snapshots. */
const LIVE_STEPS: readonly MigrationStepId[] = ['survey-live', 'own-live', 'walk-live', 'finish-live', 'retire-source'];

describe('a migration record', () => {
  it('runs the good path through every step and ends Succeeded at 100%', () => {
    // Prepare
    const record = setPath(aRecord(), { path: 'good', reason: 'fresh heartbeat', now: NOW });

    // Act
    const done = runUntil(record);

    // Assess
    expect(done.state).toBe('Succeeded');
    for (const [id, state] of Object.entries(states(done)))
      expect([id, state]).toEqual([id, LIVE_STEPS.includes(id as MigrationStepId) ? 'skipped' : 'succeeded']);
    expect(done.shootState).toEqual({ source: 'migrated', version: 7 });
    expect(done.lastCompletedStep).toBe('finalize');
    expect(migrationProgress(done)).toBe(100);
    expect(migrationLastOperation(done, NOW)).toMatchObject({ type: 'Restore', state: 'Succeeded', progress: 100 });
    for (const s of done.steps.slice(1).filter((s) => s.state !== 'skipped'))
      expect(Date.parse(s.endedAt!)).toBeGreaterThanOrEqual(Date.parse(s.startedAt!));
  });

  it('on the bad path skips every good-path step and restores from the last persisted ShootState', () => {
    // Prepare
    const record = setPath(aRecord(), { path: 'bad', reason: 'source silent', now: NOW });

    // Act
    const first = resumePoint(record);
    const atEntry = runUntil(record, 'set-owner-destination');
    const done = runUntil(record);

    // Assess: the pre-copy runs on the bad path too, before its entry.
    expect(first).toBe('pre-copy-snapshots');
    expect(resumePoint(atEntry)).toBe('set-owner-destination');
    expect(states(atEntry)).toMatchObject({ 'pre-copy-snapshots': 'succeeded', 'restore-etcd-ahead': 'succeeded' });
    expect(done.state).toBe('Succeeded');
    for (const id of GOOD_PATH_STEPS)
      expect(done.steps.find((s) => s.id === id)).toMatchObject({
        state: 'skipped',
        message: 'bad path: the source is not used',
      });
    expect(done.shootState).toEqual({ source: 'last-persisted' });
  });

  it('skips the pre-copy and the final-snapshot wait of a hibernated shoot, and only those', () => {
    // Prepare
    const record = setPath(aRecord({ hibernated: true }), { path: 'good', reason: 'fresh', now: NOW });

    // Act
    const first = resumePoint(record);
    const done = runUntil(record);

    // Assess: no etcd runs, so nothing to pre-copy ahead of a fence (GEP-17).
    expect(first).toBe('migrate-extensions');
    expect(skipGuards(record)).toEqual({
      badPath: false,
      livePath: false,
      snapshotPath: true,
      noFinalSnapshot: true,
      hibernated: true,
    });
    expect(
      Object.entries(states(done))
        .filter(([id, s]) => s === 'skipped' && !LIVE_STEPS.includes(id as MigrationStepId))
        .map(([id]) => id),
    ).toEqual(['pre-copy-snapshots', 'restore-etcd-ahead', 'wait-final-snapshot']);
    for (const id of ['pre-copy-snapshots', 'restore-etcd-ahead', 'wait-final-snapshot'])
      expect(done.steps.find((s) => s.id === id)?.message).toMatch(/^hibernated: /);
  });

  it.each([
    // failed step, ShootState used
    ['migrate-extensions', { source: 'last-persisted' }],
    ['persist-shootstate', { source: 'last-persisted' }],
    ['delete-owner-record', { source: 'migrated', version: 7 }],
    ['wait-final-snapshot', { source: 'migrated', version: 7 }],
    ['delete-source-control-plane', { source: 'migrated', version: 7 }],
  ] as const)('a timeout at %s switches to the bad path at set-owner-destination', (failedStep, shootState) => {
    // Prepare
    let record = runUntil(setPath(aRecord(), { path: 'good', reason: 'fresh', now: NOW }), failedStep);
    record = startStep(record, { step: failedStep, now: at(100) });
    const succeededBefore = record.steps.filter((s) => s.state === 'succeeded').map((s) => s.id);

    // Act
    const switched = switchToBadPath(record, { failedStep, reason: 'States.Timeout after 60 s', now: at(160) });

    // Assess
    expect(resumePoint(switched)).toBe('set-owner-destination');
    expect(switched).toMatchObject({
      path: 'bad',
      switchedToBadPathAt: at(160).toISOString(),
      badPathSwitch: { failedStep, reason: 'States.Timeout after 60 s' },
      shootState,
      state: 'Running',
    });
    expect(switched.steps.find((s) => s.id === failedStep)).toMatchObject({
      state: 'failed',
      message: 'States.Timeout after 60 s; switched to the bad path',
    });
    expect(switched.steps.filter((s) => s.state === 'succeeded').map((s) => s.id)).toEqual(succeededBefore);
    const done = runUntil(switched);
    expect(done.state).toBe('Succeeded');
    expect(switchToBadPath(switched, { failedStep, reason: 'again', now: at(200) })).toBe(switched);
  });

  it.each([
    'admit-and-lock',
    'choose-path',
    'set-owner-destination',
    'copy-snapshots',
    'restore-etcd',
    'restore-extensions',
    'finalize',
  ] as const)('refuses to switch to the bad path from %s', (step) => {
    // Prepare
    const record = setPath(aRecord(), { path: 'good', reason: 'fresh', now: NOW });

    // Act / Assess
    expect(() => switchToBadPath(record, { failedStep: step, reason: 'x', now: NOW })).toThrow(
      MigrationTransitionError,
    );
  });

  it('ends in Error at a failed restore step, and a resume continues there without repeating anything', () => {
    // Prepare
    let record = runUntil(setPath(aRecord(), { path: 'good', reason: 'fresh', now: NOW }), 'restore-etcd');
    record = startStep(record, { step: 'restore-etcd', now: at(100) });
    const failed = failStep(record, {
      step: 'restore-etcd',
      now: at(101),
      message: 'EtcdRestoreFailed: destination agent unreachable',
    });

    // Act
    const resumed = resumeMigration(failed, { now: at(200) });
    const done = runUntil(resumed, undefined, { t: 300 });

    // Assess
    expect(failed).toMatchObject({
      state: 'Error',
      error: { step: 'restore-etcd' },
      lastCompletedStep: 'copy-snapshots',
    });
    expect(migrationLastOperation(failed, at(101))).toMatchObject({ type: 'Restore', state: 'Error' });
    expect(migrationLastOperation(failed, at(101)).description).toContain('failed at step restore-etcd');
    expect(migrationLastOperation(failed, at(101)).description).toContain('resume from restore-etcd');
    expect(resumePoint(resumed)).toBe('restore-etcd');
    expect(resumed).toMatchObject({ state: 'Running', attempts: 2 });
    expect(resumed.error).toBeUndefined();
    expect(done.state).toBe('Succeeded');
    for (const s of done.steps.filter((s) => s.state !== 'skipped'))
      if (s.id !== 'restore-etcd' && s.id !== 'restore-extensions' && s.id !== 'finalize') expect(s.attempts).toBe(1);
    expect(done.steps.find((s) => s.id === 'restore-etcd')?.attempts).toBe(2);
  });

  it('is idempotent for retried Lambdas and strict about order', () => {
    // Prepare
    const record = onPath(aRecord(), 'good');
    const started = startStep(record, { step: 'migrate-extensions', now: at(1) });
    const completed = completeStep(started, { step: 'migrate-extensions', now: at(2) });

    // Act / Assess
    expect(startStep(started, { step: 'migrate-extensions', now: at(3) })).toBe(started);
    expect(completeStep(completed, { step: 'migrate-extensions', now: at(3) })).toBe(completed);
    expect(startStep(completed, { step: 'migrate-extensions', now: at(3) })).toBe(completed);
    expect(setPath(record, { path: 'good', reason: 'again', now: at(3) })).toBe(record);
    expect(() =>
      startStep(setPath(aRecord(), { path: 'good', reason: 'fresh', now: NOW }), {
        step: 'migrate-extensions',
        now: at(3),
      }),
    ).toThrow(/the flow is at pre-copy-snapshots/);
    expect(() => setPath(record, { path: 'bad', reason: 'changed my mind', now: at(3) })).toThrow(
      MigrationTransitionError,
    );
    expect(() => startStep(record, { step: 'copy-snapshots', now: at(3) })).toThrow(
      /the flow is at persist-shootstate|the flow is at migrate-extensions/,
    );
    expect(() => completeStep(record, { step: 'copy-snapshots', now: at(3) })).toThrow(/not running/);
    expect(() => resumeMigration(record, { now: at(3) })).toThrow(/only a migration that ended in Error/);
  });

  it('reports Migrate with rising progress on the good path, Restore from set-owner-destination', () => {
    // Prepare
    const record = onPath(aRecord(), 'good');
    const atOwner = startStep(runUntil(record, 'set-owner-destination'), {
      step: 'set-owner-destination',
      now: at(50),
    });

    // Act
    const early = migrationLastOperation(startStep(record, { step: 'migrate-extensions', now: at(1) }), at(1));
    const late = migrationLastOperation(atOwner, at(50));

    // Assess
    // admit 2 + choose 2 + pre-copy 8 + restore ahead 6, and the live path's 16, which the good path skips
    expect(early).toMatchObject({ type: 'Migrate', state: 'Processing', progress: 34 });
    expect(early.description).toContain('Migrating the extensions');
    expect(late).toMatchObject({ type: 'Restore', state: 'Processing', progress: 71 });
  });
});

describe('the pre-copy never fails a migration', () => {
  const fresh = (path: 'good' | 'bad' = 'good') => setPath(aRecord(), { path, reason: 'fresh', now: NOW });
  const byId = (r: MigrationRecord, id: MigrationStepId) => r.steps.find((s) => s.id === id)!;

  it.each(['good', 'bad'] as const)(
    '%s path: a failed pre-copy is recorded, the restore ahead skipped, and the path goes on where it would have begun',
    (path) => {
      // Prepare
      const started = startStep(fresh(path), { step: 'pre-copy-snapshots', now: at(1) });

      // Act
      const failed = continueWithoutStep(started, {
        step: 'pre-copy-snapshots',
        now: at(2),
        outcome: 'failed',
        reason: 'EmptySource: no full snapshot in gl-backup-source',
      });
      const done = runUntil(failed, undefined, { t: 3 });

      // Assess
      expect(failed.state).toBe('Running');
      expect(failed.error).toBeUndefined();
      expect(byId(failed, 'pre-copy-snapshots')).toMatchObject({
        state: 'failed',
        endedAt: at(2).toISOString(),
        message:
          'EmptySource: no full snapshot in gl-backup-source; continuing without it: copy-snapshots copies everything after the owner change, and restore-etcd restores etcd in full',
      });
      expect(byId(failed, 'restore-etcd-ahead')).toMatchObject({
        state: 'skipped',
        message:
          'pre-copy-snapshots failed: nothing to build on; restore-etcd restores etcd in full after the owner change',
      });
      expect(resumePoint(failed)).toBe(path === 'good' ? 'migrate-extensions' : 'set-owner-destination');
      // Settled like done steps: admit, choose, both pre-copy steps, the live path's 16 (and on the bad path, the good path's 37).
      expect(migrationProgress(failed)).toBe(path === 'good' ? 34 : 71);
      expect(done.state).toBe('Succeeded');
      expect(byId(done, 'pre-copy-snapshots').state).toBe('failed');
      expect(byId(done, 'copy-snapshots').attempts).toBe(1);
    },
  );

  it('a restore ahead that failed or was declined leaves restore-etcd to do all of it', () => {
    // Prepare
    let record = fresh();
    record = completeStep(startStep(record, { step: 'pre-copy-snapshots', now: at(1) }), {
      step: 'pre-copy-snapshots',
      now: at(2),
    });
    const running = startStep(record, { step: 'restore-etcd-ahead', now: at(3) });

    // Act
    const failed = continueWithoutStep(running, {
      step: 'restore-etcd-ahead',
      now: at(33),
      outcome: 'failed',
      reason: 'States.HeartbeatTimeout: the seed did not answer in time',
    });
    const declined = continueWithoutStep(running, {
      step: 'restore-etcd-ahead',
      now: at(4),
      outcome: 'skipped',
      reason: 'the destination does not restore ahead',
    });

    // Assess
    expect(byId(failed, 'restore-etcd-ahead')).toMatchObject({
      state: 'failed',
      message:
        'States.HeartbeatTimeout: the seed did not answer in time; continuing without it: restore-etcd restores etcd in full after the owner change',
    });
    expect(byId(declined, 'restore-etcd-ahead')).toMatchObject({
      state: 'skipped',
      message: 'the destination does not restore ahead',
    });
    expect(byId(failed, 'pre-copy-snapshots').state).toBe('succeeded');
    for (const r of [failed, declined]) {
      expect(resumePoint(r)).toBe('migrate-extensions');
      expect(runUntil(r, undefined, { t: 40 }).state).toBe('Succeeded');
    }
  });

  it('ends a pre-copy step that failed before it started, only where the flow is, once, and never a step that must not fail', () => {
    // Prepare
    const record = fresh();
    const failed = continueWithoutStep(record, {
      step: 'pre-copy-snapshots',
      now: at(1),
      outcome: 'failed',
      reason: 'NotFound: no backup bucket',
    });

    // Act / Assess
    expect(byId(failed, 'pre-copy-snapshots')).toMatchObject({ state: 'failed', attempts: 0 });
    expect(
      continueWithoutStep(failed, { step: 'pre-copy-snapshots', now: at(2), outcome: 'failed', reason: 'again' }),
    ).toBe(failed);
    expect(() =>
      continueWithoutStep(record, { step: 'restore-etcd-ahead', now: at(1), outcome: 'failed', reason: 'x' }),
    ).toThrow(/the flow is at pre-copy-snapshots/);
    expect(() =>
      continueWithoutStep(failed, { step: 'restore-etcd-ahead', now: at(1), outcome: 'failed', reason: 'x' }),
    ).toThrow(/it is skipped/);
    expect(() =>
      continueWithoutStep(startStep(onPath(aRecord(), 'good'), { step: 'migrate-extensions', now: at(1) }), {
        step: 'migrate-extensions',
        now: at(2),
        outcome: 'failed',
        reason: 'x',
      }),
    ).toThrow(/not best effort/);
    const succeeded = completeStep(startStep(record, { step: 'pre-copy-snapshots', now: at(1) }), {
      step: 'pre-copy-snapshots',
      now: at(2),
    });
    expect(() =>
      continueWithoutStep(succeeded, { step: 'pre-copy-snapshots', now: at(3), outcome: 'failed', reason: 'x' }),
    ).toThrow(/it is succeeded/);
  });

  it('a resume never goes back to a pre-copy that failed, whether the flow went on or the garden failed recording it', () => {
    // Prepare: one migration went on without its pre-copy and failed later; in another, recording the pre-copy's failure failed.
    let wentOn = continueWithoutStep(startStep(fresh(), { step: 'pre-copy-snapshots', now: at(1) }), {
      step: 'pre-copy-snapshots',
      now: at(2),
      outcome: 'failed',
      reason: 'EmptySource',
    });
    wentOn = runUntil(wentOn, 'restore-etcd', { t: 3 });
    wentOn = failStep(startStep(wentOn, { step: 'restore-etcd', now: at(50) }), {
      step: 'restore-etcd',
      now: at(51),
      message: 'EtcdRestoreFailed',
    });
    const unrecorded = failStep(startStep(fresh(), { step: 'pre-copy-snapshots', now: at(1) }), {
      step: 'pre-copy-snapshots',
      now: at(2),
      message: 'DynamoDB unavailable',
    });

    // Act
    const resumedAfter = resumeMigration(wentOn, { now: at(60) });
    const resumedAt = resumeMigration(unrecorded, { now: at(60) });

    // Assess
    expect(resumePoint(resumedAfter)).toBe('restore-etcd');
    expect(byId(resumedAfter, 'pre-copy-snapshots').state).toBe('failed');
    expect(resumePoint(resumedAt)).toBe('migrate-extensions');
    expect(byId(resumedAt, 'restore-etcd-ahead')).toMatchObject({
      state: 'skipped',
      message: expect.stringMatching(/^pre-copy-snapshots failed/),
    });
    expect(runUntil(resumedAt, undefined, { t: 70 }).state).toBe('Succeeded');
  });

  it('gives a record admitted before the pre-copy existed its steps as skipped, and changes nothing else', () => {
    // Prepare: a record as stored before this version, in the middle of its good path.
    const current = runUntil(onPath(aRecord(), 'good'), 'delete-owner-record');
    const old: MigrationRecord = { ...current, steps: current.steps.filter((s) => !PREPARE_STEPS.includes(s.id)) };

    // Act
    const upgraded = withCurrentSteps(old);

    // Assess
    expect(upgraded.steps.map((s) => s.id)).toEqual(current.steps.map((s) => s.id));
    for (const id of PREPARE_STEPS)
      expect(byId(upgraded, id)).toMatchObject({
        state: 'skipped',
        attempts: 0,
        message: 'not part of the flow when this migration was admitted',
      });
    expect(resumePoint(upgraded)).toBe('delete-owner-record');
    expect(withCurrentSteps(current)).toBe(current);
  });
});

describe('the lock as data', () => {
  const running = { id: 'mig-1', state: 'Running' as const };
  const failed = { id: 'mig-1', state: 'Error' as const };
  const succeeded = { id: 'mig-1', state: 'Succeeded' as const };
  const other = { id: 'mig-0', state: 'Running' as const };

  it.each([
    ['acquire, nothing stored', acquireLock(), undefined, true],
    ['acquire, one running', acquireLock(), running, false],
    ['acquire, last failed', acquireLock(), failed, true],
    ['acquire, last succeeded', acquireLock(), succeeded, true],
    ['resume its own failed migration', resumeLock('mig-1'), failed, true],
    ['resume one that is running (a concurrent resume won)', resumeLock('mig-1'), running, false],
    ['resume another migration', resumeLock('mig-2'), failed, false],
    ['resume, nothing stored', resumeLock('mig-1'), undefined, false],
    ['update while holding it', holdsLock('mig-1'), running, true],
    ['update after it ended', holdsLock('mig-1'), failed, false],
    ['update by a stale migration', holdsLock('mig-1'), other, false],
  ])('%s -> %s', (_name, condition, current, permitted) => {
    expect(condition.permits(current)).toBe(permitted);
  });

  it('names the attributes and values the adapter writes', () => {
    // Act
    const start = admissionLock({ action: 'start', record: { id: 'mig-9' } });
    const resume = admissionLock({ action: 'resume', record: { id: 'mig-9' } });

    // Assess
    expect(start).toMatchObject({
      kind: 'acquire',
      expression: 'attribute_not_exists(#id) OR #state <> :running',
      names: { '#id': 'migrationId', '#state': 'state' },
      values: { ':running': 'Running' },
    });
    expect(resume).toMatchObject({
      kind: 'resume',
      expression: '#id = :id AND #state = :error',
      values: { ':id': 'mig-9', ':error': 'Error' },
    });
  });
});

describe('the live path', () => {
  const live = () => setPath(aRecord(), { path: 'live', reason: 'mode live requested', now: NOW });
  const ran = (r: MigrationRecord) => r.steps.filter((s) => s.state !== 'skipped').map((s) => s.id);

  it('walks etcd instead of moving snapshots: no pre-copy, no fence, no copy, no restore of etcd', () => {
    // Act
    const done = runUntil(live());

    // Assess
    expect(done.state).toBe('Succeeded');
    expect(ran(done)).toEqual([
      'admit-and-lock',
      'choose-path',
      'migrate-extensions',
      'persist-shootstate',
      'survey-live',
      'own-live',
      'walk-live',
      'set-owner-destination',
      'finish-live',
      'retire-source',
      'restore-extensions',
      'switch-api-record',
      'finalize',
    ]);
    expect(done.steps.find((s) => s.id === 'restore-etcd')?.message).toMatch(/^live path: /);
    expect(done.shootState).toEqual({ source: 'migrated', version: 7 });
  });

  it('goes on as the good path when the survey fails, since nothing changed yet', () => {
    // Prepare
    let record = runUntil(live(), 'survey-live');
    record = startStep(record, { step: 'survey-live', now: at(100) });

    // Act
    const left = leaveLivePath(record, { reason: 'LiveWalkUnsupported: a cluster of several members', now: at(101) });
    const done = runUntil(left, undefined, { t: 102 });

    // Assess
    expect(left).toMatchObject({ path: 'good', state: 'Running' });
    expect(left.pathReason).toContain('left the live path: LiveWalkUnsupported');
    expect(resumePoint(left)).toBe('delete-owner-record');
    expect(left.steps.find((s) => s.id === 'survey-live')).toMatchObject({ state: 'failed' });
    expect(leaveLivePath(left, { reason: 'again', now: at(102) })).toBe(left);
    expect(done.state).toBe('Succeeded');
    expect(ran(done)).toContain('wait-final-snapshot');
    expect(ran(done)).toContain('restore-etcd');
    expect(ran(done)).not.toContain('walk-live');
  });

  it("switches to the bad path after the walk began only by the walk's way out, and a resume never goes back to the walk", () => {
    // Prepare: the walk began; the source was lost while the destination only learnt, and its member was wiped.
    const walking = startStep(runUntil(live(), 'walk-live'), { step: 'walk-live', now: at(50) });
    const wiped = { ...walking, live: { cluster: 'c0ffee', sourceMembers: [], wayOut: 'bad-path' as const } };

    // Act
    const switched = switchToBadPath(wiped, { failedStep: 'walk-live', reason: 'LiveWalkPeerLost', now: at(51) });
    const failed = failStep(
      startStep(runUntil(switched, 'copy-snapshots', { t: 52 }), { step: 'copy-snapshots', now: at(60) }),
      {
        step: 'copy-snapshots',
        now: at(61),
        message: 'SnapshotStoreUnavailable',
      },
    );
    const resumed = resumeMigration(failed, { now: at(70) });

    // Assess
    expect(() =>
      switchToBadPath(
        { ...wiped, live: { ...wiped.live, wayOut: 'force' } },
        {
          failedStep: 'walk-live',
          reason: 'LiveWalkPeerLost',
          now: at(51),
        },
      ),
    ).toThrow(/walk-live is not on the good path/);
    expect(switched.path).toBe('bad');
    expect(states(switched)).toMatchObject({
      'walk-live': 'failed',
      'finish-live': 'skipped',
      'retire-source': 'skipped',
    });
    expect(resumePoint(switched)).toBe('set-owner-destination');
    expect(states(resumed)['walk-live']).toBe('failed');
    expect(resumePoint(resumed)).toBe('copy-snapshots');
  });

  it('switches to the bad path before the walk began, and never after', () => {
    // Prepare
    const beforeWalk = startStep(runUntil(live(), 'migrate-extensions'), { step: 'migrate-extensions', now: at(50) });
    const walking = startStep(runUntil(live(), 'own-live'), { step: 'own-live', now: at(50) });

    // Act
    const switched = switchToBadPath(beforeWalk, { failedStep: 'migrate-extensions', reason: 'timeout', now: at(51) });

    // Assess: once the owner record may hold the live value, a restore beside the walking cluster would fork it.
    expect(resumePoint(switched)).toBe('set-owner-destination');
    expect(switched.steps.find((s) => s.id === 'survey-live')?.state).toBe('skipped');
    expect(() =>
      switchToBadPath(walking, { failedStep: 'migrate-extensions', reason: 'timeout', now: at(51) }),
    ).toThrow(/the live walk began/);
  });
});
