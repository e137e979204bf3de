import { describe, expect, it } from 'vitest';
import {
  levenshtein,
  minimalDistance,
  regionDistance,
  schedule,
  splitOrientation,
} from '../../../core/scheduling/index.js';
import { aSeed, aShootSpec } from './fixtures.js';

describe("splitOrientation (the cases of Gardener's distance_test.go)", () => {
  it.each([
    ['europe', 'europe', undefined],
    ['west_europe', ':_europe', 'west'],
    ['europe-west', 'europe-:', 'west'],
    ['middle-west-europe', 'middle-:-europe', 'west'],
    // Gardener looks for north, south, east, west, central in that order: "northeast" is north.
    ['asia-northeast1', 'asia-:east1', 'north'],
    ['asia-southeast1', 'asia-:east1', 'south'],
    ['eu-central-1', 'eu-:-1', 'central'],
  ])('%s -> base %s, orientation %s', (region, base, orientation) => {
    expect(splitOrientation(region)).toEqual({ base, orientation });
  });
});

describe('levenshtein', () => {
  it.each([
    ['', '', 0],
    ['abc', '', 3],
    ['kitten', 'sitting', 3],
    ['europe', 'asia', 6],
    ['eu-:-1', 'us-:-1', 2],
    ['flaw', 'lawn', 2],
  ])('%s <-> %s = %i', (a, b, d) => {
    expect(levenshtein(a, b)).toBe(d);
    expect(levenshtein(b, a)).toBe(d);
  });
});

describe('regionDistance: twice the base-name distance plus the orientation correction', () => {
  it.each([
    // Gardener's distance_test.go: [seed, shoot, levenshtein of the bases, distance]
    ['europe', 'asia', 6, 12],
    ['europe-west', 'asia-west', 6, 12],
    ['europe-west', 'asia-east', 6, 14],
    ['europe-west', 'asia-:', 6, 13],
    ['europe-west', 'europe-east', 0, 2],
    ['europe-west', 'europe-:', 0, 1],
    ['europe-west', 'europe-west', 0, 0],
    // Real region names.
    ['eu-west-1', 'eu-west-1', 0, 0],
    ['eu-central-1', 'eu-west-1', 0, 2],
    ['us-west-1', 'eu-west-1', 2, 4],
    ['us-east-1', 'eu-west-1', 2, 6],
    ['asia-northeast1', 'asia-southeast1', 0, 2],
    ['europe-west1', 'eu-west-1', 5, 10],
  ])('seed %s, shoot %s: base distance %i, distance %i', (seed, shoot, base, distance) => {
    expect(levenshtein(splitOrientation(seed).base, splitOrientation(shoot).base)).toBe(base);
    expect(regionDistance(seed, shoot)).toBe(distance);
  });

  it.each([
    ['same orientation', 'europe-west', 'europe-west', 0],
    ['different orientations', 'europe-west', 'europe-north', 2],
    // "europe-:" has no orientation word but the same base as "europe-west".
    ['only the seed has one', 'europe-west', 'europe-:', 1],
    ['only the shoot has one', 'europe-:', 'europe-west', 1],
    ['neither has one', 'europe-:', 'europe-:', 0],
  ])('orientation correction: %s', (_name, seed, shoot, correction) => {
    // The bases are equal in each case, so the whole distance is the correction.
    expect(regionDistance(seed, shoot)).toBe(correction);
  });
});

describe('minimalDistance: the provider correction', () => {
  it.each([
    ['same provider, same region', 'aws', 'eu-west-1', 0],
    ['other provider, same region', 'gcp', 'eu-west-1', 2],
    ['other provider, other orientation', 'gcp', 'eu-central-1', 4],
    ['same provider, other orientation', 'aws', 'eu-central-1', 2],
  ])('%s', (_name, provider, region, distance) => {
    expect(minimalDistance({ provider, region }, { provider: 'aws', region: 'eu-west-1' })).toBe(distance);
  });
});

