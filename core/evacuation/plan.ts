import { expiredLease, type ExpiredLease } from '../garden/lease-monitor.js';
import { schedulingStatus, type SchedulingPolicy } from '../garden/placement.js';
import { labelOf } from '../scheduling/prepare.js';
import { schedule } from '../scheduling/schedule.js';
import type { Seed } from '../model/seed.js';
import type { Shoot, ShootStatus } from '../model/shoot.js';
import { compareForEvacuation, evacuationPriority } from './priority.js';
import { evacuationId, isActive, shootKey, tally, type Evacuation, type EvacuationShoot } from './record.js';
import { effectiveSettings, type EffectiveEvacuationSettings, type EvacuationRails } from './settings.js';

/** What the planner needs to know of a shoot's current or last migration. */
export interface MigrationFacts {
  id: string;
  state: 'Running' | 'Succeeded' | 'Error';
  source: string;
  destination: string;
  attempts: number;
  createdAt: string;
  /**
   * When a running migration let go of its evacuation slot (`slotFreedAt` of core/evacuation/slots.ts): its
   * destination holds the shoot's etcd restored ahead and the owner record names it, so that only the copy's
   * wait and a catch-up are left. Undefined while it holds the slot.
   */
  slotFreedAt?: string;
}

export interface EvacuationWorld {
  now: Date;
  /** Every seed, its lease joined in (as the garden reads them). */
  seeds: readonly Seed[];
  /** The shoots placed on the seeds `seedsToWatch` names, and those the active evacuations list. */
  shoots: readonly Shoot[];
  /** By `project/name`: the current or last migration of each shoot in `shoots`. */
  migrations: ReadonlyMap<string, MigrationFacts>;
  /** The latest evacuation of each seed, as stored. */
  evacuations: readonly Evacuation[];
  rails: EvacuationRails;
  scheduling?: SchedulingPolicy;
}

/** A record to write: `expectedVersion` undefined means no item may exist for the seed yet. */
export interface EvacuationWrite {
  record: Evacuation;
  expectedVersion: number | undefined;
}

/** A migration to start (mode bad, to `destination`) or to resume (it ended in Error), once the writes hold. */
export interface MigrationAction {
  seed: string;
  evacuationId: string;
  project: string;
  name: string;
  destination: string;
  action: 'start' | 'resume';
  /** The seed's `finalSnapshotWait`, for a start. */
  finalSnapshotWait?: string;
}

/**
 * What a shoot of the evacuated seed shows of the evacuation on itself, in `status.scheduling` (the shape
 * a pending placement uses): why it fits nowhere, or, `scheduling` undefined, nothing any more (it moves,
 * moved, or the evacuation ended). Written after the evacuation's record, by a read-modify-write.
 */
export interface ShootSchedulingWrite {
  seed: string;
  project: string;
  name: string;
  scheduling: NonNullable<ShootStatus['scheduling']> | undefined;
}

export interface PlannedEvent {
  type: string;
  detail: Record<string, unknown>;
}

export interface EvacuationPlan {
  writes: EvacuationWrite[];
  migrations: MigrationAction[];
  shootScheduling: ShootSchedulingWrite[];
  events: PlannedEvent[];
  /** Why no evacuation makes progress now (the share-of-seeds rail), if so. */
  held?: string;
  /** Seeds whose lease is lost and that opted in, with when their evacuation is due. */
  waiting: { seed: string; dueAt: string }[];
  /** Seeds due for evacuation that wait for the global cap (or the hold). */
  queued: string[];
}

/**
 * The seeds whose shoots and migrations a round must read: those with an active evacuation, and those
 * whose lease is lost and that opted in (their evacuation may start in this round).
 */
export function seedsToWatch(options: {
  seeds: readonly Seed[];
  evacuations: readonly Evacuation[];
  now: Date;
}): string[] {
  const out = new Set(options.evacuations.filter(isActive).map((e) => e.seed));
  for (const seed of options.seeds) {
    if (effectiveSettings(seed.spec.settings?.evacuation) && expiredLease(seed, options.now))
      out.add(seed.metadata.name);
  }
  return [...out].sort();
}

