import { ValidationError } from '../errors.js';

/** A seed as the round's planner sees it: its name and how many shoots are placed on it. */
export interface SeedLoad {
  readonly seed: string;
  readonly shoots: number;
}

export interface PartitionOptions {
  /** About how many shoots one invocation probes; a seed with more gets an invocation of its own. */
  readonly shootsPerPartition: number;
  /** At most this many invocations per round (the round's concurrency); partitions grow beyond the target past it. */
  readonly maxPartitions: number;
}

/** Defaults: 500 shoots a partition (a few seconds of probes at 50 at once), at most 100 partitions a round. */
export const DEFAULT_PARTITION_OPTIONS: PartitionOptions = { shootsPerPartition: 500, maxPartitions: 100 };

/**
 * The seeds of one watchdog round, split into partitions for separate invocations: whole seeds only (a
 * seed's shoots, its lease and its command queue stay with one invocation, so that a seed is read once a
 * round and its commands leave in order), balanced by shoot count (largest seed first into the lightest
 * partition), `ceil(shoots / shootsPerPartition)` partitions capped at `maxPartitions`. Seeds without
 * shoots have nothing to probe and are left out. Deterministic: the same loads give the same partitions,
 * each sorted by name.
 */
export function partitionSeeds(
  loads: readonly SeedLoad[],
  options: PartitionOptions = DEFAULT_PARTITION_OPTIONS,
): string[][] {
  if (!(options.shootsPerPartition >= 1) || !(options.maxPartitions >= 1))
    throw new ValidationError('shootsPerPartition and maxPartitions must be at least 1', { field: 'partition' });
  const busy = loads.filter((l) => l.shoots > 0);
  const total = busy.reduce((n, l) => n + l.shoots, 0);
  const count = Math.min(options.maxPartitions, busy.length, Math.ceil(total / options.shootsPerPartition));
  if (count === 0) return [];
  const partitions = Array.from({ length: count }, () => ({ shoots: 0, seeds: [] as string[] }));
  const ordered = [...busy].sort((a, b) => b.shoots - a.shoots || (a.seed < b.seed ? -1 : 1));
  for (const load of ordered) {
    let lightest = partitions[0]!;
    for (const p of partitions) if (p.shoots < lightest.shoots) lightest = p;
    lightest.shoots += load.shoots;
    lightest.seeds.push(load.seed);
  }
  return partitions.map((p) => p.seeds.sort());
}
