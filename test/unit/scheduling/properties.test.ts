import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { overlaps, parseCidr, type Seed, type ShootSpec } from '../../../core/model/index.js';
import { minimalDistance, schedule, type RegionStrategy } from '../../../core/scheduling/index.js';
import { READY, aSeed } from './fixtures.js';

const PROVIDERS = ['aws', 'gcp'];
const REGIONS = ['eu-west-1', 'eu-central-1', 'us-east-1'];
// Small pools of networks so that overlaps happen often.
const SEED_NETWORKS = [
  { nodes: '10.0.0.0/16', pods: '10.1.0.0/16', services: '10.2.0.0/16' },
  { pods: '100.96.0.0/11', services: '100.64.0.0/13' },
  { nodes: '172.16.0.0/12', pods: '10.8.0.0/16', services: '10.9.0.0/16' },
];
const SHOOT_NETWORKS: ShootSpec['networking'][] = [
  undefined,
  { nodes: '10.250.0.0/16', pods: '100.96.0.0/11', services: '100.64.0.0/13' },
  { pods: '192.168.0.0/16' },
  { nodes: '10.1.128.0/17' },
];

const seedArb = (name: string): fc.Arbitrary<Seed> =>
  fc
    .record({
      provider: fc.constantFrom(...PROVIDERS),
      region: fc.constantFrom(...REGIONS),
      multiZonal: fc.boolean(),
      capacity: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
      shoots: fc.integer({ min: 0, max: 6 }),
      tainted: fc.boolean(),
      networks: fc.constantFrom(...SEED_NETWORKS),
      ready: fc.boolean(),
      deleting: fc.boolean(),
      visible: fc.option(fc.boolean(), { nil: undefined }),
      env: fc.constantFrom('prod', 'dev'),
    })
    .map((r) =>
      aSeed({
        name,
        provider: r.provider,
        region: r.region,
        multiZonal: r.multiZonal,
        ...(r.capacity === undefined ? {} : { capacity: r.capacity }),
        shoots: r.shoots,
        ...(r.tainted ? { taints: [{ key: 'seed.gardener.cloud/protected' }] } : {}),
        networks: r.networks,
        conditions: r.ready ? READY : [{ type: 'GardenletReady', status: 'False' }, READY[1]!],
        ...(r.deleting ? { deletionTimestamp: '2026-01-02T00:00:00Z' } : {}),
        ...(r.visible === undefined ? {} : { visible: r.visible }),
        labels: { env: r.env },
      }),
    );

const fleetArb = fc
  .integer({ min: 0, max: 14 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, k) => seedArb(`seed-${String.fromCharCode(97 + k)}`))));

const shootArb: fc.Arbitrary<ShootSpec> = fc
  .record({
    provider: fc.constantFrom(...PROVIDERS),
    region: fc.constantFrom(...REGIONS),
    testing: fc.boolean(),
    tolerance: fc.constantFrom(undefined, 'node' as const, 'zone' as const),
    providerTypes: fc.constantFrom<string[] | undefined>(undefined, ['*'], ['gcp'], ['aws', 'gcp']),
    tolerates: fc.boolean(),
    env: fc.constantFrom(undefined, 'prod'),
    networking: fc.constantFrom(...SHOOT_NETWORKS),
  })
  .map((r) => ({
    provider: { type: r.provider },
    region: r.region,
    ...(r.testing ? { purpose: 'testing' as const } : {}),
    ...(r.tolerance ? { controlPlane: { highAvailability: { failureTolerance: { type: r.tolerance } } } } : {}),
    ...(r.providerTypes || r.env
      ? {
          seedSelector: {
            ...(r.providerTypes ? { providerTypes: r.providerTypes } : {}),
            ...(r.env ? { matchLabels: { env: r.env } } : {}),
          },
        }
      : {}),
    ...(r.tolerates ? { tolerations: [{ key: 'seed.gardener.cloud/protected' }] } : {}),
    ...(r.networking ? { networking: r.networking } : {}),
  }));

const strategyArb = fc.constantFrom<RegionStrategy>('SameRegion', 'MinimalDistance');

/** An independent reading of docs/design.md section 7, on the raw objects, for every per-seed filter. */
function passesPerSeedFilters(seed: Seed, shoot: ShootSpec, strategy: RegionStrategy): boolean {
  const ready = ['GardenletReady', 'BackupBucketsReady'].every((t) =>
    seed.status.conditions.some((c) => c.type === t && c.status === 'True'),
  );
  if (seed.metadata.deletionTimestamp || seed.spec.settings?.scheduling?.visible === false || !ready) return false;
  const labels = { ...seed.metadata.labels, ...seed.status.labels };
  if (Object.entries(shoot.seedSelector?.matchLabels ?? {}).some(([k, v]) => labels[k] !== v)) return false;
  const types = shoot.seedSelector?.providerTypes;
  if (
    types
      ? !types.includes('*') && !types.includes(seed.spec.provider.type)
      : seed.spec.provider.type !== shoot.provider.type
  )
    return false;
  if (strategy === 'SameRegion' && shoot.purpose !== 'testing' && seed.spec.provider.region !== shoot.region)
    return false;
  if (
    (seed.spec.taints ?? []).some(
      (t) => !(shoot.tolerations ?? []).some((o) => o.key === t.key && (t.value === undefined || t.value === o.value)),
    )
  )
    return false;
  const shootNets = Object.values(shoot.networking ?? {}).flatMap((c) => (c ? [parseCidr(c)!] : []));
  const seedNets = Object.values(seed.spec.networks).flatMap((c) => (c ? [parseCidr(c)!] : []));
  if (shootNets.some((a) => seedNets.some((b) => overlaps(a, b)))) return false;
  const limit = Math.min(seed.spec.capacity?.shoots ?? Infinity, seed.status.allocatable?.shoots ?? Infinity);
  if (!(seed.status.shoots < limit)) return false;
  if (
    shoot.controlPlane?.highAvailability?.failureTolerance.type === 'zone' &&
    seed.status.labels['seed.gardener.cloud/multi-zonal'] !== 'true'
  )
    return false;
  return true;
}

