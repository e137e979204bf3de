import { describe, expect, it } from 'vitest';
import type { SeedSpec } from '../../../core/model/index.js';
import { MULTI_ZONAL_LABEL, deriveSeedLabels, multiZonalZones } from '../../../core/scheduling/index.js';

type Pool = NonNullable<SeedSpec['workerPools']>[number];

function spec(pools: Pool[] | undefined, zones = ['z1', 'z2', 'z3', 'z4', 'z5']): SeedSpec {
  return {
    provider: { type: 'aws', region: 'eu-west-1', zones },
    networks: { pods: '10.1.0.0/16', services: '10.2.0.0/16' },
    ...(pools ? { workerPools: pools } : {}),
  };
}

function pool(zones: string[], minimum = 3, taints: Pool['taints'] = []): Pool {
  return { name: 'cp', zones, minimum, taints };
}

describe('deriveSeedLabels: multi-zonal derived from worker pools', () => {
  it.each([
    ['3 nodes across 3 zones', [pool(['z1', 'z2', 'z3'])], true],
    ['6 nodes across 5 zones', [pool(['z1', 'z2', 'z3', 'z4', 'z5'], 6)], true],
    ['taints absent (not just empty)', [{ name: 'cp', zones: ['z1', 'z2', 'z3'], minimum: 3 }], true],
    ['only 2 nodes', [pool(['z1', 'z2', 'z3'], 2)], false],
    ['only 2 zones', [pool(['z1', 'z2'], 4)], false],
    ['an even number (4) of zones', [pool(['z1', 'z2', 'z3', 'z4'], 4)], false],
    ['a single zone', [pool(['z1'], 9)], false],
    ['a tainted pool', [pool(['z1', 'z2', 'z3'], 3, [{ key: 'dedicated' }])], false],
    ['one qualifying pool among others', [pool(['z1'], 9), pool(['z1', 'z2', 'z3'])], true],
    ['no pools', undefined, false],
  ])('%s -> %s', (_name, pools, multiZonal) => {
    // Act
    const derived = deriveSeedLabels(spec(pools), { env: 'prod' });

    // Assess
    expect(derived).toEqual({
      ok: true,
      labels: multiZonal ? { env: 'prod', [MULTI_ZONAL_LABEL]: 'true' } : { env: 'prod' },
    });
  });

  it('counts only zones the seed declares', () => {
    // Prepare: the pool names three zones but the seed declares only two of them.
    const s = spec([pool(['z1', 'z2', 'z9'])], ['z1', 'z2']);

    // Act
    const derived = deriveSeedLabels(s);

    // Assess
    expect(derived).toEqual({ ok: true, labels: {} });
  });

  it("lists the zones of the qualifying pools in the seed's order", () => {
    expect(multiZonalZones(spec([pool(['z5', 'z1', 'z3']), pool(['z2'], 9)]))).toEqual(['z1', 'z3', 'z5']);
    expect(multiZonalZones(spec([pool(['z1', 'z2'])]))).toEqual([]);
  });
});

describe('deriveSeedLabels: a manual multi-zonal label', () => {
  it('accepts a manual "true" the pools back', () => {
    expect(deriveSeedLabels(spec([pool(['z1', 'z2', 'z3'])]), { [MULTI_ZONAL_LABEL]: 'true' })).toEqual({
      ok: true,
      labels: { [MULTI_ZONAL_LABEL]: 'true' },
    });
  });

  it.each([
    ['too few nodes', [pool(['z1', 'z2', 'z3'], 1)], /pool cp has minimum 1 nodes, needs at least 3/],
    [
      'an even zone count',
      [pool(['z1', 'z2'])],
      /pool cp spans 2 of the seed's zones, needs an odd number of at least 3/,
    ],
    ['a tainted pool', [pool(['z1', 'z2', 'z3'], 3, [{ key: 'x' }])], /pool cp is tainted/],
    ['no pools', undefined, /the seed declares no worker pools/],
  ])('rejects a manual "true" with %s, saying what to do', (_name, pools, why) => {
    // Act
    const derived = deriveSeedLabels(spec(pools), { [MULTI_ZONAL_LABEL]: 'true' });

    // Assess
    expect(derived.ok).toBe(false);
    if (derived.ok) return;
    expect(derived.field).toBe(`metadata.labels["${MULTI_ZONAL_LABEL}"]`);
    expect(derived.message).toMatch(why);
    expect(derived.message).toMatch(
      /Add an untainted pool with minimum >= 3 nodes across an odd number \(>= 3\) of the seed's zones, or remove the label/,
    );
  });

  it('honours a manual "false" on a capable seed', () => {
    expect(deriveSeedLabels(spec([pool(['z1', 'z2', 'z3'])]), { [MULTI_ZONAL_LABEL]: 'false' })).toEqual({
      ok: true,
      labels: { [MULTI_ZONAL_LABEL]: 'false' },
    });
  });

  it('rejects a value other than "true" or "false"', () => {
    expect(deriveSeedLabels(spec([pool(['z1', 'z2', 'z3'])]), { [MULTI_ZONAL_LABEL]: 'yes' })).toMatchObject({
      ok: false,
      message: expect.stringContaining('must be "true" or "false"'),
    });
  });

  it('does not change the labels it was given', () => {
    // Prepare
    const manual = { env: 'prod' };

    // Act
    deriveSeedLabels(spec([pool(['z1', 'z2', 'z3'])]), manual);

    // Assess
    expect(manual).toEqual({ env: 'prod' });
  });
});