describe('MinimalDistance strategy', () => {
  it('chooses the nearest region and explains the others', () => {
    // Prepare
    const fleet = [
      aSeed({ name: 'central', region: 'eu-central-1' }),
      aSeed({ name: 'virginia', region: 'us-east-1' }),
      aSeed({ name: 'tokyo', region: 'ap-northeast-1' }),
    ];

    // Act
    const result = schedule({
      shoot: { spec: aShootSpec({ region: 'eu-west-1' }) },
      seeds: fleet,
      strategy: 'MinimalDistance',
    });

    // Assess
    expect(result.seedName).toBe('central');
    expect(result.candidates).toMatchObject([{ name: 'central', distance: 2 }]);
    expect(result.rejected).toEqual([
      {
        seed: 'tokyo',
        filter: 'region',
        reason: expect.stringMatching(/^region-name distance \d+ from eu-west-1 is above the minimum 2/),
      },
      {
        seed: 'virginia',
        filter: 'region',
        reason: 'region-name distance 6 from eu-west-1 is above the minimum 2 (strategy MinimalDistance)',
      },
    ]);
  });

  it('keeps every seed at the minimal distance and then ranks them by load', () => {
    // Prepare
    const fleet = [
      aSeed({ name: 'central', region: 'eu-central-1', shoots: 9 }),
      aSeed({ name: 'north', region: 'eu-north-1', shoots: 2 }),
      aSeed({ name: 'us', region: 'us-east-1', shoots: 0 }),
    ];

    // Act
    const result = schedule({
      shoot: { spec: aShootSpec({ region: 'eu-west-1' }) },
      seeds: fleet,
      strategy: 'MinimalDistance',
    });

    // Assess
    expect(result.candidates.map((c) => [c.name, c.distance])).toEqual([
      ['north', 2],
      ['central', 2],
    ]);
  });

  it('always prefers the matching region with the matching provider', () => {
    // Prepare
    const fleet = [
      aSeed({ name: 'gcp-same-region', provider: 'gcp', shoots: 0 }),
      aSeed({ name: 'aws-same-region', provider: 'aws', shoots: 100 }),
    ];

    // Act
    const result = schedule({
      shoot: { spec: aShootSpec({ seedSelector: { providerTypes: ['*'] } }) },
      seeds: fleet,
      strategy: 'MinimalDistance',
    });

    // Assess
    expect(result.seedName).toBe('aws-same-region');
    expect(result.rejected[0]).toMatchObject({
      seed: 'gcp-same-region',
      reason: expect.stringContaining('distance 2'),
    });
  });

  it('measures distance only among seeds that pass the other filters', () => {
    // Prepare: the nearest seed is full, so the next nearest wins instead of nothing.
    const fleet = [
      aSeed({ name: 'near', region: 'eu-west-1', capacity: 1, shoots: 1 }),
      aSeed({ name: 'next', region: 'eu-central-1' }),
    ];

    // Act
    const result = schedule({ shoot: { spec: aShootSpec() }, seeds: fleet, strategy: 'MinimalDistance' });

    // Assess
    expect(result.seedName).toBe('next');
    expect(result.rejected).toMatchObject([{ seed: 'near', filter: 'capacity' }]);
  });

  it('uses configured distances first and treats unlisted regions as out of reach', () => {
    // Prepare
    const fleet = [
      aSeed({ name: 'central', region: 'eu-central-1' }),
      aSeed({ name: 'london', region: 'eu-west-2' }),
      aSeed({ name: 'us', region: 'us-east-1' }),
    ];
    const regionDistances = { 'eu-west-1': { 'eu-west-2': 10, 'eu-central-1': 30 } };

    // Act
    const result = schedule({
      shoot: { spec: aShootSpec() },
      seeds: fleet,
      strategy: 'MinimalDistance',
      regionDistances,
    });

    // Assess
    expect(result.seedName).toBe('london');
    expect(result.candidates[0]).toMatchObject({ name: 'london', distance: 10 });
    expect(result.rejected).toEqual([
      {
        seed: 'central',
        filter: 'region',
        reason: 'configured distance 30 from eu-west-1 is above the minimum 10 (strategy MinimalDistance)',
      },
      {
        seed: 'us',
        filter: 'region',
        reason: 'region us-east-1 has no configured distance from eu-west-1 (strategy MinimalDistance)',
      },
    ]);
  });

  it('falls back to the region-name distance when no configured region has a seed', () => {
    // Prepare
    const fleet = [aSeed({ name: 'central', region: 'eu-central-1' }), aSeed({ name: 'us', region: 'us-east-1' })];

    // Act
    const result = schedule({
      shoot: { spec: aShootSpec() },
      seeds: fleet,
      strategy: 'MinimalDistance',
      regionDistances: { 'eu-west-1': { 'ap-south-1': 1 } },
    });

    // Assess
    expect(result.seedName).toBe('central');
    expect(result.candidates[0]!.distance).toBe(2);
  });

  it('lets a testing shoot go anywhere, without distances', () => {
    // Prepare
    const fleet = [
      aSeed({ name: 'far', region: 'ap-south-1', shoots: 0 }),
      aSeed({ name: 'near', region: 'eu-west-1', shoots: 5 }),
    ];

    // Act
    const result = schedule({
      shoot: { spec: aShootSpec({ purpose: 'testing' }) },
      seeds: fleet,
      strategy: 'MinimalDistance',
    });

    // Assess
    expect(result.seedName).toBe('far');
    expect(result.candidates.map((c) => c.distance)).toEqual([undefined, undefined]);
  });
});
