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
import { ControlPlaneRuntime, type ControlPlaneRuntimeOptions } from '../agent/control-plane-runtime.js';
import { KubernetesHosting, type KubernetesHostingOptions } from './hosting.js';
import { SeedNamespaces } from './namespaces.js';
import { ConfigMapPlaneStore } from './plane-store.js';

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
  /** The etcd sidecars' AWS environment, given to them in each shoot namespace (KubernetesHostingOptions). */
  sidecarCredentials?: Readonly<Record<string, string>>;
}

/**
 * A seed agent with the `kubernetes` runtime: the AWS wiring of every agent (`awsSeedAgent`: SQS,
 * Step Functions, the buckets, the owner record) and its one runtime, the control planes hosted as
 * objects on the seed cluster's API server and their records kept there.
 */
export async function kubernetesSeedAgent(
  options: KubernetesSeedAgentOptions,
): Promise<{ agent: SeedAgent; hosting: () => KubernetesHosting }> {
  const kubeConfig = loadKubeConfig(options.kube);
  const kube = new KubeObjects(kubeConfig);
  const zones = options.zones ?? (await nodeZones(kube));
  if (zones.length === 0)
    throw new SeedAgentConfigError(
      'no zones: the seed has no node labelled topology.kubernetes.io/zone; pass --zones',
      'zones',
    );
  const namespaces = new SeedNamespaces(kube, options.seed, options.namespacePrefix);
  let hosting: KubernetesHosting | undefined;
  const {
    kube: _kube,
    zones: _zones,
    images,
    sidecar,
    namespacePrefix: _prefix,
    readyTimeoutMs,
    externalUrl,
    sidecarCredentials,
    ...common
  } = options;
  const agent = awsSeedAgent({
    ...common,
    hosting: (identity) =>
      (hosting = new KubernetesHosting({
        namespaces,
        zones,
        sidecar: podSidecarSettings({ identity, owner: options.owner, region: options.aws.region, sidecar }),
        ...(images ? { images } : {}),
        ...(readyTimeoutMs === undefined ? {} : { readyTimeoutMs }),
        ...(externalUrl ? { externalUrl } : {}),
        ...(sidecarCredentials ? { sidecarCredentials } : {}),
      })),
    planeStore: new ConfigMapPlaneStore(namespaces, options.log),
  });
  return {
    agent,
    hosting: () => {
      if (!hosting) throw new SeedAgentConfigError('the agent has not started yet', 'runtime');
      return hosting;
    },
  };
}

/** What the etcd pods' sidecars of a seed are told: the seed's identity and owner records, their timings and volume. */
function podSidecarSettings(input: {
  identity: string;
  owner: OwnerConfig;
  region: string;
  sidecar: KubernetesSeedAgentOptions['sidecar'];
}): PodSidecarSettings {
  const { s3Endpoint, route53Endpoint, storage, storageClassName, ...timings } = input.sidecar ?? {};
  return withoutUndefined({
    identity: input.identity,
    aws: withoutUndefined({ region: input.region, endpoint: s3Endpoint, route53Endpoint }),
    owner: input.owner,
    sidecar: timings,
    storage,
    storageClassName,
  });
}

/** The `kubernetes` runtime outside an agent (tests): the hosting, its records in the cluster, the one flow. */
export function kubernetesRuntime(
  options: Omit<KubernetesHostingOptions, 'namespaces'> &
    Pick<ControlPlaneRuntimeOptions, 'blobStore' | 'snapshotStore' | 'ownerCheck' | 'openSecrets'> & {
      seed: string;
      kubeConfig: KubeConfig;
      namespacePrefix?: string;
    },
): { runtime: ControlPlaneRuntime; hosting: KubernetesHosting } {
  const { seed, kubeConfig, namespacePrefix, blobStore, snapshotStore, ownerCheck, openSecrets, ...rest } = options;
  const namespaces = new SeedNamespaces(new KubeObjects(kubeConfig), seed, namespacePrefix);
  const hosting = new KubernetesHosting({ ...rest, namespaces });
  const runtime = new ControlPlaneRuntime({
    seed,
    hosting,
    planeStore: new ConfigMapPlaneStore(namespaces),
    blobStore,
    snapshotStore,
    ...(ownerCheck ? { ownerCheck } : {}),
    ...(openSecrets ? { openSecrets } : {}),
  });
  return { runtime, hosting };
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
