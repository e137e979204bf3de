import { join } from 'node:path';
import type { GardenClient } from '../../adapters/http/garden-client.js';
import { durationFlag } from '../../seed/backup-restore/duration.js';
import { emulatorS3, ensureBucket } from '../buckets.js';
import { LANDSCAPE_OWNERSHIP_TIMINGS } from '../fleet.js';
import type { KubeClusterInfo } from './cluster.js';
import { startNodeCluster } from './node-cluster.js';
import { installNodeSeedAgent } from './node-seed.js';

/** The landscape's seed on the `kubernetes` runtime: a one-node cluster of its own, the agent from its chart. */
export const KUBE_SEED = 'kube-a';

/** Where the landscape's node is described once it runs (`KubeCluster.attach`). */
export const kubeSeedStateFile = (dir: string) => join(dir, 'kube', 'node.json');

export interface KubeSeedStarted {
  cluster: KubeClusterInfo;
  /** The cluster's description, for `KubeCluster.attach(...).stop()` (`npm run stop`). */
  stateFile: string;
}

/**
 * Starts the test seed with a real node under `<dir>/kube` (outliving this process; `npm run stop` stops
 * it), registers seed `kube-a` with its backup bucket and installs the agent with deploy/chart: the
 * agent runs in a pod with `--runtime kubernetes --in-cluster`, and each shoot's etcd, kube-apiserver,
 * kube-controller-manager and kube-scheduler run in pods on the node, its kube-apiserver behind a load
 * balancer on `lbPort` (the port every seed of the landscape serves shoots' API on, so that a shoot's
 * kubeconfig holds wherever it moves). Needs root (docs/kubernetes-seed.md, "The real node").
 */
export async function startKubeSeed(options: {
  api: GardenClient;
  endpoint: string;
  region: string;
  dir: string;
  apiUrl: string;
  hostedZoneId: string;
  internalDomain: string;
  lbPort: number;
  log?: (line: string) => void;
}): Promise<KubeSeedStarted> {
  const stateFile = kubeSeedStateFile(options.dir);
  const cluster = await startNodeCluster({
    dir: join(options.dir, 'kube'),
    stateFile,
    tiedToProcess: false,
    // The landscape outlives this process; `npm run stop` stops the node, no later start sweeps it.
    ownerPid: 0,
    loadBalancerPort: options.lbPort,
    ...(options.log ? { log: options.log } : {}),
  });
  const bucket = `gl-backup-${KUBE_SEED}`;
  await ensureBucket(emulatorS3(options.endpoint, options.region), bucket);
  const zones = cluster.info.zones;
  const res = await options.api.request('PUT', `/seeds/${KUBE_SEED}`, {
    body: {
      metadata: { name: KUBE_SEED, labels: { landscape: 'local', runtime: 'kubernetes' } },
      spec: {
        provider: { type: 'local', region: 'local-1', zones },
        backup: { bucket, region: 'us-east-1' },
        networks: { nodes: '10.40.0.0/16', pods: '10.41.0.0/16', services: '10.42.0.0/16' },
        capacity: { shoots: 5 },
      },
    },
  });
  if (res.status >= 300) throw new Error(`seed ${KUBE_SEED}: ${res.status} ${JSON.stringify(res.body)}`);
  await installNodeSeedAgent({
    cluster,
    seed: KUBE_SEED,
    bucket,
    apiUrl: options.apiUrl,
    awsEndpoint: options.endpoint,
    region: options.region,
    hostedZoneId: options.hostedZoneId,
    internalDomain: options.internalDomain,
    heartbeatIntervalSeconds: 2,
    ownership: {
      ownerCheckInterval: durationFlag(LANDSCAPE_OWNERSHIP_TIMINGS.ownerCheckInterval),
      unknownGrace: durationFlag(LANDSCAPE_OWNERSHIP_TIMINGS.unknownGrace),
    },
  });
  return { cluster: cluster.info, stateFile };
}
