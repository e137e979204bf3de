import { MULTI_ZONAL_LABEL } from './constants.js';
import type { PreparedShoot, SeedIndex } from './prepare.js';
import { unusableReason } from './prepare.js';

/** Stable ids of the filters, in the order they run; a rejected seed names the first one it failed. */
export const FILTER_IDS = [
  'excluded',
  'usable',
  'seedSelector',
  'providerType',
  'region',
  'taints',
  'networks',
  'capacity',
  'multiZonal',
] as const;
export type FilterId = (typeof FILTER_IDS)[number];

export type RegionStrategy = 'SameRegion' | 'MinimalDistance';

/** What a decision knows besides the seeds and the shoot. */
export interface FilterContext {
  /** Positions of the seeds the caller excluded. */
  readonly excluded: ReadonlySet<number>;
  readonly now: number;
  /** Seeds whose last heartbeat is older than this are not usable; undefined: heartbeats are not checked. */
  readonly maxHeartbeatAgeMs: number | undefined;
  readonly strategy: RegionStrategy;
}

/**
 * One filter: a cheap test for the decision and, separately, the sentence that explains a rejection. The
 * decision loop builds no strings; explanations are built when someone reads them, from the same pure
 * inputs, so they always agree with the test. `i` is the seed's position in the index.
 */
export interface SeedFilter {
  readonly id: FilterId;
  passes(index: SeedIndex, i: number, shoot: PreparedShoot, context: FilterContext): boolean;
  reason(index: SeedIndex, i: number, shoot: PreparedShoot, context: FilterContext): string;
}

export const excluded: SeedFilter = {
  id: 'excluded',
  passes: (_index, i, _shoot, context) => context.excluded.size === 0 || !context.excluded.has(i),
  reason: () => 'excluded by the caller (for a migration: the source seed)',
};

export const usable: SeedFilter = {
  id: 'usable',
  passes: (index, i, _shoot, context) =>
    index.usable[i] === 1 &&
    (context.maxHeartbeatAgeMs === undefined || context.now - index.lastHeartbeat[i]! <= context.maxHeartbeatAgeMs),
  reason: (index, i, _shoot, context) => {
    const unusable = unusableReason(index.seeds[i]!);
    if (unusable !== undefined) return unusable;
    const age = context.now - index.lastHeartbeat[i]!;
    if (Number.isNaN(age)) return 'no heartbeat received yet';
    return `last heartbeat ${Math.round(age / 1000)} s ago, more than the allowed ${Math.round((context.maxHeartbeatAgeMs ?? 0) / 1000)} s`;
  },
};

function firstMismatch(index: SeedIndex, i: number, shoot: PreparedShoot): readonly [string, string] | undefined {
  for (const entry of shoot.matchLabels) if (index.label(i, entry[0]) !== entry[1]) return entry;
  return undefined;
}

export const seedSelector: SeedFilter = {
  id: 'seedSelector',
  passes: (index, i, shoot) => shoot.matchLabels.length === 0 || firstMismatch(index, i, shoot) === undefined,
  reason: (index, i, shoot) => {
    const [key, value] = firstMismatch(index, i, shoot) ?? ['', ''];
    const actual = index.label(i, key);
    return `the shoot's seed selector requires ${key}=${value}, the seed has ${actual === undefined ? 'no such label' : `${key}=${actual}`}`;
  },
};

export const providerType: SeedFilter = {
  id: 'providerType',
  passes: (index, i, shoot) => shoot.providerAllowed[index.providerCode[i]!] === 1,
  reason: (index, i, shoot) => {
    const provider = index.providers[index.providerCode[i]!];
    return shoot.providerTypes === undefined
      ? `provider ${provider} differs from the shoot's ${shoot.provider} (seedSelector.providerTypes can allow others)`
      : `provider ${provider} is not in the shoot's seedSelector.providerTypes [${shoot.providerTypes.join(', ')}]`;
  },
};

