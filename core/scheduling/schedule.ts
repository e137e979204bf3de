import type { Seed, ShootSpec } from '../model/index.js';
import {
  FILTER_IDS,
  SEED_FILTERS,
  firstFailedFilter,
  type FilterContext,
  type FilterId,
  type RegionStrategy,
} from './filters.js';
import { indexSeeds, isSeedIndex, prepareShoot, type PreparedShoot, type SeedIndex } from './prepare.js';
import { PROVIDER_CORRECTION, regionDistance } from './region-distance.js';
import { compareCandidates, score, shootTieBreak } from './score.js';

/**
 * Operator-configured distances, Gardener's region ConfigMap: shoot region -> seed region -> distance.
 * When it lists the shoot's region and at least one eligible seed's region, it decides; otherwise the
 * region-name distance does (Gardener's fallback).
 */
export type RegionDistances = Readonly<Record<string, Readonly<Record<string, number>>>>;

export interface ScheduleOptions {
  /**
   * The spec decides; the name, when given, only orders seeds that tie on everything else (`shootTieBreak`). A
   * dry run passes a shoot that does not exist yet.
   */
  shoot: { spec: ShootSpec; metadata?: { project?: string; name?: string } };
  /** Raw seeds, or an index from `indexSeeds` kept between decisions. */
  seeds: readonly Seed[] | SeedIndex;
  /** Seeds never to choose, e.g. the source of a migration. */
  excludeSeeds?: Iterable<string>;
  /** The clock for heartbeat ages; only read when `maxHeartbeatAgeMs` is set. */
  now?: Date | number;
  /** Default `SameRegion`. */
  strategy?: RegionStrategy;
  regionDistances?: RegionDistances;
  /** Treat seeds whose last heartbeat is older as unusable. Unset: the GardenletReady condition decides. */
  maxHeartbeatAgeMs?: number;
}

export interface Candidate {
  name: string;
  /** 1 is the winner. */
  rank: number;
  /** 0-100, for people: 50 for the zone fit and up to 50 for free capacity; never contradicts `rank`. */
  score: number;
  multiZonal: boolean;
  shoots: number;
  /** null: the seed sets no limit. */
  capacity: number | null;
  utilisation: number;
  provider: string;
  region: string;
  /** The `MinimalDistance` distance, when that strategy decided. */
  distance?: number;
}

export interface Rejection {
  seed: string;
  filter: FilterId;
  reason: string;
}

/**
 * `candidates`, `rejected` and `summary` are built on first read (then kept as plain properties, so JSON and
 * deep equality see them): a decision over 10,000 seeds need not build 10,000 sentences nobody reads.
 */
export interface ScheduleResult {
  /** The winner; absent when the shoot is unschedulable. */
  readonly seedName?: string;
  readonly strategy: RegionStrategy;
  readonly eligible: number;
  readonly total: number;
  /** Every eligible seed, best first. */
  readonly candidates: Candidate[];
  /** Every other seed, by name, with the first filter it failed and why. */
  readonly rejected: Rejection[];
  /** One line for events and `lastOperation.description`. */
  readonly summary: string;
}

const FILTER_PHRASES: Record<FilterId, string> = {
  excluded: 'excluded by the caller',
  usable: 'not usable (deleting, hidden or not ready)',
  seedSelector: 'labels do not match the seed selector',
  providerType: 'provider type not allowed',
  region: 'region does not fit',
  taints: 'taints not tolerated',
  networks: 'networks overlap the shoot',
  capacity: 'at capacity',
  multiZonal: 'not multi-zonal',
};

/** Marks a seed that passed every per-seed filter but lost on `MinimalDistance`. */
const FARTHER = SEED_FILTERS.length;
const PASSED = 255;

interface Distances {
  /** By region code: the distance of that region from the shoot's; NaN: not configured. */
  readonly byRegion: Float64Array;
  /** Whether a different provider adds PROVIDER_CORRECTION (the region-name distance only, as in Gardener). */
  readonly providerCorrection: boolean;
  readonly min: number;
  readonly source: 'configured distance' | 'region-name distance';
}

