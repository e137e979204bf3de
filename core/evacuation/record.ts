/**
 * An evacuation of one seed, answering one loss of its lease (docs/design.md section 13). Stored one item
 * per seed (its latest evacuation); every write is conditional on `version`.
 *
 * Phases: Running (moves shoots), Paused (an operator stopped new moves), Cancelling (an operator, or the
 * seed's settings, ended it; moves under way finish), Stopping (the seed's lease came back: the shoots not
 * moved yet stay where they are; moves under way finish); then Completed, Cancelled or Stopped.
 */
export type EvacuationPhase = 'Running' | 'Paused' | 'Cancelling' | 'Stopping' | 'Completed' | 'Cancelled' | 'Stopped';
export const ACTIVE_PHASES: readonly EvacuationPhase[] = ['Running', 'Paused', 'Cancelling', 'Stopping'];

/**
 * One shoot of the evacuated seed: Pending (not moved yet; `reason` says why when no seed fits), Migrating
 * (its migration is claimed or under way: it holds one of the `maxParallel` places until `slotFreedAt`), Moved (the migration
 * succeeded), Failed (its migration ended in Error `maxAttempts` times), Gone (deleted, or moved by
 * someone else).
 */
export type EvacuationShootState = 'Pending' | 'Migrating' | 'Moved' | 'Failed' | 'Gone';

export interface EvacuationShoot {
  project: string;
  name: string;
  state: EvacuationShootState;
  /** The evacuation priority it was ordered by (annotation, then purpose). */
  priority: number;
  destination?: string;
  /** Undefined while the migration is claimed but its id is not recorded yet. */
  migrationId?: string;
  reason?: string;
  /** When its migration was claimed; a migration record created since then is this one. */
  startedAt?: string;
  /**
   * While Migrating (and after): when its move let go of its place, its etcd restored ahead on the
   * destination and the owner record naming it, so that only the copy's wait and a catch-up are left
   * (core/evacuation/slots.ts). Absent while it holds its place.
   */
  slotFreedAt?: string;
  endedAt?: string;
}

export interface Evacuation {
  apiVersion: 'core.gardenless.io/v1';
  kind: 'Evacuation';
  id: string;
  seed: string;
  /** The loss this evacuation answers: the lease's last renewal and when it ran out. */
  lastRenewTime: string;
  lostSince: string;
  phase: EvacuationPhase;
  /** Why the phase is what it is (who paused or cancelled, the seed came back...). */
  reason?: string;
  /** Set while the fleet-wide rail holds every evacuation (too many seeds lost at once). */
  held?: string;
  maxParallel: number;
  shoots: EvacuationShoot[];
  createdAt: string;
  updatedAt: string;
  endedAt?: string;
  /** 1 for a new item, plus one for every write: the condition of the next write. */
  version: number;
}

export function isActive(evacuation: Pick<Evacuation, 'phase'>): boolean {
  return ACTIVE_PHASES.includes(evacuation.phase);
}

export function shootKey(ref: { project: string; name: string }): string {
  return `${ref.project}/${ref.name}`;
}

/** Counts per shoot state, for events and the CLI. */
export function tally(evacuation: Pick<Evacuation, 'shoots'>): Record<EvacuationShootState, number> {
  const out: Record<EvacuationShootState, number> = { Pending: 0, Migrating: 0, Moved: 0, Failed: 0, Gone: 0 };
  for (const s of evacuation.shoots) out[s.state] += 1;
  return out;
}

/** The evacuation's id: one per seed and loss, so that a repeated start of the same loss is the same evacuation. */
export function evacuationId(seed: string, lastRenewTime: string): string {
  return `${seed}-${lastRenewTime.replace(/[^0-9]/g, '').slice(0, 17)}`;
}
