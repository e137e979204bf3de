import { Route53Client } from '@aws-sdk/client-route-53';
import { S3Client } from '@aws-sdk/client-s3';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SQSClient } from '@aws-sdk/client-sqs';
import { KubeConfig, type V1Node } from '@kubernetes/client-node';
import type { AwsCredentialIdentity } from '@smithy/types';
import type { GardenClient } from '../../adapters/http/garden-client.js';
import { Route53OwnerLookup } from '../../adapters/route53/owner-lookup.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { s3Api } from '../../adapters/s3/s3-api.js';
import { ZONE_KEY } from '../../core/ha/kubernetes.js';
import { SeedAgent } from '../agent/agent.js';
import { SeedAgentConfigError } from '../agent/errors.js';
import { sfnTaskAnswers } from '../agent/task-answers.js';
import { ownerLookup } from '../backup-restore/aws.js';
import { ownerCheckBy, s3Stores } from '../common/aws-stores.js';
import type { ImageVector } from './image-vector.js';
import { KubeObjects } from './kube-api.js';
import type { SidecarSettings } from './objects.js';
import { KubernetesRuntime } from './runtime.js';

export interface KubernetesSeedAgentOptions {
  seed: string;
  garden: GardenClient;
  /** The seed cluster: a kubeconfig file, or in a pod its ServiceAccount (`inCluster`). */
  kube: { kubeconfig: string } | { inCluster: true } | { kubeConfig: KubeConfig };
  aws: { endpoint?: string; region: string; credentials?: AwsCredentialIdentity | (() => Promise<AwsCredentialIdentity>) };
  /** How the agent's restore check and the sidecars read owner records. */
  owner: { mode: 'api'; hostedZoneId: string; internalDomain: string } | { mode: 'dns'; internalDomain: string; servers?: readonly string[] };
  backupBucket?: string;
  /** The seed's zones; default: the zones of its nodes (needs `list nodes`). */
  zones?: readonly string[];
  images?: ImageVector;
  sidecar?: Pick<SidecarSettings, 'ownerCheckInterval' | 'unknownGrace' | 'deltaSnapshotInterval' | 'fullSnapshotInterval' | 'storage' | 'storageClassName' | 's3Endpoint'> & { route53Endpoint?: string };
  namespacePrefix?: string;
  heartbeatIntervalMs?: number;
  pollWaitSeconds?: number;
  readyTimeoutMs?: number;
  externalUrl?: (lb: { host: string; port: number }) => string;
  log?: (entry: Record<string, unknown>) => void;
}

/**
 * A seed agent with the `kubernetes` runtime, wired to AWS as the local one is (SQS for commands, Step
 * Functions for answers, S3 for the state and backup buckets, the owner record for restores), acting on
 * the seed cluster through its API server.
 */
export async function kubernetesSeedAgent(options: KubernetesSeedAgentOptions): Promise<{ agent: SeedAgent; runtime: () => KubernetesRuntime }> {
  const kubeConfig = loadKubeConfig(options.kube);
  const zones = options.zones ?? (await nodeZones(new KubeObjects(kubeConfig)));
  if (zones.length === 0) throw new SeedAgentConfigError('no zones: the seed has no node labelled topology.kubernetes.io/zone; pass --zones', 'zones');
  const aws = { region: options.aws.region, ...(options.aws.endpoint ? { endpoint: options.aws.endpoint } : {}), ...(options.aws.credentials ? { credentials: options.aws.credentials } : {}) };
  const s3 = s3Api(new S3Client({ ...aws, forcePathStyle: options.aws.endpoint !== undefined }));
  const lookup =
    options.owner.mode === 'api'
      ? new Route53OwnerLookup(new Route53OwnerRecords({ hostedZoneId: options.owner.hostedZoneId, api: route53Api(new Route53Client(aws)) }))
      : ownerLookup({ mode: 'dns', ...(options.owner.servers ? { servers: options.owner.servers } : {}) });
  const { route53Endpoint, ...sidecar } = options.sidecar ?? {};
  let runtime: KubernetesRuntime | undefined;
  const agent = new SeedAgent({
    seed: options.seed,
    garden: options.garden,
    sqs: new SQSClient(aws),
    answers: sfnTaskAnswers(new SFNClient(aws)),
    ...(options.heartbeatIntervalMs === undefined ? {} : { heartbeatIntervalMs: options.heartbeatIntervalMs }),
    ...(options.pollWaitSeconds === undefined ? {} : { pollWaitSeconds: options.pollWaitSeconds }),
    ...(options.log ? { log: options.log } : {}),
    ...(options.backupBucket ? { backupBucketReady: () => s3.headBucket({ Bucket: options.backupBucket }).then(() => true) } : {}),
    runtime: ({ identity }) =>
      (runtime = new KubernetesRuntime({
        seed: options.seed,
        kubeConfig,
        zones,
        ...(options.images ? { images: options.images } : {}),
        ...(options.namespacePrefix ? { namespacePrefix: options.namespacePrefix } : {}),
        ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }),
        ...(options.externalUrl ? { externalUrl: options.externalUrl } : {}),
        sidecar: {
          ...sidecar,
          identity,
          internalDomain: options.owner.internalDomain,
          region: options.aws.region,
          owner: options.owner.mode === 'api' ? { mode: 'api', hostedZoneId: options.owner.hostedZoneId, ...(route53Endpoint ? { route53Endpoint } : {}) } : { mode: 'dns', ...(options.owner.servers ? { servers: options.owner.servers } : {}) },
        },
        ...s3Stores(s3),
        ownerCheck: ownerCheckBy({ lookup, internalDomain: options.owner.internalDomain, identity }),
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
  return [...new Set(nodes.map((n) => n.metadata?.labels?.[ZONE_KEY]).filter((z): z is string => z !== undefined))].sort();
}