/**
 * One round of the evacuation controller, pure (docs/design.md section 13). From the seeds, the shoots of
 * the watched seeds, their migrations and the stored evacuations it decides:
 * - how each active evacuation's shoots stand (their migrations succeeded, failed, were resumed, the
 *   shoot went away), and its phase (ended once nothing is left to wait for; Stopping once the seed's
 *   lease is back; Cancelling once its settings no longer opt in);
 * - which new evacuations start: seeds that opted in and whose lease has been lost for `after`, at most
 *   `maxConcurrentEvacuations` active at once, oldest loss first; none while more than `maxLostShare`
 *   of the seeds holding leases have lost them (then running evacuations start no new moves either);
 * - which shoots start moving: highest priority first, while fewer than `maxParallel` of the seed's
 *   shoots are migrating, to the seed the scheduler chooses among the healthy seeds the destination
 *   selector matches, counting the moves already under way against each destination's capacity. A shoot
 *   that fits nowhere stays Pending with the scheduler's reason and is tried again next round.
 * Never two migrations for one shoot: a shoot whose migration runs (the evacuation's or an operator's) is
 * Migrating and is only watched.
 */
export function planEvacuations(world: EvacuationWorld): EvacuationPlan {
  const now = world.now;
  const at = now.toISOString();
  const seedsByName = new Map(world.seeds.map((s) => [s.metadata.name, s]));
  const shootsBySeed = groupShoots(world.shoots);
  const shootByKey = new Map(world.shoots.map((s) => [shootKey(s.metadata), s]));
  const lost = new Map<string, ExpiredLease>();
  for (const seed of world.seeds) {
    const lease = expiredLease(seed, now);
    if (lease) lost.set(seed.metadata.name, lease);
  }
  const holders = world.seeds.filter((s) => s.status.lastHeartbeatTime !== undefined).length;
  const held =
    holders > 0 && lost.size / holders > world.rails.maxLostShare
      ? `${lost.size} of ${holders} seeds have lost their lease, more than the allowed share ${world.rails.maxLostShare}: a fault on the garden's side is likelier than ${lost.size} lost seeds, so no shoot moves`
      : undefined;

  const plan: EvacuationPlan = {
    writes: [],
    migrations: [],
    shootScheduling: [],
    events: [],
    waiting: [],
    queued: [],
    ...(held ? { held } : {}),
  };
  const records: { record: Evacuation; before: Evacuation | undefined }[] = [];

  // Moves under way count against their destination's capacity until they finish.
  const inFlightTo = new Map<string, number>();
  for (const e of world.evacuations) {
    if (!isActive(e)) continue;
    for (const s of e.shoots)
      if (s.state === 'Migrating' && s.destination)
        inFlightTo.set(s.destination, (inFlightTo.get(s.destination) ?? 0) + 1);
  }
  const capacitySeeds = world.seeds.map((s) => withExtraShoots(s, inFlightTo.get(s.metadata.name) ?? 0));

  for (const stored of world.evacuations) {
    if (!isActive(stored)) continue;
    const record = structuredClone(stored);
    const seed = seedsByName.get(record.seed);
    const settings = seed ? effectiveSettings(seed.spec.settings?.evacuation) : undefined;
    transitionPhase(record, { seed, settings, lease: lost.get(record.seed) });
    refreshShoots(record, {
      settings,
      shoots: shootsBySeed.get(record.seed) ?? [],
      shootByKey,
      migrations: world.migrations,
      rails: world.rails,
      now,
      held,
      plan,
    });
    records.push({ record, before: stored });
  }

  // New evacuations: oldest loss first, within the global cap, never while the fleet-wide rail holds.
  let active = records.filter((r) => isActive(r.record)).length;
  const latest = new Map(world.evacuations.map((e) => [e.seed, e]));
  const due: { seed: Seed; lease: ExpiredLease; settings: EffectiveEvacuationSettings }[] = [];
  for (const [name, lease] of lost) {
    const seed = seedsByName.get(name)!;
    const settings = effectiveSettings(seed.spec.settings?.evacuation);
    if (!settings) continue;
    const previous = latest.get(name);
    if (previous && (isActive(previous) || previous.lastRenewTime === lease.lastRenewTime)) continue;
    if ((shootsBySeed.get(name) ?? []).length === 0) continue;
    const dueAt = Date.parse(lease.expiredAt) + settings.afterMs;
    if (now.getTime() < dueAt) plan.waiting.push({ seed: name, dueAt: new Date(dueAt).toISOString() });
    else due.push({ seed, lease, settings });
  }
  due.sort(
    (a, b) =>
      a.lease.expiredAt.localeCompare(b.lease.expiredAt) || a.seed.metadata.name.localeCompare(b.seed.metadata.name),
  );
  for (const { seed, lease, settings } of due) {
    const name = seed.metadata.name;
    if (held || active >= world.rails.maxConcurrentEvacuations) {
      plan.queued.push(name);
      continue;
    }
    active += 1;
    const record = newEvacuation({
      seed: name,
      lease,
      settings,
      shoots: shootsBySeed.get(name) ?? [],
      at,
      migrations: world.migrations,
    });
    records.push({ record, before: latest.get(name) });
    plan.events.push({
      type: 'EvacuationStarted',
      detail: {
        seed: name,
        evacuationId: record.id,
        lostSince: lease.expiredAt,
        shoots: record.shoots.length,
        maxParallel: settings.maxParallel,
      },
    });
  }

  // Moves: each Running evacuation fills its free places, highest priority first.
  const noFit = new Map<string, NonNullable<ShootStatus['scheduling']>>();
  for (const { record } of records) {
    if (record.phase !== 'Running') continue;
    const seed = seedsByName.get(record.seed);
    const settings = seed ? effectiveSettings(seed.spec.settings?.evacuation) : undefined;
    if (!settings) continue;
    record.maxParallel = settings.maxParallel;
    if (held) continue;
    startMoves(record, {
      settings,
      shootByKey,
      seeds: capacitySeeds,
      lost: [...lost.keys()],
      scheduling: world.scheduling ?? {},
      now,
      plan,
      noFit,
    });
  }

  for (const { record, before } of records) {
    setHeld(record, held, plan);
    finishIfDone(record, { at, plan });
    showOnShoots(record, { shootByKey, noFit, plan });
    if (before && sameRecord(before, record)) continue;
    record.updatedAt = at;
    const expectedVersion = before?.version;
    plan.writes.push({ record: { ...record, version: (expectedVersion ?? 0) + 1 }, expectedVersion });
  }
  return plan;
}

