import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Seed } from '../../../core/model/seed.js';
import type { Shoot } from '../../../core/model/shoot.js';
import {
  age,
  migrationPreviewText,
  scheduleTable,
  seedReadiness,
  seedTable,
  shootTable,
  type DryRunResult,
  type MigrationPreview,
} from '../../../cli/render.js';

/**
 * The tables against golden files (test/unit/cli/golden). A change of layout shows up as a diff of the
 * file; `UPDATE_GOLDEN=1` rewrites them (review the diff before committing).
 */
function golden(name: string, text: string): void {
  const file = join(import.meta.dirname, 'golden', `${name}.txt`);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, `${text}\n`);
  expect(existsSync(file), `${file} is missing: run with UPDATE_GOLDEN=1 and review it`).toBe(true);
  expect(`${text}\n`).toBe(readFileSync(file, 'utf8'));
}

const now = new Date('2026-03-01T12:00:00Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000).toISOString();

function seed(name: string, status: Partial<Seed['status']>, spec: Partial<Seed['spec']> = {}): Seed {
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Seed',
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: '3',
      generation: 1,
      creationTimestamp: ago(3 * 86_400),
      labels: {},
      annotations: {},
    },
    spec: {
      provider: { type: 'aws', region: 'eu-west-1', zones: ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'] },
      backup: { bucket: `gl-backup-${name}`, region: 'eu-west-1' },
      networks: { pods: '10.1.0.0/16', services: '10.2.0.0/16' },
      capacity: { shoots: 10 },
      ...spec,
    },
    status: { identity: `${name}-1`, conditions: [], shoots: 0, labels: {}, ...status },
  } as Seed;
}

const T = (type: string) => ({ type, status: 'True' as const });
const SEEDS: Seed[] = [
  seed('aws-eu1', {
    shoots: 3,
    lastHeartbeatTime: ago(4),
    leaseDurationSeconds: 30,
    conditions: [T('GardenletReady'), T('BackupBucketsReady')],
    labels: { 'seed.gardener.cloud/multi-zonal': 'true' },
  }),
  seed(
    'aws-eu2',
    {
      shoots: 1,
      lastHeartbeatTime: ago(4),
      leaseDurationSeconds: 30,
      conditions: [T('GardenletReady'), { type: 'BackupBucketsReady', status: 'False' }],
    },
    { provider: { type: 'aws', region: 'eu-west-1', zones: ['eu-west-1a'] }, capacity: undefined },
  ),
  seed('aws-eu3', {
    lastHeartbeatTime: ago(95),
    leaseDurationSeconds: 30,
    conditions: [T('GardenletReady'), T('BackupBucketsReady')],
  }),
  seed('aws-eu4', {}, { backup: undefined }),
];

function shoot(
  project: string,
  name: string,
  extra: {
    seedName?: string;
    tolerance?: 'node' | 'zone';
    hibernated?: boolean;
    op?: Shoot['status']['lastOperation'];
  } = {},
): Shoot {
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Shoot',
    metadata: {
      project,
      name,
      uid: `uid-${name}`,
      resourceVersion: '5',
      generation: 1,
      creationTimestamp: ago(45 * 60),
      labels: {},
      annotations: {},
    },
    spec: {
      provider: { type: 'aws' },
      region: 'eu-west-1',
      ...(extra.seedName ? { seedName: extra.seedName } : {}),
      ...(extra.tolerance
        ? { controlPlane: { highAvailability: { failureTolerance: { type: extra.tolerance } } } }
        : {}),
      ...(extra.hibernated ? { hibernation: { enabled: true } } : {}),
    },
    status: {
      technicalID: `shoot--${project}--${name}`,
      ...(extra.seedName ? { seedName: extra.seedName } : {}),
      ...(extra.op ? { lastOperation: extra.op } : {}),
      conditions: [],
      constraints: [],
    },
  } as Shoot;
}

const SHOOTS: Shoot[] = [
  shoot('dev', 'web', {
    seedName: 'aws-eu1',
    op: { type: 'Create', state: 'Succeeded', progress: 100, description: '', lastUpdateTime: ago(60) },
  }),
  shoot('dev', 'db', {
    seedName: 'aws-eu1',
    tolerance: 'zone',
    hibernated: true,
    op: { type: 'Migrate', state: 'Processing', progress: 42, description: '', lastUpdateTime: ago(5) },
  }),
  shoot('ops', 'api', {
    tolerance: 'node',
    op: { type: 'Create', state: 'Pending', progress: 0, description: '', lastUpdateTime: ago(5) },
  }),
];

