import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { join } from 'node:path';
import type { GardenClient } from '../../adapters/http/garden-client.js';
import { durationFlag } from '../../seed/backup-restore/duration.js';
import { emulatorEnv } from '../aws-env.js';
import { emulatorS3, ensureBucket } from '../buckets.js';
import { PROJECT_ROOT } from '../emulator.js';
import { LANDSCAPE_OWNERSHIP_TIMINGS } from '../fleet.js';
import { startKubeCluster, type KubeClusterInfo } from './cluster.js';

/** The landscape's seed on the `kubernetes` runtime: its own test seed cluster (kube-apiserver, kwok nodes in three zones). */
export const KUBE_SEED = 'kube-a';

export interface KubeSeedStarted {
  cluster: KubeClusterInfo;
  agentPid: number | undefined;
}

/**
 * Starts the test seed cluster under `<dir>/kube` (outliving this process; `npm run stop` stops it),
 * registers seed `kube-a` (multi-zonal: three zones of kwok nodes) with its backup bucket and starts its
 * agent with `--runtime kubernetes`. Its control planes are objects on that API server; kwok's pods run
 * no containers, so its etcds hold no data (the local seeds are where etcd really runs).
 */
export async function startKubeSeed(options: {
  api: GardenClient;
  endpoint: string;
  region: string;
  dir: string;
  apiUrl: string;
  hostedZoneId: string;
  internalDomain: string;
}): Promise<KubeSeedStarted> {
  const cluster = await startKubeCluster({ dir: join(options.dir, 'kube'), tiedToProcess: false });
  await ensureBucket(emulatorS3(options.endpoint, options.region), `gl-backup-${KUBE_SEED}`);
  const zones = cluster.info.zones;
  const res = await options.api.request('PUT', `/seeds/${KUBE_SEED}`, {
    body: {
      metadata: { name: KUBE_SEED, labels: { landscape: 'local', runtime: 'kubernetes' } },
      spec: {
        provider: { type: 'local', region: 'local-1', zones },
        backup: { bucket: `gl-backup-${KUBE_SEED}`, region: 'us-east-1' },
        networks: { nodes: '10.40.0.0/16', pods: '10.41.0.0/16', services: '10.42.0.0/16' },
        capacity: { shoots: 20 },
        workerPools: [{ name: 'cp', zones, minimum: 3 }],
      },
    },
  });
  if (res.status >= 300) throw new Error(`seed ${KUBE_SEED}: ${res.status} ${JSON.stringify(res.body)}`);
  const log = openSync(join(options.dir, `agent-${KUBE_SEED}.log`), 'a');
  const child = spawn(
    join(PROJECT_ROOT, 'bin', 'gardenless'),
    [
      '--api-url',
      options.apiUrl,
      '--region',
      options.region,
      'seed-agent',
      '--seed',
      KUBE_SEED,
      '--runtime',
      'kubernetes',
      '--kubeconfig',
      cluster.info.kubeconfigPath,
      '--aws-endpoint',
      options.endpoint,
      '--hosted-zone-id',
      options.hostedZoneId,
      '--internal-domain',
      options.internalDomain,
      '--heartbeat-interval',
      '2',
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
  return { cluster: cluster.info, agentPid: child.pid };
}
