import type { KubernetesObject } from '@kubernetes/client-node';
import type { ShootRef } from '../../core/shootstate/index.js';
import { controlPlaneLayout, replicasFor, type ComponentName, type LayoutOptions } from '../../core/ha/layout.js';
import { ROLE_LABEL } from '../../core/dwd/components.js';
import type { EtcdSpec } from '../agent/hosting.js';
import { ROLE_OF } from '../agent/model.js';
import { seedServeFlags, type SidecarDefaults } from '../agent/sidecar-args.js';
import { serveArgv } from '../backup-restore/serve-flags.js';
import {
  KUBE_COMPONENTS,
  kubeApiServerFlags,
  kubeControllerManagerFlags,
  kubeSchedulerFlags,
} from '../agent/kube/component-flags.js';
import { CONTROL_PLANE_FILES, controlPlanePaths, type ControlPlaneFile } from '../agent/kube/control-plane-files.js';
import type { ImageVector } from './image-vector.js';

/** Labels and annotations the kubernetes runtime puts on what it owns. */
export const SEED_LABEL = 'seed.gardenless.io/name';
export const MANAGED_BY = 'app.kubernetes.io/managed-by';
export const FIELD_MANAGER = 'gardenless-seed-agent';
/** Where the dependency watchdog's scale-down remembers the replicas (dependency-watchdog's own annotation). */
export const REMEMBERED_REPLICAS = 'dependency-watchdog.gardener.cloud/replicas';

/** The etcd pods' one container: the backup-restore sidecar, which runs etcd in it. */
export const SIDECAR_CONTAINER = 'backup-restore';
export const ETCD_PORTS = { client: 2379, peer: 2380, private: 2381, status: 8080 } as const;
const DATA_DIR = '/var/etcd/data';

/**
 * How the backup-restore sidecar of every etcd pod is configured: what every sidecar of the seed shares
 * (as on any hosting), and the pod's volume.
 */
export interface PodSidecarSettings extends SidecarDefaults {
  /** The etcd volume; default 10Gi. */
  storage?: string;
  storageClassName?: string;
  /**
   * A Secret in the shoot's namespace whose keys are the sidecar's AWS environment (AWS_ACCESS_KEY_ID, ...);
   * none where the namespace's ServiceAccount gets its role otherwise (IRSA, Pod Identity).
   */
  credentialsSecret?: string;
}

export interface ControlPlaneObjectsOptions {
  shoot: ShootRef;
  namespace: string;
  seed: { name: string; zones: readonly string[] };
  failureTolerance?: 'node' | 'zone';
  /** Replicas per component, after the watchdog's hold (what the workloads get). */
  replicas: Record<ComponentName, number>;
  /** The workloads (with their PDBs) to render; default every component of the layout. */
  components?: readonly ComponentName[];
  /** Per component, the replicas the dependency watchdog remembered when it scaled it down. */
  remembered?: Partial<Record<ComponentName, number>>;
  backupBucket: string;
  /** The sidecar restores etcd from the bucket before it serves (the destination of a migration). */
  restore?: EtcdSpec['restore'];
  images: ImageVector;
  sidecar: PodSidecarSettings;
  /** What kube-apiserver and its controllers are started with (needed to render them). */
  kube?: KubeComponentsInput;
}

/** The inputs of the Kubernetes components' pods that are not in the layout. */
export interface KubeComponentsInput {
  /** etcd's client URLs as kube-apiserver reaches them. */
  etcdServers: readonly string[];
  apiDomain?: string;
  /** Of the files' Secret (`controlPlaneFilesSecret`): a change rolls the pods that mount it. */
  filesChecksum: string;
}

/** The Secret of the etcd sidecars' AWS environment, where the seed gives them one (`PodSidecarSettings.credentialsSecret`). */
export const BACKUP_CREDENTIALS_SECRET = 'backup-credentials';
/** The Secret the Kubernetes components' files are in, and where their pods mount it. */
export const CONTROL_PLANE_FILES_SECRET = 'kube-control-plane';
const FILES_DIR = '/srv/kubernetes/control-plane';
/** kube-apiserver's container port: a non-root process binds no port below 1024; the Service maps 443 to it. */
export const API_SERVER_PORT = 8443;
const FILES_CHECKSUM = 'checksum/kube-control-plane';

