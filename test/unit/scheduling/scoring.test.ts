import { describe, expect, it } from 'vitest';
import type { ShootSpec } from '../../../core/model/index.js';
import { indexSeeds, schedule } from '../../../core/scheduling/index.js';
import { aSeed, aShootSpec, ha, type SeedFixture } from './fixtures.js';

interface ScoringCase {
  name: string;
  seeds: SeedFixture[];
  shoot?: Partial<ShootSpec>;
  ranking: string[];
}

const cases: ScoringCase[] = [
  {
    name: 'no tolerance: a single-zonal seed wins over an empty multi-zonal one',
    seeds: [
      { name: 'multi', multiZonal: true, capacity: 100, shoots: 0 },
      { name: 'single', capacity: 100, shoots: 90 },
    ],
    ranking: ['single', 'multi'],
  },
  {
    name: 'node tolerance: a single-zonal seed wins regardless of load',
    seeds: [
      { name: 'multi', multiZonal: true, capacity: 100, shoots: 1 },
      { name: 'single', capacity: 100, shoots: 99 },
    ],
    shoot: ha('node'),
    ranking: ['single', 'multi'],
  },
  {
    name: 'node tolerance: only multi-zonal seeds left, the least utilised wins',
    seeds: [
      { name: 'm1', multiZonal: true, capacity: 100, shoots: 50 },
      { name: 'm2', multiZonal: true, capacity: 100, shoots: 10 },
    ],
    shoot: ha('node'),
    ranking: ['m2', 'm1'],
  },
  {
    name: 'zone tolerance: the least utilised multi-zonal seed wins',
    seeds: [
      { name: 'm1', multiZonal: true, capacity: 10, shoots: 5 },
      { name: 'm2', multiZonal: true, capacity: 100, shoots: 20 },
      { name: 'single', capacity: 100, shoots: 0 },
    ],
    shoot: ha('zone'),
    ranking: ['m2', 'm1'],
  },
  {
    name: 'utilisation is relative to capacity, not the count of shoots',
    seeds: [
      { name: 'big', capacity: 250, shoots: 100 },
      { name: 'small', capacity: 10, shoots: 5 },
    ],
    ranking: ['big', 'small'],
  },
  {
    name: 'equal utilisation: fewer hosted shoots wins',
    seeds: [
      { name: 'a', capacity: 20, shoots: 10 },
      { name: 'b', capacity: 10, shoots: 5 },
    ],
    ranking: ['b', 'a'],
  },
  {
    name: 'seeds without a limit order by hosted shoots',
    seeds: [
      { name: 'a', shoots: 7 },
      { name: 'b', shoots: 3 },
    ],
    ranking: ['b', 'a'],
  },
  {
    name: 'a full tie is broken by name',
    seeds: [
      { name: 'c', capacity: 10, shoots: 1 },
      { name: 'a', capacity: 10, shoots: 1 },
      { name: 'b', capacity: 10, shoots: 1 },
    ],
    ranking: ['a', 'b', 'c'],
  },
];

describe('scheduler scoring', () => {
  it.each(cases)('$name', ({ seeds, shoot, ranking }) => {
    // Prepare
    const fleet = seeds.map(aSeed);

    // Act
    const result = schedule({ shoot: { spec: aShootSpec(shoot) }, seeds: fleet });

    // Assess
    expect(result.seedName).toBe(ranking[0]);
    expect(result.candidates.map((c) => c.name)).toEqual(ranking);
    expect(result.candidates.map((c) => c.rank)).toEqual(ranking.map((_, k) => k + 1));
  });

  it('spreads shoots created at once over seeds that tie, each shoot always choosing the same one', () => {
    // Prepare: twenty seeds that tie on everything; forty shoots scheduled against the same counts.
    const fleet = Array.from({ length: 20 }, (_, i) =>
      aSeed({ name: `seed-${String(i).padStart(2, '0')}`, capacity: 100, shoots: 10 }),
    );
    const decide = (name: string) =>
      schedule({ shoot: { spec: aShootSpec(), metadata: { project: 'dev', name } }, seeds: fleet }).seedName;

    // Act
    const chosen = Array.from({ length: 40 }, (_, k) => decide(`shoot-${k}`));

    // Assess: not one hot seed but many; the same shoot gets the same seed again; the tie only orders ties.
    expect(new Set(chosen).size).toBeGreaterThanOrEqual(12);
    expect(decide('shoot-7')).toBe(chosen[7]);
    const lighter = [...fleet, aSeed({ name: 'zz-light', capacity: 100, shoots: 9 })];
    expect(
      schedule({ shoot: { spec: aShootSpec(), metadata: { project: 'dev', name: 'shoot-7' } }, seeds: lighter })
        .seedName,
    ).toBe('zz-light');
  });

  it('gives scores that never contradict the ranking', () => {
    // Prepare
    const fleet = [
      aSeed({ name: 'multi', multiZonal: true, capacity: 10, shoots: 0 }),
      aSeed({ name: 'half', capacity: 10, shoots: 5 }),
      aSeed({ name: 'empty', capacity: 10, shoots: 0 }),
      aSeed({ name: 'unlimited', shoots: 40 }),
    ];

    // Act
    const { candidates } = schedule({ shoot: { spec: aShootSpec() }, seeds: fleet });

    // Assess
    expect(candidates.map((c) => [c.name, c.score])).toEqual([
      ['empty', 100],
      ['unlimited', 100],
      ['half', 75],
      ['multi', 50],
    ]);
    expect(candidates.find((c) => c.name === 'unlimited')).toMatchObject({ capacity: null, utilisation: 0 });
  });
});

