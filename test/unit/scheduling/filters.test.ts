import { describe, expect, it } from 'vitest';
import type { ShootSpec } from '../../../core/model/index.js';
import {
  FILTER_IDS,
  SEED_FILTERS,
  schedule,
  type FilterId,
  type ScheduleOptions,
} from '../../../core/scheduling/index.js';
import { aSeed, aShootSpec, ha, type SeedFixture } from './fixtures.js';

interface FilterCase {
  name: string;
  seed: SeedFixture;
  shoot?: Partial<ShootSpec>;
  options?: Partial<ScheduleOptions>;
  /** undefined: the seed is eligible. */
  filter: FilterId | undefined;
  reason?: RegExp;
}

const cases: FilterCase[] = [
  // excluded
  {
    name: 'an excluded seed (migration source) is rejected',
    seed: {},
    options: { excludeSeeds: ['seed-a'] },
    filter: 'excluded',
    reason: /excluded by the caller/,
  },
  {
    name: 'excluding another seed leaves this one',
    seed: {},
    options: { excludeSeeds: ['seed-b'] },
    filter: undefined,
  },
  // usable
  {
    name: 'a seed being deleted is not usable',
    seed: { deletionTimestamp: '2026-01-02T00:00:00Z' },
    filter: 'usable',
    reason: /being deleted/,
  },
  { name: 'an invisible seed is not usable', seed: { visible: false }, filter: 'usable', reason: /visible is false/ },
  { name: 'an explicitly visible seed is usable', seed: { visible: true }, filter: undefined },
  {
    name: 'GardenletReady False makes a seed unusable',
    seed: {
      conditions: [
        { type: 'GardenletReady', status: 'False', reason: 'Stale' },
        { type: 'BackupBucketsReady', status: 'True' },
      ],
    },
    filter: 'usable',
    reason: /GardenletReady is False \(Stale\)/,
  },
  {
    name: 'BackupBucketsReady Unknown makes a seed unusable',
    seed: {
      conditions: [
        { type: 'GardenletReady', status: 'True' },
        { type: 'BackupBucketsReady', status: 'Unknown' },
      ],
    },
    filter: 'usable',
    reason: /BackupBucketsReady is Unknown/,
  },
  {
    name: 'a missing BackupBucketsReady makes a seed unusable',
    seed: { conditions: [{ type: 'GardenletReady', status: 'True' }] },
    filter: 'usable',
    reason: /BackupBucketsReady is not reported/,
  },
  {
    name: 'a stale heartbeat makes a seed unusable when heartbeats are checked',
    seed: { lastHeartbeatTime: '2026-01-01T00:00:00Z' },
    options: { now: Date.parse('2026-01-01T00:01:00Z'), maxHeartbeatAgeMs: 30_000 },
    filter: 'usable',
    reason: /last heartbeat 60 s ago/,
  },
  {
    name: 'a fresh heartbeat keeps a seed usable',
    seed: { lastHeartbeatTime: '2026-01-01T00:00:50Z' },
    options: { now: Date.parse('2026-01-01T00:01:00Z'), maxHeartbeatAgeMs: 30_000 },
    filter: undefined,
  },
  {
    name: 'no heartbeat at all fails a heartbeat check',
    seed: {},
    options: { now: 0, maxHeartbeatAgeMs: 30_000 },
    filter: 'usable',
    reason: /no heartbeat/,
  },
  // seed selector: labels
  {
    name: 'matching selector labels pass',
    seed: { labels: { env: 'prod' } },
    shoot: { seedSelector: { matchLabels: { env: 'prod' } } },
    filter: undefined,
  },
  {
    name: 'a different label value fails the selector',
    seed: { labels: { env: 'dev' } },
    shoot: { seedSelector: { matchLabels: { env: 'prod' } } },
    filter: 'seedSelector',
    reason: /requires env=prod, the seed has env=dev/,
  },
  {
    name: 'a missing label fails the selector',
    seed: {},
    shoot: { seedSelector: { matchLabels: { env: 'prod' } } },
    filter: 'seedSelector',
    reason: /no such label/,
  },
  {
    name: 'derived status labels count for the selector',
    seed: { multiZonal: true },
    shoot: { seedSelector: { matchLabels: { 'seed.gardener.cloud/multi-zonal': 'true' } } },
    filter: undefined,
  },
  // seed selector: provider types
  {
    name: 'by default another provider is rejected',
    seed: { provider: 'gcp' },
    filter: 'providerType',
    reason: /provider gcp differs from the shoot's aws/,
  },
  {
    name: 'providerTypes lists another provider',
    seed: { provider: 'gcp' },
    shoot: { seedSelector: { providerTypes: ['aws', 'gcp'] } },
    filter: undefined,
  },
  {
    name: 'providerTypes "*" accepts any provider',
    seed: { provider: 'azure' },
    shoot: { seedSelector: { providerTypes: ['*'] } },
    filter: undefined,
  },
  {
    name: 'providerTypes without the seed provider rejects it, even the shoot provider',
    seed: { provider: 'aws' },
    shoot: { seedSelector: { providerTypes: ['gcp'] } },
    filter: 'providerType',
    reason: /not in the shoot's seedSelector.providerTypes \[gcp\]/,
  },
  // region strategy
  { name: 'SameRegion: same region passes', seed: { region: 'eu-west-1' }, filter: undefined },
  {
    name: 'SameRegion: another region is rejected',
    seed: { region: 'us-east-1' },
    filter: 'region',
    reason: /region us-east-1 differs from the shoot's region eu-west-1/,
  },
  {
    name: 'testing purpose ignores the region',
    seed: { region: 'us-east-1' },
    shoot: { purpose: 'testing' },
    filter: undefined,
  },
  {
    name: 'MinimalDistance with a single seed takes it wherever it is',
    seed: { region: 'ap-south-1' },
    options: { strategy: 'MinimalDistance' },
    filter: undefined,
  },
  // taints
  {
    name: 'an untolerated taint is rejected',
    seed: { taints: [{ key: 'seed.gardener.cloud/protected' }] },
    filter: 'taints',
    reason: /taint seed.gardener.cloud\/protected is not tolerated/,
  },
  {
    name: 'a tolerated taint passes',
    seed: { taints: [{ key: 'seed.gardener.cloud/protected' }] },
    shoot: { tolerations: [{ key: 'seed.gardener.cloud/protected' }] },
    filter: undefined,
  },
  {
    name: 'a taint with a value needs the same value',
    seed: { taints: [{ key: 'team', value: 'a' }] },
    shoot: { tolerations: [{ key: 'team', value: 'b' }] },
    filter: 'taints',
    reason: /taint team=a/,
  },
  {
    name: 'a taint with a value is tolerated with that value',
    seed: { taints: [{ key: 'team', value: 'a' }] },
    shoot: { tolerations: [{ key: 'team', value: 'a' }] },
    filter: undefined,
  },
  {
    name: 'a taint without a value is tolerated by any value of its key',
    seed: { taints: [{ key: 'team' }] },
    shoot: { tolerations: [{ key: 'team', value: 'x' }] },
    filter: undefined,
  },
  {
    name: 'every taint must be tolerated',
    seed: { taints: [{ key: 'a' }, { key: 'b' }] },
    shoot: { tolerations: [{ key: 'a' }] },
    filter: 'taints',
    reason: /taint b /,
  },
  // networks
  {
    name: 'a shoot pod network inside the seed node network is rejected',
    seed: {},
    shoot: { networking: { pods: '10.0.128.0/17' } },
    filter: 'networks',
    reason: /shoot pods network 10.0.128.0\/17 overlaps the seed's nodes network 10.0.0.0\/16/,
  },
  {
    name: 'a shoot services network that contains the seed pod network is rejected',
    seed: {},
    shoot: { networking: { services: '10.0.0.0/8' } },
    filter: 'networks',
    reason: /shoot services network 10.0.0.0\/8 overlaps the seed's nodes network/,
  },
  {
    name: 'a shoot node network overlapping the seed services is rejected',
    seed: {},
    shoot: { networking: { nodes: '10.2.3.0/24' } },
    filter: 'networks',
    reason: /seed's services network 10.2.0.0\/16/,
  },
  {
    name: 'adjacent networks do not overlap',
    seed: {},
    shoot: { networking: { nodes: '10.3.0.0/16', pods: '9.255.0.0/16' } },
    filter: undefined,
  },
  { name: 'a shoot without networks passes', seed: {}, shoot: { networking: undefined }, filter: undefined },
  {
    name: 'a seed without a node network checks pods and services',
    seed: { networks: { pods: '10.1.0.0/16', services: '10.2.0.0/16' } },
    shoot: { networking: { nodes: '10.0.0.0/16' } },
    filter: undefined,
  },
  // capacity
  { name: 'a seed below capacity passes', seed: { capacity: 10, shoots: 9 }, filter: undefined },
  {
    name: 'a seed at capacity is rejected',
    seed: { capacity: 10, shoots: 10 },
    filter: 'capacity',
    reason: /hosts 10 shoots of 10 allowed/,
  },
  { name: 'a seed over capacity is rejected', seed: { capacity: 10, shoots: 12 }, filter: 'capacity' },
  { name: 'capacity 0 takes nothing', seed: { capacity: 0 }, filter: 'capacity' },
  { name: 'no capacity means unlimited', seed: { shoots: 100_000 }, filter: undefined },
  {
    name: 'allocatable lower than capacity is the limit',
    seed: { capacity: 10, allocatable: 5, shoots: 5 },
    filter: 'capacity',
    reason: /of 5 allowed/,
  },
  { name: 'allocatable alone is a limit', seed: { allocatable: 3, shoots: 3 }, filter: 'capacity' },
  // multi-zonal
  {
    name: 'zone tolerance rejects a single-zonal seed',
    seed: {},
    shoot: ha('zone'),
    filter: 'multiZonal',
    reason: /not multi-zonal/,
  },
  {
    name: 'zone tolerance accepts a multi-zonal seed',
    seed: { multiZonal: true },
    shoot: ha('zone'),
    filter: undefined,
  },
  {
    name: 'a manual "false" keeps zone shoots away',
    seed: { multiZonal: true, statusLabels: { 'seed.gardener.cloud/multi-zonal': 'false' } },
    shoot: ha('zone'),
    filter: 'multiZonal',
  },
  { name: 'node tolerance accepts a single-zonal seed', seed: {}, shoot: ha('node'), filter: undefined },
  {
    name: 'node tolerance accepts a multi-zonal seed',
    seed: { multiZonal: true },
    shoot: ha('node'),
    filter: undefined,
  },
  // order: the first failing filter names the rejection
  {
    name: 'a deleting seed of another provider is rejected as unusable first',
    seed: { deletionTimestamp: '2026-01-02T00:00:00Z', provider: 'gcp' },
    filter: 'usable',
  },
  {
    name: 'a full seed in another region is rejected for the region first',
    seed: { region: 'us-east-1', capacity: 1, shoots: 1 },
    filter: 'region',
  },
];

describe('scheduler filters', () => {
  it.each(cases)('$name', ({ seed, shoot, options, filter, reason }) => {
    // Prepare
    const seeds = [aSeed(seed)];

    // Act
    const result = schedule({ shoot: { spec: aShootSpec(shoot) }, seeds, ...options });

    // Assess
    if (filter === undefined) {
      expect(result.rejected).toEqual([]);
      expect(result.seedName).toBe('seed-a');
    } else {
      expect(result.seedName).toBeUndefined();
      expect(result.rejected).toHaveLength(1);
      expect(result.rejected[0]).toMatchObject({ seed: 'seed-a', filter });
      if (reason) expect(result.rejected[0]!.reason).toMatch(reason);
    }
  });

  it('covers every filter id with a rejecting case', () => {
    const covered = new Set(cases.map((c) => c.filter).filter((f) => f !== undefined));
    expect([...covered].sort()).toEqual([...FILTER_IDS].sort());
  });

  it('runs the filters in the documented order', () => {
    expect(SEED_FILTERS.map((f) => f.id)).toEqual([...FILTER_IDS]);
  });
});
