import { AdmissionError, ConflictError } from '../errors.js';
import { checkZoneOnSeed } from '../ha/admission.js';
import type { Seed } from '../model/seed.js';
import type { Shoot } from '../model/shoot.js';
import { failureTolerance } from '../model/shoot.js';
import { createNotSent } from '../garden/shoot-operations.js';
import { REQUIRED_SEED_CONDITIONS } from '../scheduling/constants.js';
import { isMultiZonalSeed } from '../scheduling/multi-zonal.js';
import { shootLiveObstacle } from './path.js';
import {
  migrationGuards,
  newMigrationRecord,
  resumeMigration,
  type MigrationMode,
  type MigrationRecord,
  type MigrationSeed,
} from './record.js';

export interface MigrationRequest {
  destinationSeed?: string;
  mode?: MigrationMode;
  /** Resume with the operator's override of the fidelity check; only for a migration in Error at restore-etcd. */
  acceptEtcdDigestMismatch?: boolean;
  /** An explicit, longer wait for the source's final snapshot (docs/design.md section 4, "Copy"). */
  finalSnapshotWait?: string;
}

export interface AdmitMigrationInput {
  shoot: Shoot;
  /** The seed named by `shoot.status.seedName`, as stored; undefined when it does not exist. */
  source: Seed | undefined;
  /**
   * The destination: the requested seed, or the scheduler's choice when none was requested; undefined
   * when the requested seed does not exist or the scheduler found none.
   */
  destination: Seed | undefined;
  request: MigrationRequest;
  /** The shoot's current or last migration record, in whatever state. */
  running: MigrationRecord | undefined;
  /** The id for a new migration. */
  id: string;
  now: Date;
  /** When set, a destination whose last heartbeat is older than this is refused as unhealthy. */
  maxDestinationHeartbeatAgeMs?: number;
  /** The scheduler's summary when it found no destination, for the error message. */
  schedulerSummary?: string;
}

export type AdmissionDecision =
  { action: 'start'; record: MigrationRecord } | { action: 'resume'; record: MigrationRecord };

const FIELD_DESTINATION = 'destinationSeed';

/**
 * The admission rules of `POST .../migrate`, in order; the first that fails decides the answer:
 * - 409 `MigrationInProgress` while a migration of the shoot runs; 409 `ShootDeleting`; 409 `ShootCreating` while its Create was not sent to its seed;
 * - a migration that ended in Error is resumed (409 `MigrationDestinationMismatch` if another destination is asked for);
 * - 422 `OverrideNotApplicable`: the fidelity override asked for anything but the resume of a migration in Error at restore-etcd;
 * - 422 `ShootNotScheduled`, `SourceSeedNotFound`, `SourceHasNoBackup`;
 * - 422 `NoDestinationSeed`, `DestinationNotFound`, `SameSeed`, `DestinationDeleting`, `DestinationNotReady`,
 *   `DestinationHeartbeatStale`, `DestinationHasNoBackup`, `DestinationFull`, `ZoneToleranceNeedsMultiZonalSeed`.
 * Returns the record to write under the lock (see lock.ts).
 */
