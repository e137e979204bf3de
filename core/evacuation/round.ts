import { ConflictError } from '../errors.js';
import type { EventSink } from '../garden/context.js';
import { listAllShootsOnSeed } from '../garden/listing.js';
import type { Shoot } from '../model/shoot.js';
import { HEALTH_ONLY, listAllSeeds, type SchedulingPolicy } from '../garden/placement.js';
import type { GardenRepository } from '../garden/repository.js';
import type { MigrationStore } from '../migration/store.js';
import {
  planEvacuations,
  seedsToWatch,
  type EvacuationPlan,
  type MigrationAction,
  type MigrationFacts,
  type ShootSchedulingWrite,
} from './plan.js';
import { isActive, shootKey, type Evacuation } from './record.js';
import type { EvacuationRails } from './settings.js';
import { slotFreedAt } from './slots.js';
import type { EvacuationStore } from './store.js';

/** A move's start: the migration's id, or why the admission refused it (the shoot waits as Pending). */
export type MoveOutcome = { started: string } | { rejected: string };

/** Starts (mode bad, to the chosen seed) or resumes one shoot's migration through the migration admission. */
export interface EvacuationMover {
  move(action: MigrationAction): Promise<MoveOutcome>;
}

/**
 * The `after` clock: wakes the controller when a lost seed's evacuation is due, rather than at the next
 * one-minute round. Idempotent per seed and moment (every round that finds the seed waiting asks again).
 */
export interface EvacuationDueTimer {
  wakeAt(seed: string, dueAt: string): Promise<void>;
}

export interface EvacuationRoundOptions {
  repo: GardenRepository;
  migrations: Pick<MigrationStore, 'get'>;
  store: EvacuationStore;
  mover: EvacuationMover;
  events: EventSink;
  rails: EvacuationRails;
  scheduling?: SchedulingPolicy;
  /** Absent: a waiting seed's evacuation starts at the first round after it is due. */
  dueTimer?: EvacuationDueTimer;
  now: Date;
}

export interface EvacuationRoundResult {
  plan: EvacuationPlan;
  /** Seeds whose evacuation another writer changed first: this round left them alone. */
  lostRaces: string[];
  started: { shoot: string; destination: string; migrationId: string }[];
  rejected: { shoot: string; reason: string }[];
  /** Waiting seeds whose wake-up could not be set (the next scheduled round starts them). */
  timerErrors: { seed: string; error: string }[];
}

/**
 * One round of the evacuation controller: read, plan (pure), write each changed evacuation conditionally,
 * and only then start the moves it claimed, so that two rounds at once can never both claim a place; the
 * migrations' ids are recorded afterwards (a round that stops before that is made good by the next one,
 * which finds the migration records). Events follow the writes they describe.
 */
export async function runEvacuationRound(options: EvacuationRoundOptions): Promise<EvacuationRoundResult> {
  const { store, events } = options;
  const seeds = await listAllSeeds(options.repo, HEALTH_ONLY);
  const evacuations = await store.list();
  const watched = new Set(seedsToWatch({ seeds, evacuations, now: options.now }));
  const listed = new Set(evacuations.filter(isActive).flatMap((e) => e.shoots.map(shootKey)));
  const shoots = await shootsToPlan(options.repo, watched, listed);
  const migrations = new Map<string, MigrationFacts>();
  for (const shoot of shoots) {
    const record = await options.migrations.get(shoot.metadata.project, shoot.metadata.name);
    if (!record) continue;
    const freed = slotFreedAt(record);
    migrations.set(shootKey(shoot.metadata), {
      id: record.id,
      state: record.state,
      source: record.source.name,
      destination: record.destination.name,
      attempts: record.attempts,
      createdAt: record.createdAt,
      ...(freed ? { slotFreedAt: freed } : {}),
    });
  }
  const plan = planEvacuations({
    now: options.now,
    seeds,
    shoots,
    migrations,
    evacuations,
    rails: options.rails,
    ...(options.scheduling ? { scheduling: options.scheduling } : {}),
  });

  const lostRaces: string[] = [];
  const written = new Map<string, Evacuation>();
  for (const { record, expectedVersion } of plan.writes) {
    try {
      await store.put(record, expectedVersion);
      written.set(record.seed, record);
    } catch (error) {
      if (!(error instanceof ConflictError) || error.code !== 'EvacuationChanged') throw error;
      lostRaces.push(record.seed);
    }
  }
  for (const event of plan.events)
    if (!lostRaces.includes(String(event.detail.seed))) await events.publish(event.type, event.detail);
  for (const write of plan.shootScheduling)
    if (!lostRaces.includes(write.seed)) await showScheduling(options.repo, write);

  const result: EvacuationRoundResult = { plan, lostRaces, started: [], rejected: [], timerErrors: [] };
  for (const { seed, dueAt } of plan.waiting) {
    try {
      await options.dueTimer?.wakeAt(seed, dueAt);
    } catch (error) {
      // The timer only brings the start forward: the one-minute round still starts the evacuation.
      result.timerErrors.push({ seed, error: error instanceof Error ? error.message : String(error) });
    }
  }
  const outcomes = new Map<string, { action: MigrationAction; outcome: MoveOutcome }[]>();
  for (const action of plan.migrations) {
    if (lostRaces.includes(action.seed)) continue;
    const outcome = await options.mover.move(action);
    outcomes.set(action.seed, [...(outcomes.get(action.seed) ?? []), { action, outcome }]);
  }
  for (const [seed, list] of outcomes) {
    const current = written.get(seed) ?? evacuations.find((e) => e.seed === seed)!;
    const next = recordOutcomes(current, list, options.now);
    try {
      await store.put(next, current.version);
    } catch (error) {
      // A concurrent writer (an operator's pause): the next round finds the migrations by their records.
      if (!(error instanceof ConflictError) || error.code !== 'EvacuationChanged') throw error;
      lostRaces.push(seed);
    }
    for (const { action, outcome } of list) {
      const shoot = `${action.project}/${action.name}`;
      if ('rejected' in outcome) {
        result.rejected.push({ shoot, reason: outcome.rejected });
        continue;
      }
      result.started.push({ shoot, destination: action.destination, migrationId: outcome.started });
      await events.publish('EvacuationShootStarted', {
        seed,
        evacuationId: next.id,
        project: action.project,
        shoot: action.name,
        destination: action.destination,
        migrationId: outcome.started,
        resumed: action.action === 'resume',
      });
    }
  }
  return result;
}