function distanceOf(index: SeedIndex, i: number, shoot: PreparedShoot, distances: Distances): number {
  const d = distances.byRegion[index.regionCode[i]!]!;
  return distances.providerCorrection && index.providerCode[i] !== shoot.providerCode ? d + PROVIDER_CORRECTION : d;
}

/** `MinimalDistance`: the distance of each region of the index, and the smallest among the passing seeds. */
function measureDistances(
  index: SeedIndex,
  passing: Int32Array,
  count: number,
  shoot: PreparedShoot,
  configured: RegionDistances | undefined,
): Distances {
  const table = configured?.[shoot.region];
  if (table !== undefined) {
    // A region is at distance 0 from itself unless the operator says otherwise, as in Gardener.
    const byRegion = Float64Array.from(index.regions, (r) => table[r] ?? (r === shoot.region ? 0 : NaN));
    const distances: Distances = { byRegion, providerCorrection: false, min: Infinity, source: 'configured distance' };
    const min = smallest(index, passing, count, shoot, distances);
    if (min !== Infinity) return { ...distances, min };
  }
  // One Levenshtein per distinct region: fleets have thousands of seeds but tens of regions.
  const byRegion = Float64Array.from(index.regions, (r) => regionDistance(r, shoot.region));
  const distances: Distances = { byRegion, providerCorrection: true, min: Infinity, source: 'region-name distance' };
  return { ...distances, min: smallest(index, passing, count, shoot, distances) };
}

function smallest(
  index: SeedIndex,
  passing: Int32Array,
  count: number,
  shoot: PreparedShoot,
  distances: Distances,
): number {
  let min = Infinity;
  for (let p = 0; p < count; p++) {
    const d = distanceOf(index, passing[p]!, shoot, distances);
    if (d < min) min = d;
  }
  return min;
}

let scratchBuffer = new Int32Array(0);

/** Positions of the passing seeds: used only within one synchronous decision, so one buffer serves all. */
function scratch(n: number): Int32Array {
  if (scratchBuffer.length < n) scratchBuffer = new Int32Array(n);
  return scratchBuffer;
}

function toMillis(now: Date | number | undefined): number {
  if (now === undefined) return Date.now();
  return typeof now === 'number' ? now : now.getTime();
}

/** Defines a property computed on first read and then stored as an ordinary enumerable value. */
function lazy<T extends object, K extends string, V>(target: T, key: K, compute: () => V): void {
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get() {
      const value = compute();
      Object.defineProperty(target, key, { value, enumerable: true, writable: false, configurable: false });
      return value;
    },
  });
}

/**
 * Chooses a seed for a shoot, as Gardener's scheduler does and GEP-20 amends it: usable seeds, then the
 * filters of `SEED_FILTERS` in order, then `MinimalDistance` if chosen, then the ranking of
 * `compareCandidates`. Deterministic: the same seeds and shoot give the same answer in any input order.
 * Pure: it reads no clock unless asked to check heartbeats, and writes nothing; placing the shoot and
 * counting it on its seed is the caller's conditional write.
 *
 * The explanation (`candidates`, `rejected`, `summary`) is built from the index on first read: do not mutate
 * the seeds in between.
 */