function groupShoots(shoots: readonly Shoot[]): Map<string, Shoot[]> {
  const out = new Map<string, Shoot[]>();
  for (const shoot of shoots) {
    const seed = shoot.status.seedName;
    if (!seed || shoot.metadata.deletionTimestamp !== undefined) continue;
    out.set(seed, [...(out.get(seed) ?? []), shoot]);
  }
  return out;
}

function newEvacuation(options: {
  seed: string;
  lease: ExpiredLease;
  settings: EffectiveEvacuationSettings;
  shoots: readonly Shoot[];
  at: string;
  migrations: ReadonlyMap<string, MigrationFacts>;
}): Evacuation {
  const shoots = [...options.shoots].sort(compareForEvacuation).map((s) => pendingShoot(s));
  const record: Evacuation = {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Evacuation',
    id: evacuationId(options.seed, options.lease.lastRenewTime),
    seed: options.seed,
    lastRenewTime: options.lease.lastRenewTime,
    lostSince: options.lease.expiredAt,
    phase: 'Running',
    maxParallel: options.settings.maxParallel,
    shoots,
    createdAt: options.at,
    updatedAt: options.at,
    version: 0,
  };
  // A migration already running from the seed (an operator's) holds its place from the start.
  for (const entry of record.shoots) adoptRunning(entry, options.migrations.get(shootKey(entry)), record.seed);
  return record;
}

function pendingShoot(shoot: Shoot): EvacuationShoot {
  return {
    project: shoot.metadata.project,
    name: shoot.metadata.name,
    state: 'Pending',
    priority: evacuationPriority(shoot),
  };
}

