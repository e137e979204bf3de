import type { KubernetesObject } from '@kubernetes/client-node';
import type { ShootRef } from '../../core/shootstate/index.js';
import { testImageVector, type TestImage } from '../../local/kube/images.js';
import { CREDENTIALS_SECRET } from '../../local/kube/node-seed.js';
import { imageVector } from '../../seed/kubernetes/image-vector.js';
import { controlPlaneObjects } from '../../seed/kubernetes/objects.js';

/**
 * The kubernetes runtime's own etcd of one shoot (seed/kubernetes/objects.ts: the StatefulSet with its
 * backup-restore sidecar, and its Services), every other component at 0 replicas and left out, with
 * `image` (the gardenless image) and the sidecar's AWS credentials from `CREDENTIALS_SECRET`.
 */
export function runtimeEtcdObjects(options: {
  shoot: ShootRef;
  namespace: string;
  seed: { name: string; zones: readonly string[] };
  bucket: string;
  /** The gardenless image (local/kube/images.ts). */
  image: TestImage;
  identity: string;
  internalDomain: string;
  hostedZoneId: string;
  region: string;
  s3Endpoint: string;
}): KubernetesObject[] {
  return controlPlaneObjects({
    shoot: options.shoot,
    namespace: options.namespace,
    seed: options.seed,
    replicas: {
      etcd: 1,
      'kube-apiserver': 0,
      'gardener-resource-manager': 0,
      'kube-controller-manager': 0,
      'kube-scheduler': 0,
      'machine-controller-manager': 0,
      'cluster-autoscaler': 0,
    },
    backupBucket: options.bucket,
    images: imageVector(testImageVector({ gardenless: options.image })),
    sidecar: {
      identity: options.identity,
      owner: { mode: 'api', hostedZoneId: options.hostedZoneId, internalDomain: options.internalDomain },
      aws: { region: options.region, endpoint: options.s3Endpoint },
      sidecar: { ownership: { ownerCheckInterval: 2_000, unknownGrace: 20_000 }, deltaSnapshotInterval: 3_000 },
      storage: '1Gi',
      credentialsSecret: CREDENTIALS_SECRET,
    },
  }).filter((o) => o.kind === 'Service' || o.kind === 'StatefulSet');
}