/**
 * Every object of one shoot's control plane on a seed, in apply order: the Services (the load-balancer
 * one for kube-apiserver), etcd's NetworkPolicy, then per component of the GEP-20 layout its workload
 * (replicas, affinity, topology spread from `controlPlaneLayout`, with real containers) and its PDB.
 * Pure: the same input gives the same objects.
 */
export function controlPlaneObjects(options: ControlPlaneObjectsOptions): KubernetesObject[] {
  const { shoot, namespace } = options;
  const layout = controlPlaneLayout(layoutInput(options));
  const common = {
    [MANAGED_BY]: FIELD_MANAGER,
    [SEED_LABEL]: options.seed.name,
    'gardener.cloud/shoot': shoot.technicalID,
  };
  const objects: KubernetesObject[] = [
    ...services(namespace, common),
    etcdNetworkPolicy(namespace, shoot.technicalID, common),
  ];
  for (const component of layout.components) {
    if (options.components && !options.components.includes(component.name)) continue;
    const workload = structuredClone(component.workload) as unknown as Workload;
    workload.metadata = { ...workload.metadata, namespace, labels: { ...workload.metadata.labels, ...common } };
    const remembered = options.remembered?.[component.name];
    if (remembered !== undefined) workload.metadata.annotations = { [REMEMBERED_REPLICAS]: String(remembered) };
    workload.spec.replicas = options.replicas[component.name];
    const template = workload.spec.template;
    template.metadata.labels = { ...template.metadata.labels, [ROLE_LABEL]: ROLE_OF[component.name] };
    if (options.kube && mountsFiles(component.name))
      template.metadata.annotations = {
        ...template.metadata.annotations,
        [FILES_CHECKSUM]: options.kube.filesChecksum,
      };
    template.spec = { ...template.spec, ...podSpec(component.name, options) };
    if (component.name === 'etcd') {
      workload.spec.podManagementPolicy = 'Parallel';
      workload.spec.volumeClaimTemplates = [etcdVolume(options.sidecar)];
    }
    const pdb = structuredClone(component.podDisruptionBudget) as KubernetesObject;
    pdb.metadata = { ...pdb.metadata, namespace, labels: { ...pdb.metadata!.labels, ...common } };
    objects.push(workload as unknown as KubernetesObject, pdb);
  }
  return objects;
}

/** The backup-restore sidecar's arguments in an etcd pod: the seed's flags, and the pod's fixed addresses. */
export function sidecarArgs(
  options: Pick<ControlPlaneObjectsOptions, 'shoot' | 'backupBucket' | 'restore' | 'sidecar'>,
): string[] {
  return serveArgv({
    ...seedServeFlags(options.sidecar, {
      shoot: options.shoot,
      bucket: options.backupBucket,
      ...(options.restore ? { restore: options.restore } : {}),
    }),
    dataDir: DATA_DIR,
    // Clients reach the public port through the etcd-client Service; the private port (the fence) is
    // closed to every other pod by the NetworkPolicy.
    host: '0.0.0.0',
    clientPort: ETCD_PORTS.client,
    peerPort: ETCD_PORTS.peer,
    privatePort: ETCD_PORTS.private,
    statusHost: '0.0.0.0',
    statusPort: ETCD_PORTS.status,
  });
}

interface Workload {
  metadata: { name: string; namespace: string; labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    replicas: number;
    podManagementPolicy?: string;
    volumeClaimTemplates?: unknown[];
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: Record<string, unknown>;
    };
  };
}

function layoutInput(options: ControlPlaneObjectsOptions): LayoutOptions {
  const { shoot } = options;
  // The layout reads only these fields of a Shoot and a Seed; the command carries no more.
  return {
    shoot: {
      metadata: { project: shoot.project, name: shoot.name },
      spec: {
        ...(options.failureTolerance
          ? { controlPlane: { highAvailability: { failureTolerance: { type: options.failureTolerance } } } }
          : {}),
      },
      status: { technicalID: shoot.technicalID },
    } as unknown as LayoutOptions['shoot'],
    seed: {
      metadata: { name: options.seed.name },
      spec: { provider: { zones: [...options.seed.zones] } },
    } as unknown as LayoutOptions['seed'],
  };
}

