import { KubeConfig, type V1Node } from '@kubernetes/client-node';
import { ZONE_KEY } from '../../core/ha/kubernetes.js';
import type { SeedAgent } from '../agent/agent.js';
import { awsSeedAgent, type AwsSeedAgentOptions, type OwnerConfig } from '../agent/aws-agent.js';
import { SeedAgentConfigError } from '../agent/errors.js';
import type { SidecarDefaults } from '../agent/sidecar-args.js';
import { withoutUndefined } from '../../core/objects.js';
import type { PodSidecarSettings } from './objects.js';
import type { ImageVector } from './image-vector.js';
import { KubeObjects } from './kube-api.js';
import { KubernetesRuntime } from './runtime.js';

export interface KubernetesSeedAgentOptions extends Pick<
  AwsSeedAgentOptions,
  'seed' | 'garden' | 'aws' | 'backupBucket' | 'heartbeatIntervalMs' | 'pollWaitSeconds' | 'log'
> {
  /** The seed cluster: a kubeconfig file, or in a pod its ServiceAccount (`inCluster`). */
  kube: { kubeconfig: string } | { inCluster: true } | { kubeConfig: KubeConfig };
  /** How the agent's restore check and the etcd sidecars read owner records. */
  owner: OwnerConfig;
  /** The seed's zones; default: the zones of its nodes (needs `list nodes`). */
  zones?: readonly string[];
  images?: ImageVector;
  /**
   * The etcd pods' sidecars: their timings and volume, and the AWS endpoints they reach (a pod may reach
   * the emulator by another address than the agent; default AWS's own).
   */
  sidecar?: NonNullable<SidecarDefaults['sidecar']> &
    Pick<PodSidecarSettings, 'storage' | 'storageClassName'> & { s3Endpoint?: string; route53Endpoint?: string };
  namespacePrefix?: string;
  readyTimeoutMs?: number;
  externalUrl?: (lb: { host: string; port: number }) => string;
}

/**
 * A seed agent with the `kubernetes` runtime: the AWS wiring of every agent (`awsSeedAgent`: SQS,
 * Step Functions, the buckets, the owner record), acting on the seed cluster through its API server.
 */
export async function kubernetesSeedAgent(
  options: KubernetesSeedAgentOptions,
): Promise<{ agent: SeedAgent; runtime: () => KubernetesRuntime }> {
  const kubeConfig = loadKubeConfig(options.kube);
  const zones = options.zones ?? (await nodeZones(new KubeObjects(kubeConfig)));
  if (zones.length === 0)
    throw new SeedAgentConfigError(
      'no zones: the seed has no node labelled topology.kubernetes.io/zone; pass --zones',
      'zones',
    );
  const { s3Endpoint, route53Endpoint, storage, storageClassName, ...timings } = options.sidecar ?? {};
  const owner = options.owner;
  let runtime: KubernetesRuntime | undefined;
  const {
    kube: _kube,
    zones: _zones,
    images,
    sidecar: _sidecar,
    namespacePrefix,
    readyTimeoutMs,
    externalUrl,
    ...common
  } = options;
  const agent = awsSeedAgent({
    ...common,
    owner,
    runtime: (context) =>
      (runtime = new KubernetesRuntime({
        seed: options.seed,
        kubeConfig,
        zones,
        ...(images ? { images } : {}),
        ...(namespacePrefix ? { namespacePrefix } : {}),
        ...(readyTimeoutMs === undefined ? {} : { readyTimeoutMs }),
        ...(externalUrl ? { externalUrl } : {}),
        sidecar: withoutUndefined({
          identity: context.identity,
          aws: withoutUndefined({ region: options.aws.region, endpoint: s3Endpoint, route53Endpoint }),
          owner,
          sidecar: timings,
          storage,
          storageClassName,
        }),
        blobStore: context.blobStore,
        snapshotStore: context.snapshotStore,
        ...(context.ownerCheck ? { ownerCheck: context.ownerCheck } : {}),
      })),
  });
  return {
    agent,
    runtime: () => {
      if (!runtime) throw new SeedAgentConfigError('the agent has not started yet', 'runtime');
      return runtime;
    },
  };
}

function loadKubeConfig(kube: KubernetesSeedAgentOptions['kube']): KubeConfig {
  if ('kubeConfig' in kube) return kube.kubeConfig;
  const kc = new KubeConfig();
  if ('inCluster' in kube) kc.loadFromCluster();
  else kc.loadFromFile(kube.kubeconfig);
  return kc;
}

/** The zones the seed's nodes are in, sorted. */
export async function nodeZones(kube: KubeObjects): Promise<string[]> {
  const nodes = await kube.list<V1Node>('v1', 'Node');
  return [
    ...new Set(nodes.map((n) => n.metadata?.labels?.[ZONE_KEY]).filter((z): z is string => z !== undefined)),
  ].sort();
}
