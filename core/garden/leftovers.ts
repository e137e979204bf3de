import type { HostedControlPlane } from '../model/seed.js';
import type { Shoot } from '../model/shoot.js';
import { migrationRunning } from './shoot-operations.js';

/** A control plane a seed's agent may remove: the garden no longer places its shoot there. */
export interface Release {
  technicalID: string;
  reason: string;
}

/**
 * The source that comes back (GEP-17's bad case, or a seed whose agent slept through a migration) still
 * runs a fenced, inactive control plane. It may go only when all of these hold, each guarding a way it
 * could still be needed:
 * - its seed sees the owner record naming another seed (`not-owner`, its sidecar's check or, for a plane
 *   that does not serve, the agent's own): a seed that owns the record, or cannot read it, keeps what it has;
 * - the garden does not place the shoot on this seed (a migration back here, or one that failed and
 *   left it here, keeps it), or the shoot no longer exists;
 * - no migration of the shoot runs (the migration deletes its source itself, and a bad path may still
 *   copy the final snapshot it is about to take).
 * The agent checks the owner record once more before it deletes (the garden's view may be old).
 */
export function releasable(options: {
  seed: string;
  planes: readonly HostedControlPlane[];
  /** The shoot each plane belongs to, by technicalID (undefined: it does not exist). */
  shoots: ReadonlyMap<string, Shoot | undefined>;
}): Release[] {
  const out: Release[] = [];
  for (const plane of options.planes) {
    if (plane.ownerCheck !== 'not-owner' || plane.active || !plane.shoot) continue;
    if (!options.shoots.has(plane.technicalID)) continue;
    const shoot = options.shoots.get(plane.technicalID);
    if (!shoot) {
      out.push({
        technicalID: plane.technicalID,
        reason: `shoot ${plane.shoot.project}/${plane.shoot.name} no longer exists`,
      });
      continue;
    }
    if (shoot.status.technicalID !== plane.technicalID) continue;
    if (migrationRunning(shoot)) continue;
    const placedOn = shoot.status.seedName;
    if (placedOn === undefined || placedOn === options.seed) continue;
    out.push({
      technicalID: plane.technicalID,
      reason: `shoot ${plane.shoot.project}/${plane.shoot.name} is placed on seed ${placedOn} and its owner record names another seed`,
    });
  }
  return out;
}

/** The planes worth looking up: only those a release could apply to. */
export function releaseCandidates(planes: readonly HostedControlPlane[]): HostedControlPlane[] {
  return planes.filter((p) => p.ownerCheck === 'not-owner' && !p.active && p.shoot !== undefined);
}
