import { describe, expect, it } from 'vitest';
import { AdmissionError, ConflictError } from '../../../core/errors.js';
import {
  admitMigration,
  commandForStep,
  completeStep,
  failStep,
  resumePoint,
  startStep,
  type AdmitMigrationInput,
  type MigrationRecord,
} from '../../../core/migration/index.js';
import { ha } from '../scheduling/fixtures.js';
import { aBackedSeed, aRecord, aScheduledShoot, NOW, onPath } from './builders.js';

const source = aBackedSeed({ name: 'source' });
const destination = aBackedSeed({ name: 'destination' });

function input(overrides: Partial<AdmitMigrationInput> = {}): AdmitMigrationInput {
  return {
    shoot: aScheduledShoot(),
    source,
    destination,
    request: { destinationSeed: 'destination' },
    running: undefined,
    id: 'mig-2',
    now: NOW,
    ...overrides,
  };
}

const running = aRecord();

/** The shoot with its Create at `state` (the operation stays on the shoot until a newer one replaces it). */
function creating(state: 'Processing' | 'Pending' | 'Error' | 'Succeeded' | 'Failed', attempts = 1) {
  const shoot = aScheduledShoot();
  const seedName = shoot.status.seedName!;
  return {
    ...shoot,
    status: {
      ...shoot.status,
      operation: { id: 'create-1', type: 'Create' as const, seedName, attempts, requestedAt: NOW.toISOString() },
      lastOperation: {
        type: 'Create' as const,
        state,
        progress: 50,
        description: 'Creating',
        lastUpdateTime: NOW.toISOString(),
      },
    },
  };
}
const failed = (() => {
  let r = onPath(aRecord(), 'bad');
  r = startStep(r, { step: 'set-owner-destination', now: NOW });
  return failStep(r, { step: 'set-owner-destination', now: NOW, message: 'Route 53 throttled' });
})();

/** A bad-path migration that ran every step up to restore-etcd and failed there (the fidelity check refused). */
const failedAtRestore = (() => {
  let r: MigrationRecord = onPath(aRecord(), 'bad');
  for (let step = resumePoint(r); step !== undefined && step !== 'restore-etcd'; step = resumePoint(r))
    r = completeStep(startStep(r, { step, now: NOW }), { step, now: NOW });
  r = startStep(r, { step: 'restore-etcd', now: NOW });
  return failStep(r, { step: 'restore-etcd', now: NOW, message: 'EtcdRestoreFailed: digest a differs from b' });
})();

