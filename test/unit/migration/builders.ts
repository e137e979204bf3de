import {
  completeStep,
  newMigrationRecord,
  PREPARE_STEPS,
  resumePoint,
  setPath,
  startStep,
  type MigrationMode,
  type MigrationPath,
  type MigrationRecord,
} from '../../../core/migration/index.js';
import type { Seed, Shoot, ShootSpec } from '../../../core/model/index.js';
import { aSeed, aShoot, type SeedFixture } from '../scheduling/fixtures.js';

export const NOW = new Date('2026-02-01T12:00:00Z');
export const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

/** A usable seed with a backup bucket (the scheduling fixture has none). */
export function aBackedSeed(f: SeedFixture & { backup?: boolean } = {}): Seed {
  const seed = aSeed(f);
  return f.backup === false
    ? seed
    : { ...seed, spec: { ...seed.spec, backup: { bucket: `gl-backup-${seed.metadata.name}`, region: 'eu-west-1' } } };
}

/** A shoot scheduled on `seed` (default `source`). */
export function aScheduledShoot(spec: Partial<ShootSpec> = {}, seed = 'source'): Shoot {
  const shoot = aShoot({ ...spec, seedName: seed });
  return { ...shoot, status: { ...shoot.status, seedName: seed } };
}

export function aRecord(
  options: { mode?: MigrationMode; hibernated?: boolean; failureTolerance?: 'node' | 'zone' } = {},
): MigrationRecord {
  return newMigrationRecord({
    id: 'mig-1',
    shoot: aScheduledShoot({
      ...(options.hibernated ? { hibernation: { enabled: true } } : {}),
      ...(options.failureTolerance
        ? { controlPlane: { highAvailability: { failureTolerance: { type: options.failureTolerance } } } }
        : {}),
    }),
    source: { name: 'source', identity: 'source-identity', backupBucket: 'gl-backup-source' },
    destination: { name: 'destination', identity: 'destination-identity', backupBucket: 'gl-backup-destination' },
    mode: options.mode ?? 'auto',
    now: NOW,
  });
}

/** The pre-copy as the state machine runs it right after choose-path, where it is not skipped: each step done. */
export function preCopied(record: MigrationRecord, now = NOW): MigrationRecord {
  let r = record;
  for (const step of PREPARE_STEPS) {
    if (resumePoint(r) !== step) continue;
    r = completeStep(startStep(r, { step, now }), { step, now });
  }
  return r;
}

/** choose-path decided `path`, and the pre-copy that follows it is done: the record where the path's own steps begin. */
export function onPath(record: MigrationRecord, path: MigrationPath, now = NOW): MigrationRecord {
  return preCopied(setPath(record, { path, reason: 'test', now }), now);
}
