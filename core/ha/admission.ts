import { AdmissionError } from '../errors.js';
import type { FailureToleranceType, Seed, ShootSpec } from '../model/index.js';
import { failureTolerance } from '../model/index.js';
import { MULTI_ZONAL_LABEL } from '../scheduling/constants.js';
import { isMultiZonalSeed } from '../scheduling/multi-zonal.js';

/** What an admission rule objects to; the API turns it into a 422 (see `toAdmissionError`). */
export interface AdmissionViolation {
  code: string;
  field: string;
  message: string;
}

const FIELD = 'spec.controlPlane.highAvailability.failureTolerance.type';

/** none < node < zone: how much failure a control plane survives. */
export function toleranceRank(type: FailureToleranceType | undefined): number {
  return type === undefined ? 0 : type === 'node' ? 1 : 2;
}

const show = (type: FailureToleranceType | undefined): string => (type === undefined ? 'none (non-HA)' : type);

export interface ZoneOnSeedInput {
  /** The shoot before the change; undefined on create. */
  oldSpec?: ShootSpec;
  newSpec: ShootSpec;
  /** The seed the shoot is (or is being) placed on; undefined while unscheduled, when the scheduler decides. */
  seed?: Pick<Seed, 'metadata' | 'status'>;
}

/**
 * GEP-20 "HA Shoot with Assigned Seed and Updated Failure Tolerance": `zone` needs a multi-zonal seed. An
 * unchanged `zone` shoot on the same seed is let through, so that a seed losing its label later does not make
 * every other update of its shoots fail; the scheduler and the migration admit by the same label.
 */
export function checkZoneOnSeed({ oldSpec, newSpec, seed }: ZoneOnSeedInput): AdmissionViolation | undefined {
  if (failureTolerance(newSpec) !== 'zone' || seed === undefined || isMultiZonalSeed(seed)) return undefined;
  const unchanged =
    oldSpec !== undefined && failureTolerance(oldSpec) === 'zone' && oldSpec.seedName === newSpec.seedName;
  if (unchanged) return undefined;
  return {
    code: 'ZoneToleranceNeedsMultiZonalSeed',
    field: FIELD,
    message:
      `failure tolerance zone needs a multi-zonal seed, and seed ${seed.metadata.name} is not (${MULTI_ZONAL_LABEL} is not "true"). ` +
      `Use failure tolerance node on this seed, or migrate the shoot to a multi-zonal seed first (POST .../migrate with a destinationSeed) and then switch to zone, ` +
      `or create a new shoot with zone and let the scheduler place it.`,
  };
}

export interface DowngradeInput {
  oldSpec: ShootSpec;
  newSpec: ShootSpec;
  /** Whether a control plane exists already (the shoot has a seed). */
  scheduled: boolean;
}

/**
 * Lowering the failure tolerance of a running control plane is refused: it would remove etcd members and
 * zone spread under a live cluster. As in Gardener, it is allowed while the shoot has no seed yet, since no
 * control plane exists that could lose anything.
 */
export function checkHaDowngrade({ oldSpec, newSpec, scheduled }: DowngradeInput): AdmissionViolation | undefined {
  const before = failureTolerance(oldSpec);
  const after = failureTolerance(newSpec);
  if (!scheduled || toleranceRank(after) >= toleranceRank(before)) return undefined;
  return {
    code: 'HighAvailabilityDowngrade',
    field: FIELD,
    message:
      `failure tolerance cannot be lowered from ${show(before)} to ${show(after)} on a running control plane. ` +
      `Keep ${show(before)}, or create a new shoot with ${show(after)} and move the workload to it.`,
  };
}

export interface HaAdmissionInput {
  oldSpec?: ShootSpec;
  newSpec: ShootSpec;
  seed?: Pick<Seed, 'metadata' | 'status'>;
}

/** Every HA rule for a create (no `oldSpec`) or an update, in a stable order. */
export function admitHighAvailability({ oldSpec, newSpec, seed }: HaAdmissionInput): AdmissionViolation[] {
  const violations: AdmissionViolation[] = [];
  const scheduled = seed !== undefined || oldSpec?.seedName !== undefined || newSpec.seedName !== undefined;
  const downgrade = oldSpec === undefined ? undefined : checkHaDowngrade({ oldSpec, newSpec, scheduled });
  if (downgrade) violations.push(downgrade);
  const zone = checkZoneOnSeed({ newSpec, ...(oldSpec ? { oldSpec } : {}), ...(seed ? { seed } : {}) });
  if (zone) violations.push(zone);
  return violations;
}

export function toAdmissionError(violation: AdmissionViolation): AdmissionError {
  return new AdmissionError(violation.message, { code: violation.code, field: violation.field });
}