/**
 * Rounds until one writes every record it meant to (at most `attempts`, default 3), each with the time it
 * starts. The controller is woken by the events of the moves (an owner record moved, a migration ended):
 * a round that lost the race for a record to a concurrent one may have been the only one to read the
 * change its event announced, and without another round the place it freed would wait for the next
 * minute's. Returns the last round's result.
 */
export async function runEvacuationRounds(
  options: Omit<EvacuationRoundOptions, 'now'> & { now: () => Date; attempts?: number },
): Promise<EvacuationRoundResult> {
  const attempts = options.attempts ?? 3;
  for (let attempt = 1; ; attempt++) {
    const result = await runEvacuationRound({ ...options, now: options.now() });
    if (result.lostRaces.length === 0 || attempt >= attempts) return result;
  }
}

/**
 * The shoots a round plans with: those placed on a watched seed (read seed by seed through the seed index,
 * never the whole fleet) and those an active evacuation lists wherever they are now. A fleet with no lost
 * lease and no evacuation reads no shoot at all.
 */
async function shootsToPlan(repo: GardenRepository, watched: ReadonlySet<string>, listed: ReadonlySet<string>) {
  const shoots = new Map<string, Shoot>();
  for (const seed of [...watched].sort())
    for (const shoot of await listAllShootsOnSeed(repo, seed)) shoots.set(shootKey(shoot.metadata), shoot);
  for (const key of [...listed].sort()) {
    if (shoots.has(key)) continue;
    const [project, name] = key.split('/') as [string, string];
    const shoot = await repo.getShoot(project, name);
    if (shoot) shoots.set(key, shoot);
  }
  return [...shoots.values()].sort((a, b) => (shootKey(a.metadata) < shootKey(b.metadata) ? -1 : 1));
}

/**
 * Sets or clears a shoot's `status.scheduling`, conditional on the version read; a concurrent writer (a
 * migration's mirror, the API) makes it read again, up to five times, then the next round tries again.
 */
async function showScheduling(repo: GardenRepository, write: ShootSchedulingWrite): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await repo.getShoot(write.project, write.name);
    if (!current) return;
    const { scheduling: _, ...rest } = current.status;
    const status = write.scheduling ? { ...rest, scheduling: write.scheduling } : rest;
    try {
      await repo.updateShoot({ ...current, status }, current.metadata.resourceVersion);
      return;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }
}

/** The record with each started move's migration id, and each refused start back to Pending with the reason. */
export function recordOutcomes(
  record: Evacuation,
  list: readonly { action: MigrationAction; outcome: MoveOutcome }[],
  now: Date,
): Evacuation {
  const next = structuredClone(record);
  for (const { action, outcome } of list) {
    const entry = next.shoots.find((s) => s.project === action.project && s.name === action.name);
    if (entry?.state !== 'Migrating') continue;
    if ('started' in outcome) {
      entry.migrationId = outcome.started;
      delete entry.reason;
    } else if (action.action === 'start') {
      entry.state = 'Pending';
      entry.reason = `the migration admission refused the move to ${action.destination}: ${outcome.rejected}`;
      delete entry.destination;
      delete entry.startedAt;
      delete entry.migrationId;
    } else {
      entry.reason = `resuming its migration was refused: ${outcome.rejected}`;
    }
  }
  next.updatedAt = now.toISOString();
  next.version = record.version + 1;
  return next;
}