describe('schedule', () => {
  it('gives the same answer in any input order', () => {
    // Prepare
    const fleet = ['d', 'b', 'a', 'c', 'e'].map((name, k) =>
      aSeed({ name, capacity: 10, shoots: k % 2, region: k === 4 ? 'us-east-1' : 'eu-west-1' }),
    );
    const reversed = [...fleet].reverse();

    // Act
    const one = schedule({ shoot: { spec: aShootSpec() }, seeds: fleet });
    const other = schedule({ shoot: { spec: aShootSpec() }, seeds: reversed });

    // Assess
    expect(JSON.parse(JSON.stringify(other))).toEqual(JSON.parse(JSON.stringify(one)));
    expect(one.rejected.map((r) => r.seed)).toEqual(['e']);
  });

  it('serialises its explanation to JSON', () => {
    // Prepare
    const fleet = [aSeed({ name: 'ok' }), aSeed({ name: 'full', capacity: 1, shoots: 1 })];

    // Act
    const json = JSON.parse(JSON.stringify(schedule({ shoot: { spec: aShootSpec() }, seeds: fleet })));

    // Assess
    expect(json).toMatchObject({
      seedName: 'ok',
      strategy: 'SameRegion',
      eligible: 1,
      total: 2,
      candidates: [{ name: 'ok', rank: 1 }],
      rejected: [{ seed: 'full', filter: 'capacity', reason: 'at capacity: hosts 1 shoots of 1 allowed' }],
      summary: 'scheduled onto ok: 1 of 2 seeds eligible (strategy SameRegion)',
    });
  });

  it('summarises an unschedulable shoot with counts per filter and keeps every reason', () => {
    // Prepare
    const fleet = [
      aSeed({ name: 'gone', deletionTimestamp: '2026-01-02T00:00:00Z' }),
      aSeed({ name: 'far', region: 'us-east-1' }),
      aSeed({ name: 'far2', region: 'us-west-2' }),
      aSeed({ name: 'single' }),
    ];

    // Act
    const result = schedule({ shoot: { spec: aShootSpec(ha('zone')) }, seeds: fleet });

    // Assess
    expect(result.seedName).toBeUndefined();
    expect(result.summary).toBe(
      '0/4 seeds are eligible for scheduling (strategy SameRegion): 1 not usable (deleting, hidden or not ready), 2 region does not fit, 1 not multi-zonal',
    );
    expect(result.rejected.map((r) => [r.seed, r.filter])).toEqual([
      ['far', 'region'],
      ['far2', 'region'],
      ['gone', 'usable'],
      ['single', 'multiZonal'],
    ]);
  });

  it('excludes the migration source and chooses the next best seed', () => {
    // Prepare
    const fleet = [aSeed({ name: 'source', shoots: 0 }), aSeed({ name: 'other', shoots: 5 })];

    // Act
    const result = schedule({ shoot: { spec: aShootSpec() }, seeds: fleet, excludeSeeds: ['source'] });

    // Assess
    expect(result.seedName).toBe('other');
    expect(result.rejected).toEqual([
      { seed: 'source', filter: 'excluded', reason: 'excluded by the caller (for a migration: the source seed)' },
    ]);
  });

  it('decides the same from a kept index as from raw seeds', () => {
    // Prepare
    const fleet = [
      aSeed({ name: 'a', shoots: 3 }),
      aSeed({ name: 'b', shoots: 1 }),
      aSeed({ name: 'c', provider: 'gcp' }),
    ];
    const index = indexSeeds(fleet);

    // Act
    const fromIndex = schedule({ shoot: { spec: aShootSpec() }, seeds: index });
    const fromSeeds = schedule({ shoot: { spec: aShootSpec() }, seeds: fleet });

    // Assess
    expect(fromIndex.seedName).toBe('b');
    expect(JSON.stringify(fromIndex)).toBe(JSON.stringify(fromSeeds));
  });

  it('schedules nothing on an empty fleet and says so', () => {
    // Act
    const result = schedule({ shoot: { spec: aShootSpec() }, seeds: [] });

    // Assess
    expect(result).toMatchObject({ candidates: [], rejected: [], eligible: 0, total: 0 });
    expect(result.seedName).toBeUndefined();
    expect(result.summary).toBe('0/0 seeds are eligible for scheduling (strategy SameRegion)');
  });
});