function adoptRunning(entry: EvacuationShoot, migration: MigrationFacts | undefined, seed: string): void {
  if (migration?.state !== 'Running' || migration.source !== seed) return;
  entry.state = 'Migrating';
  entry.migrationId = migration.id;
  entry.destination = migration.destination;
  entry.startedAt ??= migration.createdAt;
  delete entry.reason;
}

interface RefreshContext {
  settings: EffectiveEvacuationSettings | undefined;
  shoots: readonly Shoot[];
  shootByKey: ReadonlyMap<string, Shoot>;
  migrations: ReadonlyMap<string, MigrationFacts>;
  rails: EvacuationRails;
  now: Date;
  held: string | undefined;
  plan: EvacuationPlan;
}

/** Each shoot's state from its migration and placement; shoots placed on the seed since are added as Pending. */
function refreshShoots(record: Evacuation, context: RefreshContext): void {
  const at = context.now.toISOString();
  const listed = new Set(record.shoots.map(shootKey));
  for (const shoot of context.shoots)
    if (!listed.has(shootKey(shoot.metadata))) record.shoots.push(pendingShoot(shoot));
  for (const entry of record.shoots) {
    const key = shootKey(entry);
    const shoot = context.shootByKey.get(key);
    const migration = context.migrations.get(key);
    const onSeed =
      shoot !== undefined && shoot.metadata.deletionTimestamp === undefined && shoot.status.seedName === record.seed;
    const gone = shoot ? 'deleted or moved by someone else' : 'deleted';
    if (entry.state === 'Pending') {
      if (!onSeed) endShoot(record, entry, 'Gone', gone, at, context.plan);
      else adoptRunning(entry, migration, record.seed);
      continue;
    }
    if (entry.state !== 'Migrating') continue;
    if (
      entry.migrationId === undefined &&
      migration?.source === record.seed &&
      (migration.state === 'Running' || migration.createdAt >= (entry.startedAt ?? ''))
    ) {
      // The claim's migration started; its id was not recorded (the round ended before it could).
      entry.migrationId = migration.id;
      entry.destination = migration.destination;
    }
    if (entry.migrationId === undefined && !onSeed) {
      endShoot(record, entry, 'Gone', gone, at, context.plan);
      continue;
    }
    if (entry.migrationId === undefined) {
      // Claimed, never started: the mover starts it again while the evacuation runs; otherwise it waits as Pending.
      if (record.phase === 'Running' && !context.held)
        context.plan.migrations.push(moveAction(record, entry, 'start', context.settings));
      else
        backToPending(
          entry,
          `its move was never started, and the evacuation is ${context.held ? 'held' : record.phase}`,
        );
      continue;
    }
    if (migration?.id !== entry.migrationId) {
      if (migration?.state === 'Running' && migration.source === record.seed) {
        // Someone resumed or restarted the move under another id: it is still the shoot's one move.
        entry.migrationId = migration.id;
        entry.destination = migration.destination;
      } else if (!onSeed) endShoot(record, entry, 'Gone', gone, at, context.plan);
      else backToPending(entry, `its migration ${entry.migrationId} is no longer the shoot's`);
      continue;
    }
    entry.destination = migration.destination;
    if (migration.slotFreedAt) entry.slotFreedAt = migration.slotFreedAt;
    else delete entry.slotFreedAt;
    if (migration.state === 'Succeeded')
      endShoot(record, entry, 'Moved', `moved to ${migration.destination}`, at, context.plan);
    else if (migration.state === 'Error') {
      if (migration.attempts >= context.rails.maxAttempts)
        endShoot(
          record,
          entry,
          'Failed',
          `migration ${migration.id} ended in Error ${migration.attempts} times; an operator resumes it`,
          at,
          context.plan,
        );
      // A move that began is carried through even when paused or cancelled: its source may be fenced already.
      else context.plan.migrations.push(moveAction(record, entry, 'resume'));
    }
  }
}

function backToPending(entry: EvacuationShoot, reason: string): void {
  entry.state = 'Pending';
  entry.reason = reason;
  delete entry.migrationId;
  delete entry.destination;
  delete entry.startedAt;
  delete entry.slotFreedAt;
}

