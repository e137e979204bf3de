import { SERVICE_CIDR, type ControlPlanePaths } from './control-plane-files.js';

/**
 * The command lines of a shoot's kube-apiserver, kube-controller-manager and kube-scheduler, for every
 * hosting: a local seed runs them as processes reading files in the plane's directory, a Kubernetes seed as
 * containers reading a Secret volume. What differs between the two is an input here, never a second list.
 */
/** The components these command lines are for: a local seed runs them as processes, the others stay modelled. */
export const KUBE_COMPONENTS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;
export type KubeComponent = (typeof KUBE_COMPONENTS)[number];

export interface ApiServerFlagsInput {
  paths: ControlPlanePaths;
  etcdServers: readonly string[];
  bindAddress: string;
  securePort: number;
  /** The shoot's API domain: the ServiceAccount issuer and the external host name. */
  apiDomain?: string;
}

export function kubeApiServerFlags(input: ApiServerFlagsInput): string[] {
  const f = input.paths;
  const issuer = input.apiDomain ? `https://${input.apiDomain}` : 'https://kubernetes.default.svc';
  return [
    // First: the argument a stale process of this plane is recognised by (SupervisedLaunch.pidFile).
    `--tls-cert-file=${f.apiServerCert}`,
    `--etcd-servers=${input.etcdServers.join(',')}`,
    `--bind-address=${input.bindAddress}`,
    `--secure-port=${input.securePort}`,
    `--tls-private-key-file=${f.apiServerKey}`,
    `--client-ca-file=${f.clientCA}`,
    // Stable across seeds: a token issued on one validates on the next.
    `--service-account-issuer=${issuer}`,
    `--service-account-key-file=${f.serviceAccountPub}`,
    `--service-account-signing-key-file=${f.serviceAccountKey}`,
    `--encryption-provider-config=${f.encryptionConfig}`,
    '--authorization-mode=Node,RBAC',
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--allow-privileged=true',
    '--profiling=false',
    // It serves from the seed, behind the load balancer: no pod address for the `kubernetes` Service to
    // name, and no Endpoints write at shutdown, which on a fenced plane would wait on an etcd that is gone.
    '--endpoint-reconciler-type=none',
    ...(input.apiDomain ? [`--external-hostname=${input.apiDomain}`] : []),
  ];
}

export interface ControllerFlagsInput {
  paths: ControlPlanePaths;
  /** Its health port; 0: none (a supervised process's health is the process). */
  securePort: number;
  /**
   * Whether replicas elect a leader through the shoot's kube-apiserver. Not for one replica: the shoot's
   * etcd fence keeps a source's copy from writing, so a move has no lease to wait out.
   */
  leaderElect: boolean;
}

export function kubeControllerManagerFlags(input: ControllerFlagsInput): string[] {
  const f = input.paths;
  return [
    `--kubeconfig=${f.controllerManagerKubeconfig}`,
    ...controllerCommon(input),
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${f.serviceAccountKey}`,
    `--root-ca-file=${f.clusterCA}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
  ];
}

export function kubeSchedulerFlags(input: ControllerFlagsInput): string[] {
  return [`--kubeconfig=${input.paths.schedulerKubeconfig}`, ...controllerCommon(input)];
}

function controllerCommon(input: ControllerFlagsInput): string[] {
  return [
    // Its /healthz is always allowed: the kubelet's probe needs no delegated authentication.
    `--secure-port=${input.securePort}`,
    `--leader-elect=${input.leaderElect}`,
    '--profiling=false',
  ];
}