export function admitMigration(input: AdmitMigrationInput): AdmissionDecision {
  const { shoot, source, destination, request, running } = input;
  const ref = `${shoot.metadata.project}/${shoot.metadata.name}`;

  if (running?.state === 'Running') {
    throw new ConflictError(
      `shoot ${ref} is being migrated already (migration ${running.id} to ${running.destination.name}); wait for it to end`,
      { code: 'MigrationInProgress', current: running },
    );
  }
  if (shoot.metadata.deletionTimestamp !== undefined)
    throw new ConflictError(`shoot ${ref} is being deleted`, { code: 'ShootDeleting' });

  const resuming = running?.state === 'Error' ? running : undefined;
  if (resuming && request.destinationSeed !== undefined && request.destinationSeed !== resuming.destination.name) {
    throw new ConflictError(
      `migration ${resuming.id} of shoot ${ref} to ${resuming.destination.name} ended in Error and must be resumed (call migrate without a destination, or with ${resuming.destination.name}); it cannot be redirected to ${request.destinationSeed}`,
      { code: 'MigrationDestinationMismatch', field: FIELD_DESTINATION, current: resuming },
    );
  }

  if (request.acceptEtcdDigestMismatch === true && resuming?.error?.step !== 'restore-etcd') {
    throw new AdmissionError(
      `acceptEtcdDigestMismatch overrides the fidelity check of a restore that failed: it resumes a migration of shoot ${ref} that ended in Error at restore-etcd, ${resuming ? `not one that failed at ${resuming.error?.step ?? 'an unknown step'}` : 'and none did'}`,
      { code: 'OverrideNotApplicable', field: 'acceptEtcdDigestMismatch' },
    );
  }

  if (!resuming && createNotSent(shoot)) {
    throw new ConflictError(
      `shoot ${ref} is waiting for its Create on seed ${shoot.status.operation!.seedName}: there is no control plane to move yet; migrate it once the Create was sent to the seed`,
      { code: 'ShootCreating' },
    );
  }

  if (!resuming && request.mode === 'live') {
    // The walk joins the running etcd of a single member (docs/design.md section 5, "The live path").
    const why = shootLiveObstacle(migrationGuards(shoot));
    if (why)
      throw new AdmissionError(`shoot ${ref} cannot migrate live: ${why}; migrate it with mode auto, good or bad`, {
        code: 'LiveMigrationNotApplicable',
        field: 'mode',
      });
  }

  const sourceName = resuming?.source.name ?? shoot.status.seedName;
  if (sourceName === undefined)
    throw new AdmissionError(`shoot ${ref} is not scheduled on any seed: there is no control plane to migrate`, {
      code: 'ShootNotScheduled',
    });
  if (!resuming) {
    if (source === undefined)
      throw new AdmissionError(`the source seed ${sourceName} of shoot ${ref} does not exist`, {
        code: 'SourceSeedNotFound',
      });
    if (source.spec.backup === undefined)
      throw new AdmissionError(
        `the source seed ${sourceName} has no backup bucket: there are no snapshots to restore from`,
        { code: 'SourceHasNoBackup' },
      );
  }

  const wanted = resuming?.destination.name ?? request.destinationSeed;
  if (destination === undefined) {
    if (wanted === undefined) {
      throw new AdmissionError(
        `no seed can host shoot ${ref}${input.schedulerSummary ? `: ${input.schedulerSummary}` : ''}`,
        { code: 'NoDestinationSeed', field: FIELD_DESTINATION },
      );
    }
    throw new AdmissionError(`destination seed ${wanted} does not exist`, {
      code: 'DestinationNotFound',
      field: FIELD_DESTINATION,
    });
  }
  const destName = destination.metadata.name;
  if (destName === sourceName)
    throw new AdmissionError(`shoot ${ref} runs on seed ${destName} already; choose another destination`, {
      code: 'SameSeed',
      field: FIELD_DESTINATION,
    });
  checkDestination({
    shoot,
    destination,
    now: input.now,
    resuming: resuming !== undefined,
    ...(input.maxDestinationHeartbeatAgeMs === undefined
      ? {}
      : { maxHeartbeatAgeMs: input.maxDestinationHeartbeatAgeMs }),
  });

  const wait = request.finalSnapshotWait ? { finalSnapshotWait: request.finalSnapshotWait } : {};
  if (resuming)
    return {
      action: 'resume',
      record: resumeMigration(resuming, {
        now: input.now,
        ...wait,
        ...(request.acceptEtcdDigestMismatch === true ? { acceptEtcdDigestMismatch: true } : {}),
      }),
    };
  const record = newMigrationRecord({
    id: input.id,
    shoot,
    source: migrationSeed(source!),
    destination: migrationSeed(destination),
    mode: request.mode ?? 'auto',
    now: input.now,
    ...wait,
  });
  return { action: 'start', record };
}

function migrationSeed(seed: Seed): MigrationSeed {
  return {
    name: seed.metadata.name,
    identity: seed.status.identity,
    ...(seed.spec.backup ? { backupBucket: seed.spec.backup.bucket } : {}),
  };
}

/** The destination rules (also checked on a resume: the destination may have recovered, or not). */
function checkDestination(options: {
  shoot: Shoot;
  destination: Seed;
  now: Date;
  maxHeartbeatAgeMs?: number;
  resuming: boolean;
}): void {
  const { shoot, destination } = options;
  const name = destination.metadata.name;
  const field = FIELD_DESTINATION;
  if (destination.metadata.deletionTimestamp !== undefined)
    throw new AdmissionError(`destination seed ${name} is being deleted`, { code: 'DestinationDeleting', field });
  for (const type of REQUIRED_SEED_CONDITIONS) {
    const condition = destination.status.conditions.find((c) => c.type === type);
    if (condition?.status !== 'True') {
      const why =
        condition === undefined
          ? 'not reported'
          : `${condition.status}${condition.reason ? ` (${condition.reason})` : ''}`;
      throw new AdmissionError(`destination seed ${name} is not healthy: condition ${type} is ${why}`, {
        code: 'DestinationNotReady',
        field,
      });
    }
  }
  if (options.maxHeartbeatAgeMs !== undefined) {
    const last =
      destination.status.lastHeartbeatTime === undefined
        ? Number.NaN
        : Date.parse(destination.status.lastHeartbeatTime);
    const age = options.now.getTime() - last;
    if (!(age <= options.maxHeartbeatAgeMs)) {
      throw new AdmissionError(
        `destination seed ${name} is not healthy: ${Number.isNaN(age) ? 'no heartbeat received yet' : `last heartbeat ${Math.round(age / 1000)} s ago`}`,
        { code: 'DestinationHeartbeatStale', field },
      );
    }
  }
  if (destination.spec.backup === undefined)
    throw new AdmissionError(`destination seed ${name} has no backup bucket: snapshots cannot be copied to it`, {
      code: 'DestinationHasNoBackup',
      field,
    });
  const capacity = destination.spec.capacity?.shoots ?? destination.status.allocatable?.shoots;
  if (capacity !== undefined && destination.status.shoots >= capacity) {
    throw new AdmissionError(
      `destination seed ${name} is full: it hosts ${destination.status.shoots} of ${capacity} shoots`,
      { code: 'DestinationFull', field },
    );
  }
  // The shoot keeps its HA setting; the destination must be able to host it (no oldSpec: a move is a placement).
  const violation = checkZoneOnSeed({ newSpec: { ...shoot.spec, seedName: name }, seed: destination });
  if (violation) {
    throw new AdmissionError(
      `destination seed ${name} cannot host shoot ${shoot.metadata.project}/${shoot.metadata.name}: failure tolerance ${failureTolerance(shoot.spec)} needs a multi-zonal seed, and ${name} is ${isMultiZonalSeed(destination) ? '' : 'not '}multi-zonal`,
      { code: violation.code, field },
    );
  }
}
