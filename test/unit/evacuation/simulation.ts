import {
  planEvacuations,
  seedsToWatch,
  type EvacuationPlan,
  type MigrationFacts,
} from '../../../core/evacuation/plan.js';
import { isActive, shootKey, type Evacuation } from '../../../core/evacuation/record.js';
import type { EvacuationRails, EvacuationSettings } from '../../../core/evacuation/settings.js';
import { expiredLease } from '../../../core/garden/lease-monitor.js';
import type { Seed, Shoot } from '../../../core/model/index.js';
import { at, seed, shoot } from './builders.js';

export interface SimSeed {
  name: string;
  evacuation?: EvacuationSettings;
  capacity?: number;
  labels?: Record<string, string>;
  /** Heartbeating: its lease is renewed at every step. */
  alive: boolean;
  renewedAt: number;
}

export interface SimShoot {
  name: string;
  seed: string;
  priority?: number;
  production?: boolean;
  deleted?: boolean;
}

/**
 * A small garden for property tests: seeds whose agents heartbeat or not, shoots placed on them, and
 * migrations that the test advances. Each `round` runs the planner over it, applies its writes as the
 * store would (checking versions) and its migrations as the admission would, and checks every safety rule
 * on the way; a violation throws.
 */
export class EvacuationSim {
  now = 0;
  readonly seeds: SimSeed[];
  readonly shoots: SimShoot[];
  readonly migrations = new Map<string, MigrationFacts>();
  readonly evacuations = new Map<string, Evacuation>();
  readonly plans: EvacuationPlan[] = [];
  /** Most migrations holding an evacuation place at once from each seed, over the whole run. */
  readonly peakFrom = new Map<string, number>();
  /** Most migrations running at once from each seed (those past their restore ahead included). */
  readonly peakRunningFrom = new Map<string, number>();
  private ids = 0;

  constructor(
    options: { seeds: SimSeed[]; shoots: SimShoot[]; rails: EvacuationRails },
    readonly rails = options.rails,
  ) {
    this.seeds = options.seeds.map((s) => ({ ...s }));
    this.shoots = options.shoots.map((s) => ({ ...s }));
  }

  advance(ms: number): void {
    this.now += ms;
    for (const s of this.seeds) if (s.alive) s.renewedAt = this.now;
  }

  readSeeds(): Seed[] {
    return this.seeds.map((s, i) =>
      seed(s.name, this.now, {
        renewedAt: s.renewedAt,
        nodes: i,
        shoots: this.shoots.filter((x) => !x.deleted && x.seed === s.name).length,
        ...(s.evacuation ? { evacuation: s.evacuation } : {}),
        ...(s.capacity === undefined ? {} : { capacity: s.capacity }),
        ...(s.labels ? { labels: s.labels } : {}),
      }),
    );
  }

  readShoots(): Shoot[] {
    return this.shoots
      .filter((s) => !s.deleted)
      .map((s) =>
        shoot(s.name, s.seed, {
          ...(s.priority === undefined ? {} : { priority: s.priority }),
          ...(s.production ? { purpose: 'production' as const } : {}),
        }),
      );
  }

  running(): MigrationFacts[] {
    return [...this.migrations.values()].filter((m) => m.state === 'Running');
  }