/** The seeds an independent reading of the rules would accept, including MinimalDistance. */
function eligible(seeds: Seed[], shoot: ShootSpec, strategy: RegionStrategy): Seed[] {
  const passing = seeds.filter((s) => passesPerSeedFilters(s, shoot, strategy));
  if (strategy === 'SameRegion' || shoot.purpose === 'testing' || passing.length === 0) return passing;
  const distance = (s: Seed) =>
    minimalDistance(
      { provider: s.spec.provider.type, region: s.spec.provider.region },
      { provider: shoot.provider.type, region: shoot.region },
    );
  const min = Math.min(...passing.map(distance));
  return passing.filter((s) => distance(s) === min);
}

const isMultiZonal = (s: Seed) => s.status.labels['seed.gardener.cloud/multi-zonal'] === 'true';

describe('scheduler properties', () => {
  it('chooses a winner exactly when some seed is eligible, and the winner passes every filter', () => {
    fc.assert(
      fc.property(fleetArb, shootArb, strategyArb, (seeds, shoot, strategy) => {
        // Act
        const result = schedule({ shoot: { spec: shoot }, seeds, strategy });

        // Assess
        const expected = eligible(seeds, shoot, strategy);
        expect(result.candidates.map((c) => c.name).sort()).toEqual(expected.map((s) => s.metadata.name).sort());
        if (expected.length === 0) expect(result.seedName).toBeUndefined();
        else expect(expected.map((s) => s.metadata.name)).toContain(result.seedName);
      }),
      { numRuns: 500 },
    );
  });

  it('never places a zone shoot on a seed that is not multi-zonal', () => {
    const zoneShoot = shootArb.map((s) => ({
      ...s,
      controlPlane: { highAvailability: { failureTolerance: { type: 'zone' as const } } },
    }));
    fc.assert(
      fc.property(fleetArb, zoneShoot, strategyArb, (seeds, shoot, strategy) => {
        // Act
        const result = schedule({ shoot: { spec: shoot }, seeds, strategy });

        // Assess
        for (const c of result.candidates) expect(c.multiZonal).toBe(true);
        if (result.seedName !== undefined)
          expect(isMultiZonal(seeds.find((s) => s.metadata.name === result.seedName)!)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('chooses a single-zonal seed for none or node tolerance whenever one is a candidate', () => {
    const lowShoot = shootArb.filter((s) => s.controlPlane?.highAvailability?.failureTolerance.type !== 'zone');
    fc.assert(
      fc.property(fleetArb, lowShoot, strategyArb, (seeds, shoot, strategy) => {
        // Act
        const result = schedule({ shoot: { spec: shoot }, seeds, strategy });

        // Assess
        if (result.candidates.some((c) => !c.multiZonal)) {
          expect(result.candidates[0]!.multiZonal).toBe(false);
          expect(isMultiZonal(seeds.find((s) => s.metadata.name === result.seedName)!)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('accounts for every seed exactly once and decides the same in any order', () => {
    fc.assert(
      fc.property(
        fleetArb.chain((seeds) =>
          fc.tuple(fc.constant(seeds), fc.shuffledSubarray(seeds, { minLength: seeds.length })),
        ),
        shootArb,
        strategyArb,
        ([seeds, shuffled], shoot, strategy) => {
          // Act
          const result = schedule({ shoot: { spec: shoot }, seeds, strategy });
          const again = schedule({ shoot: { spec: shoot }, seeds: shuffled, strategy });

          // Assess
          const names = [...result.candidates.map((c) => c.name), ...result.rejected.map((r) => r.seed)].sort();
          expect(names).toEqual(seeds.map((s) => s.metadata.name).sort());
          expect(again.seedName).toBe(result.seedName);
          expect(JSON.stringify(again)).toBe(JSON.stringify(result));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('ranks candidates so that no later candidate would be preferred', () => {
    fc.assert(
      fc.property(fleetArb, shootArb, strategyArb, (seeds, shoot, strategy) => {
        // Act
        const { candidates } = schedule({ shoot: { spec: shoot }, seeds, strategy });

        // Assess
        const zone = shoot.controlPlane?.highAvailability?.failureTolerance.type === 'zone';
        const key = (c: (typeof candidates)[number]) => [!zone && c.multiZonal ? 1 : 0, c.utilisation, c.shoots];
        for (let k = 1; k < candidates.length; k++) {
          const [a, b] = [key(candidates[k - 1]!), key(candidates[k]!)];
          const order =
            a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]! || (candidates[k - 1]!.name < candidates[k]!.name ? -1 : 1);
          expect(order).toBeLessThan(0);
          expect(candidates[k - 1]!.score).toBeGreaterThanOrEqual(candidates[k]!.score);
        }
      }),
      { numRuns: 300 },
    );
  });
});
