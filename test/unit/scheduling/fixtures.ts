import type { Condition, Seed, SeedSpec, Shoot, ShootSpec } from '../../../core/model/index.js';

export interface SeedFixture {
  name?: string;
  provider?: string;
  region?: string;
  zones?: string[];
  networks?: SeedSpec['networks'];
  taints?: SeedSpec['taints'];
  visible?: boolean;
  capacity?: number;
  allocatable?: number;
  shoots?: number;
  workerPools?: SeedSpec['workerPools'];
  labels?: Record<string, string>;
  statusLabels?: Record<string, string>;
  conditions?: Condition[];
  deletionTimestamp?: string;
  lastHeartbeatTime?: string;
  multiZonal?: boolean;
}

export const READY: Condition[] = [
  { type: 'GardenletReady', status: 'True' },
  { type: 'BackupBucketsReady', status: 'True' },
];

/** A usable single-zonal aws seed in eu-west-1 with networks in 10.0.0.0/8, changed by `f`. */
export function aSeed(f: SeedFixture = {}): Seed {
  const name = f.name ?? 'seed-a';
  const region = f.region ?? 'eu-west-1';
  const zones = f.zones ?? (f.multiZonal ? [`${region}a`, `${region}b`, `${region}c`] : [`${region}a`]);
  const statusLabels = f.statusLabels ?? (f.multiZonal ? { 'seed.gardener.cloud/multi-zonal': 'true' } : {});
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Seed',
    metadata: {
      name,
      resourceVersion: '1',
      uid: `uid-${name}`,
      creationTimestamp: '2026-01-01T00:00:00Z',
      ...(f.labels ? { labels: f.labels } : {}),
      ...(f.deletionTimestamp ? { deletionTimestamp: f.deletionTimestamp } : {}),
    },
    spec: {
      provider: { type: f.provider ?? 'aws', region, zones },
      networks: f.networks ?? { nodes: '10.0.0.0/16', pods: '10.1.0.0/16', services: '10.2.0.0/16' },
      ...(f.taints ? { taints: f.taints } : {}),
      ...(f.visible === undefined ? {} : { settings: { scheduling: { visible: f.visible } } }),
      ...(f.capacity === undefined ? {} : { capacity: { shoots: f.capacity } }),
      ...(f.workerPools ? { workerPools: f.workerPools } : {}),
    },
    status: {
      identity: `${name}-identity`,
      conditions: f.conditions ?? READY,
      shoots: f.shoots ?? 0,
      labels: statusLabels,
      ...(f.allocatable === undefined ? {} : { allocatable: { shoots: f.allocatable } }),
      ...(f.lastHeartbeatTime ? { lastHeartbeatTime: f.lastHeartbeatTime } : {}),
    },
  };
}

/** An aws shoot in eu-west-1 with Gardener's default networks (disjoint from the fixture seeds). */
export function aShootSpec(overrides: Partial<ShootSpec> = {}): ShootSpec {
  return {
    provider: { type: 'aws' },
    region: 'eu-west-1',
    networking: { nodes: '10.250.0.0/16', pods: '100.96.0.0/11', services: '100.64.0.0/13' },
    ...overrides,
  };
}

export function ha(type: 'node' | 'zone'): Pick<ShootSpec, 'controlPlane'> {
  return { controlPlane: { highAvailability: { failureTolerance: { type } } } };
}

export function aShoot(overrides: Partial<ShootSpec> = {}, name = 'api1', project = 'dev'): Shoot {
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Shoot',
    metadata: { name, project, resourceVersion: '1', uid: `uid-${name}`, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: aShootSpec(overrides),
    status: { technicalID: `shoot--${project}--${name}`, conditions: [], constraints: [] },
  };
}
