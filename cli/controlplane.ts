import type { ControlPlaneLayoutView } from '../core/garden/service.js';
import { asList } from './output.js';

/** What `GET .../controlplane` answers (the GEP-20 layout: workloads and PDBs without containers). */
export type ControlPlaneLayout = ControlPlaneLayoutView;

/** Which image of the seed's image vector runs each component (the etcd pods run the backup-restore sidecar). */
const IMAGE_OF: Record<string, string> = {
  etcd: 'etcd-backup-restore',
  'kube-apiserver': 'kube-apiserver',
  'gardener-resource-manager': 'gardener-resource-manager',
  'kube-controller-manager': 'kube-controller-manager',
  'kube-scheduler': 'kube-scheduler',
  'machine-controller-manager': 'machine-controller-manager',
  'cluster-autoscaler': 'cluster-autoscaler',
};

type PodTemplate = { metadata?: Record<string, unknown>; spec?: Record<string, unknown> };

/**
 * The layout as a `v1 List` an API server accepts: the shoot's Namespace first, then every workload with
 * one container per pod (the component's image from `images`), then the PDBs as they are. What the
 * kubernetes runtime applies adds probes, arguments and volumes (`seed/kubernetes/objects.ts`).
 */
export function controlPlaneList(
  layout: ControlPlaneLayout,
  images: Record<string, string>,
): ReturnType<typeof asList> {
  const namespace = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: layout.technicalID, labels: { 'gardener.cloud/shoot': layout.technicalID } },
  };
  const items = layout.items.map((item) => {
    const object = structuredClone(item) as {
      kind?: string;
      metadata?: { name?: string };
      spec?: { template?: PodTemplate };
    };
    const template = object.spec?.template;
    if (template) {
      const component = object.metadata?.name ?? '';
      const image = images[IMAGE_OF[component] ?? component];
      if (!image) throw new Error(`no image for component "${component}" in the image vector`);
      template.spec = { ...template.spec, containers: [{ name: component, image }] };
    }
    return object;
  });
  return asList([namespace, ...items]);
}