function endShoot(
  record: Evacuation,
  entry: EvacuationShoot,
  state: 'Moved' | 'Failed' | 'Gone',
  reason: string,
  at: string,
  plan: EvacuationPlan,
): void {
  entry.state = state;
  entry.reason = reason;
  entry.endedAt = at;
  plan.events.push({
    type: 'EvacuationShootEnded',
    detail: {
      seed: record.seed,
      evacuationId: record.id,
      project: entry.project,
      shoot: entry.name,
      outcome: state,
      reason,
      ...(entry.destination ? { destination: entry.destination } : {}),
      ...(entry.migrationId ? { migrationId: entry.migrationId } : {}),
    },
  });
}

function moveAction(
  record: Evacuation,
  entry: EvacuationShoot,
  action: 'start' | 'resume',
  settings?: EffectiveEvacuationSettings,
): MigrationAction {
  return {
    seed: record.seed,
    evacuationId: record.id,
    project: entry.project,
    name: entry.name,
    destination: entry.destination!,
    action,
    ...(action === 'start' && settings?.finalSnapshotWait ? { finalSnapshotWait: settings.finalSnapshotWait } : {}),
  };
}

/** The seed's lease came back (Stopping), or it no longer opts in (Cancelling); either way no new moves. */
function transitionPhase(
  record: Evacuation,
  context: {
    seed: Seed | undefined;
    settings: EffectiveEvacuationSettings | undefined;
    lease: ExpiredLease | undefined;
  },
): void {
  if (record.phase !== 'Running' && record.phase !== 'Paused') return;
  if (!context.seed) {
    record.phase = 'Stopping';
    record.reason = 'the seed was deleted';
  } else if (context.lease?.lastRenewTime !== record.lastRenewTime) {
    record.phase = 'Stopping';
    record.reason = 'the seed renewed its lease: the shoots not moved yet stay on it, and it releases those moved away';
  } else if (!context.settings) {
    record.phase = 'Cancelling';
    record.reason = "evacuation was disabled in the seed's settings";
  }
}

interface MoveContext {
  settings: EffectiveEvacuationSettings;
  shootByKey: ReadonlyMap<string, Shoot>;
  /** Seeds with the moves under way counted; updated as this round chooses destinations. */
  seeds: Seed[];
  lost: readonly string[];
  scheduling: SchedulingPolicy;
  now: Date;
  plan: EvacuationPlan;
  /** By shoot key: what a shoot that fits nowhere this round shows in `status.scheduling`. */
  noFit: Map<string, NonNullable<ShootStatus['scheduling']>>;
}

function startMoves(record: Evacuation, context: MoveContext): void {
  let free = context.settings.maxParallel - placesHeld(record);
  if (free <= 0) return;
  const mismatched = context.seeds.filter((s) => !matches(s, context.settings.matchLabels)).map((s) => s.metadata.name);
  const exclude = [record.seed, ...context.lost, ...mismatched];
  const pending = record.shoots
    .filter((s) => s.state === 'Pending' && context.shootByKey.has(shootKey(s)))
    .map((entry) => ({ entry, shoot: context.shootByKey.get(shootKey(entry))! }))
    .sort((a, b) => compareForEvacuation(a.shoot, b.shoot));
  for (const { entry, shoot } of pending) {
    if (free <= 0) break;
    const result = schedule({ shoot, seeds: context.seeds, excludeSeeds: exclude, ...context.scheduling });
    entry.priority = evacuationPriority(shoot);
    if (!result.seedName) {
      entry.reason = `no seed fits: ${result.summary}`;
      context.noFit.set(
        shootKey(entry),
        schedulingStatus(result, context.now, `${evacuationSummaryPrefix(record.seed)}${entry.reason}`),
      );
      continue;
    }
    entry.state = 'Migrating';
    entry.destination = result.seedName;
    entry.startedAt = context.now.toISOString();
    delete entry.reason;
    delete entry.migrationId;
    const i = context.seeds.findIndex((s) => s.metadata.name === result.seedName);
    context.seeds[i] = withExtraShoots(context.seeds[i]!, 1);
    context.plan.migrations.push(moveAction(record, entry, 'start', context.settings));
    free -= 1;
  }
}