/**
 * `SameRegion`, per seed. `MinimalDistance` compares seeds with each other, so it runs after every per-seed
 * filter (see schedule.ts). The `testing` purpose ignores the region, as in Gardener.
 */
export const region: SeedFilter = {
  id: 'region',
  passes: (index, i, shoot, context) =>
    shoot.testing || context.strategy !== 'SameRegion' || index.regionCode[i] === shoot.regionCode,
  reason: (index, i, shoot) =>
    `region ${index.regions[index.regionCode[i]!]} differs from the shoot's region ${shoot.region} (strategy SameRegion)`,
};

function untolerated(index: SeedIndex, i: number, shoot: PreparedShoot): { key: string; value?: string } | undefined {
  for (const taint of index.taints(i)) {
    const values = shoot.tolerations.get(taint.key);
    // A taint without a value is tolerated by any toleration of its key; one with a value needs that value.
    if (values === undefined || (taint.value !== undefined && !values.includes(taint.value))) return taint;
  }
  return undefined;
}

export const taints: SeedFilter = {
  id: 'taints',
  passes: (index, i, shoot) => index.hasTaints[i] === 0 || untolerated(index, i, shoot) === undefined,
  reason: (index, i, shoot) => {
    const taint = untolerated(index, i, shoot);
    return `taint ${taint?.key}${taint?.value === undefined ? '' : `=${taint.value}`} is not tolerated by the shoot`;
  },
};

/** Position (3 * i + k) of the seed network that the shoot's network `s` overlaps first, or -1. */
function overlapAt(index: SeedIndex, i: number, shoot: PreparedShoot, s: number): number {
  const first = shoot.networks.first[s]!;
  const last = shoot.networks.last[s]!;
  const end = 3 * i + index.networkCount[i]!;
  for (let k = 3 * i; k < end; k++) if (first <= index.networkLast[k]! && index.networkFirst[k]! <= last) return k;
  return -1;
}

export const networks: SeedFilter = {
  id: 'networks',
  passes: (index, i, shoot) => {
    for (let s = 0; s < shoot.networks.first.length; s++) if (overlapAt(index, i, shoot, s) >= 0) return false;
    return true;
  },
  reason: (index, i, shoot) => {
    for (let s = 0; s < shoot.networks.first.length; s++) {
      const k = overlapAt(index, i, shoot, s);
      if (k < 0) continue;
      const name = index.networkName(k);
      return `shoot ${shoot.networks.names[s]} network ${shoot.networks.cidrs[s]} overlaps the seed's ${name} network ${index.seeds[i]!.spec.networks[name]}`;
    }
    return 'networks overlap';
  },
};

export const capacity: SeedFilter = {
  id: 'capacity',
  passes: (index, i) => index.shoots[i]! < index.capacity[i]!,
  reason: (index, i) => `at capacity: hosts ${index.shoots[i]} shoots of ${index.capacity[i]} allowed`,
};

export const multiZonal: SeedFilter = {
  id: 'multiZonal',
  passes: (index, i, shoot) => shoot.failureTolerance !== 'zone' || index.multiZonal[i] === 1,
  reason: () => `not multi-zonal (${MULTI_ZONAL_LABEL} is not "true"), and the shoot's failure tolerance is zone`,
};

/** The per-seed filters, in the order of docs/design.md section 7. */
export const SEED_FILTERS: readonly SeedFilter[] = [
  excluded,
  usable,
  seedSelector,
  providerType,
  region,
  taints,
  networks,
  capacity,
  multiZonal,
];

/** Index in `SEED_FILTERS` of the first filter the seed fails, or -1 when it passes all of them. */
export function firstFailedFilter(index: SeedIndex, i: number, shoot: PreparedShoot, context: FilterContext): number {
  return SEED_FILTERS.findIndex((filter) => !filter.passes(index, i, shoot, context));
}
