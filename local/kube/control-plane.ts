import { join } from 'node:path';
import type { ClusterSecrets } from './certs.js';
import type { StartedProcess, StartProcess } from './processes.js';
import type { KubeTools } from './tools.js';

/** The test seed's service range; 10.96.0.1 is the `kubernetes` Service (in the serving certificate). */
export const SERVICE_CIDR = '10.96.0.0/16';

export interface ApiServerOptions {
  dir: string;
  secrets: ClusterSecrets;
  tools: KubeTools;
  start: StartProcess;
  /** etcd's client and peer ports on 127.0.0.1. */
  etcd: { client: number; peer: number };
  /** Where kube-apiserver listens and what it advertises (the `kubernetes` Service's endpoint). */
  api: { bind: string; port: number; advertise: string };
  /**
   * A real node: the API server reaches its kubelet (logs, exec) by the node's name first, with the
   * client certificate of `secrets.node`, verifying its serving certificate; the Node authorizer admits
   * the kubelet; the `kubernetes` Service gets the advertised address as its endpoint (pods reach the
   * API server through it). Without: kwok's nodes, no kubelet to reach, no endpoint needed.
   */
  node?: boolean;
}

/** etcd and kube-apiserver of a test seed cluster (envtest's pair); the caller waits for /readyz. */
export function startApiServer(options: ApiServerOptions): { etcd: StartedProcess; api: StartedProcess } {
  const { secrets, etcd: ports, api: at } = options;
  const node = options.node ? secrets.node : undefined;
  if (options.node && !node) throw new Error('a real node needs the node secrets (writeClusterSecrets with `node`)');
  const etcd = options.start('etcd', 'etcd', [
    '--name',
    'kube',
    '--data-dir',
    join(options.dir, 'etcd-data'),
    '--listen-client-urls',
    `http://127.0.0.1:${ports.client}`,
    '--advertise-client-urls',
    `http://127.0.0.1:${ports.client}`,
    '--listen-peer-urls',
    `http://127.0.0.1:${ports.peer}`,
    '--initial-advertise-peer-urls',
    `http://127.0.0.1:${ports.peer}`,
    '--initial-cluster',
    `kube=http://127.0.0.1:${ports.peer}`,
    '--quota-backend-bytes',
    String(2 * 1024 ** 3),
  ]);
  const api = options.start('kube-apiserver', options.tools.kubeApiServer, [
    `--etcd-servers=http://127.0.0.1:${ports.client}`,
    `--bind-address=${at.bind}`,
    `--secure-port=${at.port}`,
    `--advertise-address=${at.advertise}`,
    `--tls-cert-file=${secrets.servingCert}`,
    `--tls-private-key-file=${secrets.servingKey}`,
    `--client-ca-file=${secrets.caCert}`,
    `--token-auth-file=${secrets.tokenFile}`,
    `--encryption-provider-config=${secrets.encryptionConfig}`,
    `--authorization-mode=${node ? 'Node,RBAC' : 'RBAC'}`,
    '--anonymous-auth=false',
    '--service-account-issuer=https://kubernetes.default.svc',
    `--service-account-key-file=${secrets.serviceAccountPub}`,
    `--service-account-signing-key-file=${secrets.serviceAccountKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    // Two cores shared with everything else: no fairness queues, no profiling endpoints.
    '--enable-priority-and-fairness=false',
    '--profiling=false',
    ...(node
      ? [
          `--kubelet-client-certificate=${node.kubeletClientCert}`,
          `--kubelet-client-key=${node.kubeletClientKey}`,
          `--kubelet-certificate-authority=${secrets.caCert}`,
          // The node is named `localhost` (its kubelet's address inside the node's network namespace).
          '--kubelet-preferred-address-types=Hostname,InternalIP',
        ]
      : ['--endpoint-reconciler-type=none']),
  ]);
  return { etcd, api };
}

/** kube-controller-manager (every default controller) and kube-scheduler, with the admin kubeconfig. */
export function startControllers(options: {
  secrets: ClusterSecrets;
  tools: KubeTools;
  start: StartProcess;
  kubeconfigPath: string;
}): { kcm: StartedProcess; scheduler: StartedProcess } {
  const common = [`--kubeconfig=${options.kubeconfigPath}`, '--leader-elect=false', '--secure-port=0'];
  const kcm = options.start('kube-controller-manager', options.tools.kubeControllerManager, [
    ...common,
    `--service-account-private-key-file=${options.secrets.serviceAccountKey}`,
    `--root-ca-file=${options.secrets.caCert}`,
    // Every default controller, node-lifecycle included (kwok's nodes renew their leases, as kubelets do).
    '--controllers=*',
    '--concurrent-deployment-syncs=10',
    '--concurrent-statefulset-syncs=10',
    '--concurrent-replicaset-syncs=10',
  ]);
  const scheduler = options.start('kube-scheduler', options.tools.kubeScheduler, common);
  return { kcm, scheduler };
}
