import { spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import type { GardenClient } from '../adapters/http/garden-client.js';
import type { OwnershipTimings } from '../core/ownership/index.js';
import { durationFlag } from '../seed/backup-restore/duration.js';
import { emulatorEnv } from './aws-env.js';
import { emulatorS3, ensureBucket } from './buckets.js';
import { PROJECT_ROOT } from './emulator.js';

/** The demo fleet: two single-zonal seeds and one multi-zonal seed, all on this machine. */
export const FLEET = [
  { name: 'local-a', zones: ['local-1a'], index: 1 },
  { name: 'local-b', zones: ['local-1a'], index: 2 },
  { name: 'local-c', zones: ['local-1a', 'local-1b', 'local-1c'], index: 3 },
] as const;

/**
 * The landscape's ownership timings: its sidecars check every second with 10 s of grace, and the stack
 * it deploys waits on the fence bound of exactly these.
 */
export const LANDSCAPE_OWNERSHIP_TIMINGS = {
  ownerCheckInterval: 1_000,
  unknownGrace: 10_000,
} as const satisfies Partial<OwnershipTimings>;

/** The landscape's API records live in a zone of their own, apart from the test stack's. */
export const LANDSCAPE_EXTERNAL_DOMAIN = 'shoots.landscape.gardenless.local';

/** The CDK context `npm start` deploys the GardenStack with (benchmarks that run the landscape's configuration use it too). */
export const LANDSCAPE_STACK_CONTEXT: Readonly<Record<string, string>> = {
  ownershipTimings: JSON.stringify(LANDSCAPE_OWNERSHIP_TIMINGS),
  externalDomain: LANDSCAPE_EXTERNAL_DOMAIN,
};

/** The landscape's seed agents heartbeat every 2 s and their sidecars take a delta snapshot every 5 s. */
export const LANDSCAPE_AGENT_SETTINGS = { heartbeatIntervalSeconds: 2, deltaSnapshotInterval: '5s' } as const;

/** A few shoots the scheduler spreads over the fleet: non-HA and node tolerance prefer single-zonal seeds, zone needs local-c. */
export const SHOOTS = [
  { project: 'dev', name: 'web' },
  { project: 'dev', name: 'api', tolerance: 'node' as const },
  { project: 'dev', name: 'db', tolerance: 'zone' as const },
];

export function seedBody(seed: (typeof FLEET)[number]) {
  return {
    metadata: { name: seed.name, labels: { landscape: 'local' } },
    spec: {
      provider: { type: 'local', region: 'local-1', zones: [...seed.zones] },
      backup: { bucket: `gl-backup-${seed.name}`, region: 'us-east-1' },
      networks: {
        nodes: `10.${seed.index * 10}.0.0/16`,
        pods: `10.${seed.index * 10 + 1}.0.0/16`,
        services: `10.${seed.index * 10 + 2}.0.0/16`,
      },
      capacity: { shoots: 20 },
      workerPools: [{ name: 'cp', zones: [...seed.zones], minimum: 3 }],
    },
  };
}

export function shootBody(shoot: (typeof SHOOTS)[number]) {
  return {
    metadata: { project: shoot.project, name: shoot.name },
    spec: {
      provider: { type: 'local' },
      region: 'local-1',
      purpose: 'development',
      networking: { nodes: '10.250.0.0/16', pods: '100.96.0.0/11', services: '100.64.0.0/13' },
      ...(shoot.tolerance
        ? { controlPlane: { highAvailability: { failureTolerance: { type: shoot.tolerance } } } }
        : {}),
    },
  };
}

export async function registerFleet(options: { api: GardenClient; endpoint: string; region: string }): Promise<void> {
  const s3 = emulatorS3(options.endpoint, options.region);
  for (const seed of FLEET) {
    await ensureBucket(s3, `gl-backup-${seed.name}`);
    const res = await options.api.request('PUT', `/seeds/${seed.name}`, { body: seedBody(seed) });
    if (res.status >= 300) throw new Error(`seed ${seed.name}: ${res.status} ${JSON.stringify(res.body)}`);
  }
}

/** Starts one seed agent per seed as a detached process group (stopped by `npm run stop`); returns the pids. */
export function startAgents(options: {
  endpoint: string;
  region: string;
  dir: string;
  apiUrl: string;
  hostedZoneId: string;
  internalDomain: string;
  /** The one port of every seed's load balancer (each on its own loopback address). */
  lbPort: number;
}): Record<string, number> {
  const pids: Record<string, number> = {};
  for (const seed of FLEET) {
    const log = openSync(join(options.dir, `agent-${seed.name}.log`), 'a');
    mkdirSync(join(options.dir, 'seeds', seed.name), { recursive: true });
    const child = spawn(
      join(PROJECT_ROOT, 'bin', 'gardenless'),
      [
        '--api-url',
        options.apiUrl,
        '--region',
        options.region,
        'seed-agent',
        '--seed',
        seed.name,
        '--aws-endpoint',
        options.endpoint,
        '--hosted-zone-id',
        options.hostedZoneId,
        '--internal-domain',
        options.internalDomain,
        '--work-dir',
        join(options.dir, 'seeds', seed.name),
        '--heartbeat-interval',
        String(LANDSCAPE_AGENT_SETTINGS.heartbeatIntervalSeconds),
        '--delta-snapshot-interval',
        LANDSCAPE_AGENT_SETTINGS.deltaSnapshotInterval,
        // Each seed's load balancers on a loopback address of its own: the API record then names the seed.
        '--lb-address',
        `127.0.0.${seed.index + 1}`,
        '--lb-port',
        String(options.lbPort),
        '--owner-check-interval',
        durationFlag(LANDSCAPE_OWNERSHIP_TIMINGS.ownerCheckInterval),
        '--unknown-grace',
        durationFlag(LANDSCAPE_OWNERSHIP_TIMINGS.unknownGrace),
      ],
      {
        cwd: PROJECT_ROOT,
        env: { ...process.env, ...emulatorEnv(options.endpoint, options.region) },
        stdio: ['ignore', log, log],
        detached: true,
      },
    );
    child.unref();
    if (child.pid) pids[seed.name] = child.pid;
  }
  return pids;
}

/** Waits until every seed's agent has reported it ready: the scheduler only places shoots on ready seeds. */
export async function waitForReadySeeds(api: GardenClient, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states = await Promise.all(
      FLEET.map(async (seed) => {
        const res = await api.request<{ status: { conditions: { type: string; status: string }[] } }>(
          'GET',
          `/seeds/${seed.name}`,
        );
        const conditions = res.status === 200 ? res.body.status.conditions : [];
        return ['GardenletReady', 'BackupBucketsReady'].every((t) =>
          conditions.some((c) => c.type === t && c.status === 'True'),
        );
      }),
    );
    if (states.every(Boolean)) return;
    if (Date.now() > deadline) throw new Error('the seed agents did not report ready; see .landscape/agent-*.log');
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

export async function createShoots(api: GardenClient): Promise<void> {
  await waitForReadySeeds(api);
  for (const shoot of SHOOTS) {
    const res = await api.request('PUT', `/projects/${shoot.project}/shoots/${shoot.name}`, { body: shootBody(shoot) });
    if (res.status >= 300)
      throw new Error(`shoot ${shoot.project}/${shoot.name}: ${res.status} ${JSON.stringify(res.body)}`);
  }
}
