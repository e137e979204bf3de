import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { partitionSeeds, type SeedLoad } from '../../../core/dwd/partition.js';
import { ValidationError } from '../../../core/errors.js';

const loads = (...counts: number[]): SeedLoad[] => counts.map((shoots, i) => ({ seed: `s${i}`, shoots }));

describe('partitionSeeds', () => {
  it.each<[string, SeedLoad[], { shootsPerPartition: number; maxPartitions: number }, string[][]]>([
    [
      'a small fleet is one partition',
      loads(10, 20, 5),
      { shootsPerPartition: 500, maxPartitions: 100 },
      [['s0', 's1', 's2']],
    ],
    [
      'partitions balance by shoots, largest seed first into the lightest',
      loads(300, 300, 200, 200),
      { shootsPerPartition: 500, maxPartitions: 100 },
      [
        ['s0', 's2'],
        ['s1', 's3'],
      ],
    ],
    [
      'a seed above the target gets a partition of its own',
      loads(900, 50),
      { shootsPerPartition: 500, maxPartitions: 100 },
      [['s0'], ['s1']],
    ],
    ['seeds without shoots are left out', loads(0, 3, 0), { shootsPerPartition: 500, maxPartitions: 100 }, [['s1']]],
    ['no shoot anywhere: no partition', loads(0, 0), { shootsPerPartition: 500, maxPartitions: 100 }, []],
    [
      'the cap bounds the partitions; they grow instead',
      loads(100, 100, 100, 100),
      { shootsPerPartition: 100, maxPartitions: 2 },
      [
        ['s0', 's2'],
        ['s1', 's3'],
      ],
    ],
  ])('%s', (_name, input, options, expected) => {
    expect(partitionSeeds(input, options)).toEqual(expected);
  });

  it('refuses a target below one shoot', () => {
    expect(() => partitionSeeds(loads(1), { shootsPerPartition: 0, maxPartitions: 1 })).toThrow(ValidationError);
  });

  it('puts every seed with shoots in exactly one partition, within the cap, no partition empty', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 400 }), { maxLength: 300 }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 1, max: 50 }),
        (counts, shootsPerPartition, maxPartitions) => {
          const input = loads(...counts);
          const partitions = partitionSeeds(input, { shootsPerPartition, maxPartitions });
          const placed = partitions.flat();
          expect(placed.sort()).toEqual(
            input
              .filter((l) => l.shoots > 0)
              .map((l) => l.seed)
              .sort(),
          );
          expect(partitions.length).toBeLessThanOrEqual(maxPartitions);
          for (const p of partitions) expect(p.length).toBeGreaterThan(0);
          // Balanced: no partition carries more than the fair share plus the largest seed.
          const shootsOf = (p: string[]) => p.reduce((n, s) => n + input.find((l) => l.seed === s)!.shoots, 0);
          const total = counts.reduce((a, b) => a + b, 0);
          const largest = Math.max(0, ...counts);
          for (const p of partitions)
            expect(shootsOf(p)).toBeLessThanOrEqual(Math.ceil(total / Math.max(1, partitions.length)) + largest);
        },
      ),
      { numRuns: 300 },
    );
  });
});