describe('admitMigration', () => {
  it.each([
    ['a migration of the shoot is running', input({ running }), ConflictError, 'MigrationInProgress'],
    [
      'the shoot is being deleted',
      input({
        shoot: {
          ...aScheduledShoot(),
          metadata: { ...aScheduledShoot().metadata, deletionTimestamp: NOW.toISOString() },
        },
      }),
      ConflictError,
      'ShootDeleting',
    ],
    [
      'its Create was not sent to the seed yet',
      input({ shoot: creating('Processing', 0) }),
      ConflictError,
      'ShootCreating',
    ],
    ['its Create is pending', input({ shoot: creating('Pending', 0) }), ConflictError, 'ShootCreating'],
    [
      'the fidelity override asked of a new migration',
      input({ request: { destinationSeed: 'destination', acceptEtcdDigestMismatch: true } }),
      AdmissionError,
      'OverrideNotApplicable',
    ],
    [
      'the fidelity override asked of a migration that failed elsewhere than restore-etcd',
      input({ running: failed, request: { acceptEtcdDigestMismatch: true } }),
      AdmissionError,
      'OverrideNotApplicable',
    ],
    [
      'a failed migration is resumed towards another seed',
      input({ running: failed, request: { destinationSeed: 'elsewhere' } }),
      ConflictError,
      'MigrationDestinationMismatch',
    ],
    [
      'the shoot is not scheduled',
      input({ shoot: { ...aScheduledShoot(), status: { ...aScheduledShoot().status, seedName: undefined } } }),
      AdmissionError,
      'ShootNotScheduled',
    ],
    ['the source seed is gone', input({ source: undefined }), AdmissionError, 'SourceSeedNotFound'],
    [
      'the source has no backup bucket',
      input({ source: aBackedSeed({ name: 'source', backup: false }) }),
      AdmissionError,
      'SourceHasNoBackup',
    ],
    [
      'the scheduler found no destination',
      input({ destination: undefined, request: {} }),
      AdmissionError,
      'NoDestinationSeed',
    ],
    [
      'the requested destination does not exist',
      input({ destination: undefined }),
      AdmissionError,
      'DestinationNotFound',
    ],
    [
      'the destination is the source',
      input({ destination: source, request: { destinationSeed: 'source' } }),
      AdmissionError,
      'SameSeed',
    ],
    [
      'the destination is being deleted',
      input({ destination: aBackedSeed({ name: 'destination', deletionTimestamp: NOW.toISOString() }) }),
      AdmissionError,
      'DestinationDeleting',
    ],
    [
      'the destination gardenlet is not ready',
      input({
        destination: aBackedSeed({
          name: 'destination',
          conditions: [
            { type: 'GardenletReady', status: 'False' },
            { type: 'BackupBucketsReady', status: 'True' },
          ],
        }),
      }),
      AdmissionError,
      'DestinationNotReady',
    ],
    [
      'the destination reports no conditions',
      input({ destination: aBackedSeed({ name: 'destination', conditions: [] }) }),
      AdmissionError,
      'DestinationNotReady',
    ],
    [
      'the destination heartbeat is stale',
      input({
        maxDestinationHeartbeatAgeMs: 60_000,
        destination: aBackedSeed({ name: 'destination', lastHeartbeatTime: '2026-02-01T11:00:00Z' }),
      }),
      AdmissionError,
      'DestinationHeartbeatStale',
    ],
    [
      'the destination never sent a heartbeat',
      input({ maxDestinationHeartbeatAgeMs: 60_000 }),
      AdmissionError,
      'DestinationHeartbeatStale',
    ],
    [
      'the destination has no backup bucket',
      input({ destination: aBackedSeed({ name: 'destination', backup: false }) }),
      AdmissionError,
      'DestinationHasNoBackup',
    ],
    [
      'the destination is full',
      input({ destination: aBackedSeed({ name: 'destination', capacity: 2, shoots: 2 }) }),
      AdmissionError,
      'DestinationFull',
    ],
    [
      'the destination is full by its allocatable',
      input({ destination: aBackedSeed({ name: 'destination', allocatable: 1, shoots: 1 }) }),
      AdmissionError,
      'DestinationFull',
    ],
    [
      'a zone-tolerant shoot to a single-zonal seed',
      input({ shoot: aScheduledShoot(ha('zone')) }),
      AdmissionError,
      'ZoneToleranceNeedsMultiZonalSeed',
    ],
    [
      'a live migration of a hibernated shoot (no etcd runs to walk)',
      input({
        shoot: aScheduledShoot({ hibernation: { enabled: true } }),
        request: { destinationSeed: 'destination', mode: 'live' },
      }),
      AdmissionError,
      'LiveMigrationNotApplicable',
    ],
    [
      'a live migration of a highly available shoot',
      input({ shoot: aScheduledShoot(ha('node')), request: { destinationSeed: 'destination', mode: 'live' } }),
      AdmissionError,
      'LiveMigrationNotApplicable',
    ],
  ])('refuses when %s', (_name, admission, error, code) => {
    // Act
    const admit = () => admitMigration(admission);

    // Assess
    expect(admit).toThrow(error);
    try {
      admit();
    } catch (e) {
      expect((e as { code: string }).code).toBe(code);
    }
  });

  it.each([
    ['a plain move', input(), 'start'],
    ['a node-tolerant shoot to a single-zonal seed', input({ shoot: aScheduledShoot(ha('node')) }), 'start'],
    [
      'a zone-tolerant shoot to a multi-zonal seed',
      input({
        shoot: aScheduledShoot(ha('zone')),
        destination: aBackedSeed({ name: 'destination', multiZonal: true }),
      }),
      'start',
    ],
    ['a destination chosen by the scheduler', input({ request: {} }), 'start'],
    ['a live migration of a running single-member shoot', input({ request: { mode: 'live' } }), 'start'],
    [
      'a destination with room left',
      input({ destination: aBackedSeed({ name: 'destination', capacity: 2, shoots: 1 }) }),
      'start',
    ],
    [
      'a fresh destination heartbeat',
      input({
        maxDestinationHeartbeatAgeMs: 60_000,
        destination: aBackedSeed({ name: 'destination', lastHeartbeatTime: '2026-02-01T11:59:30Z' }),
      }),
      'start',
    ],
    [
      'a hidden destination named by the operator',
      input({ destination: aBackedSeed({ name: 'destination', visible: false }) }),
      'start',
    ],
    ['after a succeeded migration', input({ running: { ...running, state: 'Succeeded' } }), 'start'],
    ['once its Create succeeded', input({ shoot: creating('Succeeded') }), 'start'],
    ['while its Create command runs on the seed', input({ shoot: creating('Processing') }), 'start'],
    ['while its Create is retried after an Error (its seed may be lost)', input({ shoot: creating('Error') }), 'start'],
    ['once its Create failed for good (what its seed has is moved)', input({ shoot: creating('Failed') }), 'start'],
    [
      'a failed migration, resumed while a Create is recorded in flight',
      input({ running: failed, shoot: creating('Processing', 0), request: {} }),
      'resume',
    ],
    ['a failed migration, without a destination', input({ running: failed, request: {} }), 'resume'],
    ['a failed migration, with its own destination', input({ running: failed }), 'resume'],
    ['a failed migration whose source seed is gone', input({ running: failed, source: undefined }), 'resume'],
  ])('admits %s (%s)', (_name, admission, action) => {
    // Act
    const result = admitMigration(admission);

    // Assess
    expect(result.action).toBe(action);
    expect(result.record.state).toBe('Running');
  });

  it('resumes a migration that failed at restore-etcd with the fidelity override: the record keeps it, the restore command carries it', () => {
    // Act
    const plain = admitMigration(input({ running: failedAtRestore, request: {} }));
    const overridden = admitMigration(input({ running: failedAtRestore, request: { acceptEtcdDigestMismatch: true } }));

    // Assess: only the override's resume is recorded as such, with the attempt that carries it.
    expect(plain.record.overrides).toBeUndefined();
    expect(overridden).toMatchObject({
      action: 'resume',
      record: { attempts: 2, overrides: { etcdDigestMismatch: { acceptedAt: NOW.toISOString(), attempt: 2 } } },
    });
    expect(resumePoint(overridden.record)).toBe('restore-etcd');
    const command = (record: MigrationRecord) =>
      commandForStep({ record, step: 'restore-etcd', now: NOW, stateBucket: 'gl-state', etcd: { final: true } });
    expect(command(overridden.record)).toMatchObject({ etcd: { acceptDigestMismatch: true } });
    expect(command(plain.record)).not.toHaveProperty('etcd.acceptDigestMismatch');
    // A later resume (without the flag) keeps what the operator decided.
    const again = failStep(startStep(overridden.record, { step: 'restore-etcd', now: NOW }), {
      step: 'restore-etcd',
      now: NOW,
      message: 'agent unreachable',
    });
    expect(admitMigration(input({ running: again, request: {} })).record.overrides).toEqual(
      overridden.record.overrides,
    );
  });

  it('starts a record locked by its admission, with the guards computed once', () => {
    // Act
    const { record } = admitMigration(
      input({
        shoot: aScheduledShoot({ hibernation: { enabled: true } }),
        request: { destinationSeed: 'destination', mode: 'good' },
      }),
    );

    // Assess
    expect(record).toMatchObject({
      id: 'mig-2',
      shoot: { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' },
      source: { name: 'source', identity: 'source-identity', backupBucket: 'gl-backup-source' },
      destination: { name: 'destination', identity: 'destination-identity', backupBucket: 'gl-backup-destination' },
      mode: 'good',
      guards: { hibernated: true, waitForFinalSnapshot: false, startEtcdAfterRestore: false },
      lastCompletedStep: 'admit-and-lock',
      attempts: 1,
    });
    expect(record.steps[0]).toMatchObject({ id: 'admit-and-lock', state: 'succeeded' });
    expect(record.steps.slice(1).every((s) => s.state === 'pending')).toBe(true);
  });

  it('the 409 carries the running migration', () => {
    // Act / Assess
    expect(() => admitMigration(input({ running }))).toThrow(
      expect.objectContaining({ current: running }) as unknown as Error,
    );
  });

  it('resuming keeps the destination and the path of the failed migration', () => {
    // Act
    const { record } = admitMigration(input({ running: failed, request: { mode: 'good' } }));

    // Assess
    expect(record).toMatchObject({ id: failed.id, destination: failed.destination, path: 'bad', attempts: 2 });
  });
});