/** The moves that hold one of the evacuation's places: claimed or migrating, and not past their restore (slots.ts). */
export function placesHeld(record: Pick<Evacuation, 'shoots'>): number {
  return record.shoots.filter((s) => s.state === 'Migrating' && s.slotFreedAt === undefined).length;
}

function matches(seed: Seed, matchLabels: Readonly<Record<string, string>>): boolean {
  return Object.entries(matchLabels).every(([k, v]) => labelOf(seed, k) === v);
}

function withExtraShoots(seed: Seed, extra: number): Seed {
  return extra === 0 ? seed : { ...seed, status: { ...seed.status, shoots: seed.status.shoots + extra } };
}

function setHeld(record: Evacuation, held: string | undefined, plan: EvacuationPlan): void {
  if (!isActive(record)) return;
  if (held && record.held === undefined)
    plan.events.push({ type: 'EvacuationHeld', detail: { seed: record.seed, evacuationId: record.id, reason: held } });
  if (held) record.held = held;
  else delete record.held;
}

/** Ends the evacuation once nothing is left to do: every shoot settled, or (Cancelling, Stopping) no move under way. */
function finishIfDone(record: Evacuation, context: { at: string; plan: EvacuationPlan }): void {
  if (!isActive(record)) return;
  const counts = tally(record);
  const settled = counts.Pending === 0 && counts.Migrating === 0;
  let phase: Evacuation['phase'] | undefined;
  if ((record.phase === 'Running' || record.phase === 'Paused') && settled) phase = 'Completed';
  else if (record.phase === 'Cancelling' && counts.Migrating === 0) phase = 'Cancelled';
  else if (record.phase === 'Stopping' && counts.Migrating === 0) phase = 'Stopped';
  if (!phase) return;
  record.phase = phase;
  record.endedAt = context.at;
  delete record.held;
  context.plan.events.push({
    type: 'EvacuationEnded',
    detail: {
      seed: record.seed,
      evacuationId: record.id,
      phase,
      moved: counts.Moved,
      failed: counts.Failed,
      gone: counts.Gone,
      stayed: counts.Pending,
      ...(record.reason ? { reason: record.reason } : {}),
    },
  });
}

/** How the evacuation's reason in a shoot's `status.scheduling` begins: it is the evacuation's to clear. */
export function evacuationSummaryPrefix(seed: string): string {
  return `evacuation of seed ${seed}: `;
}

/**
 * A shoot that fits nowhere shows the scheduler's reason on itself, written only when it changed (as a
 * pending placement does); the evacuation's reason goes once the shoot no longer waits for a seed: it
 * moves or moved, or the evacuation stops, is cancelled or ended. A reason of something else (a pending
 * placement's) is left alone.
 */
function showOnShoots(
  record: Evacuation,
  context: {
    shootByKey: ReadonlyMap<string, Shoot>;
    noFit: ReadonlyMap<string, NonNullable<ShootStatus['scheduling']>>;
    plan: EvacuationPlan;
  },
): void {
  const prefix = evacuationSummaryPrefix(record.seed);
  for (const entry of record.shoots) {
    const shoot = context.shootByKey.get(shootKey(entry));
    if (!shoot) continue;
    const current = shoot.status.scheduling;
    const waiting = (record.phase === 'Running' || record.phase === 'Paused') && entry.state === 'Pending';
    const wanted = waiting ? context.noFit.get(shootKey(entry)) : undefined;
    const ref = { seed: record.seed, project: entry.project, name: entry.name };
    if (wanted && current?.summary !== wanted.summary)
      context.plan.shootScheduling.push({ ...ref, scheduling: wanted });
    else if (!waiting && current?.summary.startsWith(prefix))
      context.plan.shootScheduling.push({ ...ref, scheduling: undefined });
  }
}

function sameRecord(a: Evacuation, b: Evacuation): boolean {
  return JSON.stringify({ ...a, updatedAt: '' }) === JSON.stringify({ ...b, updatedAt: '' });
}