describe('seedReadiness', () => {
  it.each([
    ['every condition True, lease held', SEEDS[0]!, 'True', []],
    ['a condition False', SEEDS[1]!, 'False', ['BackupBucketsReady=False']],
    ['the lease ran out (95 s > 30 s)', SEEDS[2]!, 'Unknown', ['LeaseExpired']],
    ['never heartbeated', SEEDS[3]!, 'Unknown', ['NoHeartbeat']],
    [
      'heartbeat without conditions',
      seed('x', { lastHeartbeatTime: ago(1), leaseDurationSeconds: 30 }),
      'Unknown',
      ['NoConditions'],
    ],
    [
      'a condition Unknown, none False',
      seed('x', {
        lastHeartbeatTime: ago(1),
        conditions: [T('GardenletReady'), { type: 'ExtensionsReady', status: 'Unknown' }],
      }),
      'Unknown',
      ['ExtensionsReady=Unknown'],
    ],
  ] as const)('%s: %s', (_name, s, ready, reasons) => {
    expect(seedReadiness(s, now)).toEqual({ ready, reasons });
  });
});

describe('tables (golden files)', () => {
  it('seed list', () => golden('seed-list', seedTable(SEEDS, { now })));
  it('seed list -o wide', () => golden('seed-list-wide', seedTable(SEEDS, { now, wide: true })));
  it('shoot list <project>', () => golden('shoot-list', shootTable(SHOOTS.slice(0, 2), { now })));
  it('shoot list -A -o wide', () =>
    golden('shoot-list-all-wide', shootTable(SHOOTS, { now, wide: true, allProjects: true })));

  it('schedule dry-run', () => {
    const result: DryRunResult = {
      seedName: 'aws-eu1',
      strategy: 'SameRegion',
      eligible: 2,
      total: 4,
      summary: '2/4 seeds are eligible for scheduling (strategy SameRegion)',
      candidates: [
        {
          name: 'aws-eu1',
          rank: 1,
          score: 97,
          multiZonal: true,
          shoots: 3,
          capacity: 10,
          provider: 'aws',
          region: 'eu-west-1',
        },
        {
          name: 'aws-eu3',
          rank: 2,
          score: 90,
          multiZonal: false,
          shoots: 0,
          capacity: null,
          provider: 'aws',
          region: 'eu-west-1',
        },
      ],
      rejected: [
        { seed: 'aws-eu2', filter: 'ha', reason: 'failure tolerance zone needs a multi-zonal seed (1 zone)' },
        { seed: 'aws-eu4', filter: 'ready', reason: 'the seed is not ready' },
      ],
    };
    golden('schedule-dry-run', scheduleTable(result));
    golden('schedule-dry-run-none', scheduleTable({ ...result, seedName: undefined, eligible: 0, candidates: [] }));
  });

  it('shoot migrate --dry-run', () => {
    const preview: MigrationPreview = {
      migrationId: 'm-1',
      resumed: false,
      sourceSeed: 'aws-eu1',
      destinationSeed: 'aws-eu3',
      resumeFrom: 'choose-path',
      mode: 'bad',
      path: 'bad',
      pathReason: 'mode bad requested',
      steps: [
        { id: 'set-owner-destination', title: 'Setting the owner record to the destination' },
        { id: 'copy-snapshots', title: 'Copying the etcd snapshots to the destination bucket' },
        { id: 'finalize', title: 'Setting the shoot onto the destination and releasing the lock' },
      ],
      fenceBoundMs: 72_000,
    };
    golden('migrate-dry-run', migrationPreviewText('dev/web', preview));
  });
});

describe('age', () => {
  it.each([
    [5, '5s'],
    [119, '119s'],
    [120, '2m'],
    [7199, '120m'],
    [7200, '2h'],
    [172_799, '48h'],
    [172_800, '2d'],
  ])('%i s ago is %s', (s, text) => expect(age(ago(s), now)).toBe(text));
  it('is <unknown> without a time', () => expect(age(undefined, now)).toBe('<unknown>'));
});