export function schedule(options: ScheduleOptions): ScheduleResult {
  const index = isSeedIndex(options.seeds) ? options.seeds : indexSeeds(options.seeds);
  const n = index.size;
  const shoot = prepareShoot(options.shoot.spec, index);
  const strategy = options.strategy ?? 'SameRegion';
  const tolerance = shoot.failureTolerance;
  const meta = options.shoot.metadata;
  const tieBreak =
    meta?.project !== undefined && meta.name !== undefined
      ? shootTieBreak(index, `${meta.project}/${meta.name}`)
      : undefined;
  const excluded = new Set<number>();
  for (const name of options.excludeSeeds ?? []) {
    const i = index.position(name);
    if (i >= 0) excluded.add(i);
  }
  const context: FilterContext = {
    excluded,
    now: options.maxHeartbeatAgeMs === undefined ? 0 : toMillis(options.now),
    maxHeartbeatAgeMs: options.maxHeartbeatAgeMs,
    strategy,
  };

  // The verdict of each seed, by position: the index of the first failed filter, FARTHER, or PASSED.
  const verdict = new Uint8Array(n);
  const passing = scratch(n);
  let count = 0;
  for (let i = 0; i < n; i++) {
    const failed = firstFailedFilter(index, i, shoot, context);
    if (failed < 0) {
      verdict[i] = PASSED;
      passing[count++] = i;
    } else verdict[i] = failed;
  }

  const distances =
    strategy === 'MinimalDistance' && !shoot.testing && count > 0
      ? measureDistances(index, passing, count, shoot, options.regionDistances)
      : undefined;
  let best = -1;
  let eligible = 0;
  for (let p = 0; p < count; p++) {
    const i = passing[p]!;
    if (distances !== undefined && distanceOf(index, i, shoot, distances) !== distances.min) {
      verdict[i] = FARTHER;
      continue;
    }
    eligible++;
    if (best < 0 || compareCandidates(index, i, best, tolerance, tieBreak) < 0) best = i;
  }

  const result = {
    strategy,
    eligible,
    total: n,
    ...(best < 0 ? {} : { seedName: index.names[best]! }),
  } as ScheduleResult;

  lazy(result, 'candidates', () => {
    const chosen: number[] = [];
    for (let i = 0; i < n; i++) if (verdict[i] === PASSED) chosen.push(i);
    chosen.sort((a, b) => compareCandidates(index, a, b, tolerance, tieBreak));
    return chosen.map((i, k): Candidate => {
      const capacity = index.capacity[i]!;
      const candidate: Candidate = {
        name: index.names[i]!,
        rank: k + 1,
        score: score(index, i, tolerance),
        multiZonal: index.multiZonal[i] === 1,
        shoots: index.shoots[i]!,
        capacity: capacity === Infinity ? null : capacity,
        utilisation: index.utilisation(i),
        provider: index.providers[index.providerCode[i]!]!,
        region: index.regions[index.regionCode[i]!]!,
      };
      if (distances !== undefined) candidate.distance = distanceOf(index, i, shoot, distances);
      return candidate;
    });
  });

  lazy(result, 'rejected', () => {
    const rejected: Rejection[] = [];
    for (let i = 0; i < n; i++) {
      const v = verdict[i]!;
      if (v === PASSED) continue;
      const seed = index.names[i]!;
      if (v === FARTHER && distances !== undefined) {
        const d = distanceOf(index, i, shoot, distances);
        const seedRegion = index.regions[index.regionCode[i]!];
        const reason = Number.isNaN(d)
          ? `region ${seedRegion} has no configured distance from ${shoot.region} (strategy MinimalDistance)`
          : `${distances.source} ${d} from ${shoot.region} is above the minimum ${distances.min} (strategy MinimalDistance)`;
        rejected.push({ seed, filter: 'region', reason });
      } else {
        const filter = SEED_FILTERS[v]!;
        rejected.push({ seed, filter: filter.id, reason: filter.reason(index, i, shoot, context) });
      }
    }
    return rejected;
  });

  lazy(result, 'summary', () => {
    if (result.seedName !== undefined)
      return `scheduled onto ${result.seedName}: ${eligible} of ${n} seeds eligible (strategy ${strategy})`;
    const counts = new Map<FilterId, number>();
    for (const v of verdict) {
      if (v === PASSED) continue;
      const id: FilterId = v === FARTHER ? 'region' : SEED_FILTERS[v]!.id;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    const parts = FILTER_IDS.filter((id) => counts.has(id)).map((id) => `${counts.get(id)} ${FILTER_PHRASES[id]}`);
    return `0/${n} seeds are eligible for scheduling (strategy ${strategy})${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
  });

  return result;
}
