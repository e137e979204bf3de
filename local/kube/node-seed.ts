import type { KubernetesObject } from '@kubernetes/client-node';
import { KubeObjects } from '../../seed/kubernetes/kube-api.js';
import { emulatorCredentials } from '../aws-env.js';
import type { KubeCluster } from './cluster.js';
import { installChart } from './helm.js';
import { testImageVector, type TestImage, type TestImageName } from './images.js';
import { exposeHostPort, loadImages } from './node-cluster.js';

/** The Secret of the seed's AWS credentials (docs/kubernetes-seed.md, clusters without IRSA). */
export const CREDENTIALS_SECRET = 'aws-credentials';
/** Where the chart installs the agent. */
export const AGENT_NAMESPACE = 'gardenless-system';
/** The images a shoot's control plane runs from on the real node (the sidecar's is the agent's). */
export const NODE_SEED_IMAGES: readonly TestImageName[] = [
  'gardenless',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
];

/**
 * The seed agent as users install it, on the test seed's real node: the control plane's images imported,
 * the emulator exposed to the pods, the AWS credentials in a Secret, and `helm install` of deploy/chart with
 * the image vector pointing at the imported images (`--wait`: the agent's pod is Ready when this returns).
 * The seed must be registered already; its bucket must exist.
 */
export async function installNodeSeedAgent(options: {
  cluster: KubeCluster;
  seed: string;
  bucket: string;
  /** The garden's API and the emulator as the host reaches them. */
  apiUrl: string;
  awsEndpoint: string;
  region: string;
  hostedZoneId: string;
  internalDomain: string;
  heartbeatIntervalSeconds: number;
  /** The sidecars' owner checks (the chart's `sidecar.*`, duration flags); the chart's defaults otherwise. */
  ownership?: { ownerCheckInterval: string; unknownGrace: string };
  /** The images, when the caller imported them already (`loadImages` of `NODE_SEED_IMAGES`). */
  images?: Record<TestImageName, TestImage>;
}): Promise<void> {
  const { cluster } = options;
  const kube = new KubeObjects(cluster.kubeConfig());
  const podEndpoint = `http://${await exposeHostPort(cluster, Number(new URL(options.awsEndpoint).port))}`;
  const images = options.images ?? (await loadImages(cluster, NODE_SEED_IMAGES));
  const credentials = emulatorCredentials();
  await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: AGENT_NAMESPACE } });
  await kube.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: CREDENTIALS_SECRET, namespace: AGENT_NAMESPACE },
    stringData: { AWS_ACCESS_KEY_ID: credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey },
  } as KubernetesObject);
  const apiUrl = new URL(options.apiUrl);
  apiUrl.host = new URL(podEndpoint).host;
  const gardenless = images.gardenless;
  const colon = gardenless.ref.lastIndexOf(':');
  await installChart({
    release: 'agent',
    namespace: AGENT_NAMESPACE,
    kubeconfig: cluster.info.kubeconfigPath,
    set: {
      'seed.name': options.seed,
      'garden.apiUrl': apiUrl.toString().replace(/\/$/, ''),
      'aws.region': options.region,
      'aws.endpoint': podEndpoint,
      'owner.mode': 'api',
      'owner.hostedZoneId': options.hostedZoneId,
      'owner.internalDomain': options.internalDomain,
      backupBucket: options.bucket,
      heartbeatIntervalSeconds: String(options.heartbeatIntervalSeconds),
      awsCredentialsSecret: CREDENTIALS_SECRET,
      ...(options.ownership
        ? {
            'sidecar.ownerCheckInterval': options.ownership.ownerCheckInterval,
            'sidecar.unknownGrace': options.ownership.unknownGrace,
          }
        : {}),
      'image.repository': gardenless.ref.slice(0, colon),
      'image.tag': gardenless.ref.slice(colon + 1),
      // The control plane's images as the node has them: etcd's sidecar from the same image as the agent.
      ...Object.fromEntries(
        testImageVector(images).images.flatMap((image, i) => [
          [`imageVector[${i}].name`, image.name],
          [`imageVector[${i}].repository`, image.repository],
          [`imageVector[${i}].tag`, image.tag],
        ]),
      ),
    },
  });
}