const restricted = {
  allowPrivilegeEscalation: false,
  runAsNonRoot: true,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

function podSpec(component: ComponentName, options: ControlPlaneObjectsOptions): Record<string, unknown> {
  const container = containerOf(component, options);
  const files = mountsFiles(component);
  return {
    containers: [
      {
        ...container,
        securityContext: restricted,
        ...(files ? { volumeMounts: [{ name: 'control-plane-files', mountPath: FILES_DIR, readOnly: true }] } : {}),
      },
    ],
    ...(files
      ? {
          volumes: [
            {
              name: 'control-plane-files',
              // Readable by the pod's group (fsGroup) only.
              secret: { secretName: CONTROL_PLANE_FILES_SECRET, defaultMode: 0o440 },
            },
          ],
        }
      : {}),
    automountServiceAccountToken: false,
    securityContext: { runAsNonRoot: true, runAsUser: 65532, fsGroup: 65532 },
    terminationGracePeriodSeconds: component === 'etcd' ? 60 : 30,
  };
}

/** The components that read the shoot's control-plane files: the Kubernetes ones, as on a local seed. */
function mountsFiles(component: ComponentName): boolean {
  return (KUBE_COMPONENTS as readonly ComponentName[]).includes(component);
}

/** The pods' files, by the same names as on a local seed. */
const POD_PATHS = controlPlanePaths(FILES_DIR);

/**
 * The Secret the Kubernetes components read their files from: what `controlPlaneFileContents` made,
 * without the agent's own access (which stays in the agent).
 */
export function controlPlaneFilesSecret(input: {
  namespace: string;
  labels: Record<string, string>;
  contents: Record<ControlPlaneFile, string>;
  annotations: Record<string, string>;
}): KubernetesObject {
  const data = Object.fromEntries(
    (Object.keys(CONTROL_PLANE_FILES) as ControlPlaneFile[])
      .filter((f) => f !== 'agentKubeconfig')
      .map((f) => [CONTROL_PLANE_FILES[f], Buffer.from(input.contents[f]).toString('base64')]),
  );
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: CONTROL_PLANE_FILES_SECRET,
      namespace: input.namespace,
      labels: input.labels,
      annotations: input.annotations,
    },
    type: 'Opaque',
    data,
  } as KubernetesObject;
}

function containerOf(component: ComponentName, options: ControlPlaneObjectsOptions): Record<string, unknown> {
  const image = options.images;
  const ns = options.namespace;
  const kube = options.kube ?? {
    etcdServers: [`http://etcd-client.${ns}.svc:${ETCD_PORTS.client}`],
    filesChecksum: '',
  };
  const probe = (path: string, port: number, scheme: 'HTTP' | 'HTTPS') => ({
    httpGet: { path, port, scheme },
    periodSeconds: 10,
    failureThreshold: 3,
  });
  // Readiness is asked every 2 s: a restore and a create wait for etcd's and kube-apiserver's Ready pods, and
  // a fenced etcd leaves its Service as soon as its sidecar says so; both answer from memory, cheaply.
  const readiness = (path: string, port: number, scheme: 'HTTP' | 'HTTPS') => ({
    ...probe(path, port, scheme),
    periodSeconds: 2,
  });
  const resources = (cpu: string, memory: string) => ({ requests: { cpu, memory } });
  const controllers = (c: ComponentName, securePort: number) => ({
    paths: POD_PATHS,
    securePort,
    // By the layout's replicas, not the current ones: a watchdog's hold at 0 must not leave two replicas
    // unelected when it ends.
    leaderElect: replicasFor(c, options.failureTolerance) > 1,
  });
  switch (component) {
    case 'etcd':
      return {
        name: SIDECAR_CONTAINER,
        image: image['etcd-backup-restore'],
        command: ['gardenless'],
        args: sidecarArgs(options),
        ports: [
          { name: 'client', containerPort: ETCD_PORTS.client },
          { name: 'peer', containerPort: ETCD_PORTS.peer },
          { name: 'status', containerPort: ETCD_PORTS.status },
        ],
        readinessProbe: readiness('/readyz', ETCD_PORTS.status, 'HTTP'),
        ...(options.sidecar.credentialsSecret
          ? { envFrom: [{ secretRef: { name: options.sidecar.credentialsSecret } }] }
          : {}),
        volumeMounts: [{ name: 'etcd-data', mountPath: '/var/etcd' }],
        resources: resources('300m', '1Gi'),
      };
    case 'kube-apiserver':
      return {
        name: 'kube-apiserver',
        image: image['kube-apiserver'],
        command: [
          'kube-apiserver',
          ...kubeApiServerFlags({
            paths: POD_PATHS,
            etcdServers: kube.etcdServers,
            bindAddress: '0.0.0.0',
            securePort: API_SERVER_PORT,
            ...(kube.apiDomain ? { apiDomain: kube.apiDomain } : {}),
          }),
        ],
        ports: [{ name: 'https', containerPort: API_SERVER_PORT }],
        readinessProbe: readiness('/readyz', API_SERVER_PORT, 'HTTPS'),
        livenessProbe: probe('/livez', API_SERVER_PORT, 'HTTPS'),
        resources: resources('500m', '1Gi'),
      };
    case 'kube-controller-manager':
      return controlLoop(
        'kube-controller-manager',
        image['kube-controller-manager'],
        ['kube-controller-manager', ...kubeControllerManagerFlags(controllers(component, 10257))],
        10257,
      );
    case 'kube-scheduler':
      return controlLoop(
        'kube-scheduler',
        image['kube-scheduler'],
        ['kube-scheduler', ...kubeSchedulerFlags(controllers(component, 10259))],
        10259,
      );
    case 'gardener-resource-manager':
      return controlLoop(
        'gardener-resource-manager',
        image['gardener-resource-manager'],
        ['/gardener-resource-manager', `--namespace=${ns}`],
        8081,
      );
    case 'machine-controller-manager':
      return controlLoop(
        'machine-controller-manager',
        image['machine-controller-manager'],
        ['./machine-controller-manager', `--namespace=${ns}`, '--leader-elect=true'],
        10258,
      );
    case 'cluster-autoscaler':
      return controlLoop(
        'cluster-autoscaler',
        image['cluster-autoscaler'],
        ['./cluster-autoscaler', '--cloud-provider=mcm', `--namespace=${ns}`, '--leader-elect=true'],
        8085,
      );
  }
  function controlLoop(name: string, ref: string, command: string[], port: number) {
    const https = name.startsWith('kube-');
    return {
      name,
      image: ref,
      command,
      ports: [{ name: 'metrics', containerPort: port }],
      livenessProbe: probe('/healthz', port, https ? 'HTTPS' : 'HTTP'),
      resources: resources('100m', '128Mi'),
    };
  }
}