  round(): EvacuationPlan {
    const seeds = this.readSeeds();
    const evacuations = [...this.evacuations.values()];
    const watched = new Set(seedsToWatch({ seeds, evacuations, now: at(this.now) }));
    const listed = new Set(evacuations.filter(isActive).flatMap((e) => e.shoots.map(shootKey)));
    const shoots = this.readShoots().filter((s) => watched.has(s.status.seedName!) || listed.has(shootKey(s.metadata)));
    const plan = planEvacuations({
      now: at(this.now),
      seeds,
      shoots,
      migrations: new Map(this.migrations),
      evacuations,
      rails: this.rails,
    });
    this.plans.push(plan);
    for (const { record, expectedVersion } of plan.writes) {
      const stored = this.evacuations.get(record.seed);
      if (stored?.version !== expectedVersion)
        throw new Error(`write of ${record.seed} expects version ${expectedVersion}, stored ${stored?.version}`);
      if (record.version !== (expectedVersion ?? 0) + 1)
        throw new Error(`write of ${record.seed} does not bump its version`);
      this.evacuations.set(record.seed, record);
      for (const entry of record.shoots) {
        // Newly moved by this round: the stored record said otherwise. (Not by its end time: rounds at one
        // instant may move a shoot there and, from another seed's evacuation, back.)
        const was = stored?.shoots.find((x) => shootKey(x) === shootKey(entry));
        if (entry.state !== 'Moved' || was?.state === 'Moved') continue;
        const placed = this.shoots.find((x) => `${entry.project}/${x.name}` === shootKey(entry))?.seed;
        if (placed !== entry.destination)
          throw new Error(`${shootKey(entry)} counted Moved to ${entry.destination}, but it is on ${placed}`);
      }
    }
    const active = [...this.evacuations.values()].filter(isActive).length;
    if (active > this.rails.maxConcurrentEvacuations)
      throw new Error(`${active} evacuations active, cap ${this.rails.maxConcurrentEvacuations}`);
    for (const m of plan.migrations) this.apply(m, seeds, plan);
    for (const s of this.seeds) {
      const from = this.running().filter((m) => m.source === s.name);
      const n = from.filter((m) => m.slotFreedAt === undefined).length;
      this.peakFrom.set(s.name, Math.max(this.peakFrom.get(s.name) ?? 0, n));
      this.peakRunningFrom.set(s.name, Math.max(this.peakRunningFrom.get(s.name) ?? 0, from.length));
      const max = s.evacuation?.maxParallel ?? 5;
      if (n > max) throw new Error(`${n} migrations from ${s.name} hold a place, maxParallel ${max}`);
    }
    return plan;
  }

  private apply(m: EvacuationPlan['migrations'][number], seeds: Seed[], plan: EvacuationPlan): void {
    const key = `${m.project}/${m.name}`;
    const current = this.migrations.get(key);
    if (m.action === 'resume') {
      if (current?.state !== 'Error') throw new Error(`resume of ${key} whose migration is ${current?.state}`);
      this.migrations.set(key, { ...current, state: 'Running', attempts: current.attempts + 1 });
      return;
    }
    if (plan.held) throw new Error(`a move of ${key} started while evacuation is held`);
    if (current?.state === 'Running') throw new Error(`a second migration of ${key}`);
    const dest = seeds.find((s) => s.metadata.name === m.destination);
    const source = this.seeds.find((s) => s.name === m.seed)!;
    if (!dest || m.destination === m.seed) throw new Error(`move of ${key} to ${m.destination}`);
    if (expiredLease(dest, at(this.now))) throw new Error(`move of ${key} onto ${m.destination}, whose lease is lost`);
    for (const [k, v] of Object.entries(source.evacuation?.destinationSelector?.matchLabels ?? {})) {
      if (dest.metadata.labels?.[k] !== v)
        throw new Error(`move of ${key} onto ${m.destination}, which the selector does not match`);
    }
    const capacity = dest.spec.capacity?.shoots;
    const incoming = this.running().filter((r) => r.destination === m.destination).length;
    if (capacity !== undefined && dest.status.shoots + incoming >= capacity)
      throw new Error(`move of ${key} onto full ${m.destination}`);
    const shootNow = this.shoots.find((s) => `dev/${s.name}` === key)!;
    if (shootNow.seed !== m.seed || shootNow.deleted) throw new Error(`move of ${key}, which is not on ${m.seed}`);
    this.ids += 1;
    this.migrations.set(key, {
      id: `m${this.ids}`,
      state: 'Running',
      source: m.seed,
      destination: m.destination,
      attempts: 1,
      createdAt: at(this.now).toISOString(),
    });
  }

  /** The migration of `key` is past its restore ahead and owner change: it lets go of its place. */
  freePlace(key: string): void {
    const m = this.migrations.get(key);
    if (m?.state === 'Running' && m.slotFreedAt === undefined)
      this.migrations.set(key, { ...m, slotFreedAt: at(this.now).toISOString() });
  }

  /** The migration of `key` ends: success moves the shoot to its destination. */
  finish(key: string, outcome: 'Succeeded' | 'Error'): void {
    const m = this.migrations.get(key);
    if (m?.state !== 'Running') return;
    this.migrations.set(key, { ...m, state: outcome });
    if (outcome === 'Succeeded') this.shoots.find((s) => `dev/${s.name}` === key)!.seed = m.destination;
  }
}