function etcdVolume(sidecar: PodSidecarSettings): unknown {
  return {
    metadata: { name: 'etcd-data' },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: sidecar.storage ?? '10Gi' } },
      ...(sidecar.storageClassName ? { storageClassName: sidecar.storageClassName } : {}),
    },
  };
}

function services(namespace: string, labels: Record<string, string>): KubernetesObject[] {
  const selector = (app: ComponentName) => ({ app, 'gardener.cloud/shoot': labels['gardener.cloud/shoot']! });
  const service = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels },
    spec,
  });
  return [
    service('etcd-client', {
      type: 'ClusterIP',
      selector: selector('etcd'),
      ports: [{ name: 'client', port: ETCD_PORTS.client, targetPort: ETCD_PORTS.client }],
    }),
    // The peers find each other by pod DNS name (the StatefulSet's serviceName), before they are ready.
    service('etcd-peer', {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: selector('etcd'),
      ports: [{ name: 'peer', port: ETCD_PORTS.peer, targetPort: ETCD_PORTS.peer }],
    }),
    // The load balancer kubelets and the garden's external probe reach the kube-apiserver through.
    service('kube-apiserver', {
      type: 'LoadBalancer',
      selector: selector('kube-apiserver'),
      ports: [{ name: 'https', port: 443, targetPort: API_SERVER_PORT }],
    }),
  ];
}

/** Only kube-apiserver pods reach etcd's client port and only etcd pods its peer port; the private (fenced) port is closed to all. */
function etcdNetworkPolicy(namespace: string, technicalID: string, labels: Record<string, string>): KubernetesObject {
  const pods = (app: ComponentName) => ({ podSelector: { matchLabels: { app, 'gardener.cloud/shoot': technicalID } } });
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'etcd', namespace, labels },
    spec: {
      podSelector: { matchLabels: { app: 'etcd', 'gardener.cloud/shoot': technicalID } },
      policyTypes: ['Ingress'],
      ingress: [
        { from: [pods('kube-apiserver')], ports: [{ protocol: 'TCP', port: ETCD_PORTS.client }] },
        // The kubelet's readiness probe on the status port comes from the node, which policies do not filter.
        { from: [pods('etcd')], ports: [{ protocol: 'TCP', port: ETCD_PORTS.peer }] },
      ],
    },
  } as KubernetesObject;
}
