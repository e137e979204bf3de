import { join } from 'node:path';

/**
 * The configuration files of the test seed's real node (local/kube/node-cluster.ts): containerd, its
 * CNI network, the kubelet and kube-proxy. Every path is under the node's own directory, so that nothing
 * of the host's is used or written (what the programs write elsewhere lands in the node's overlays).
 */

/** The node's name; inside its network namespace it resolves to the kubelet (127.0.0.1). */
export const NODE_NAME = 'localhost';
/** The node's address inside its network namespace (the kubelet refuses a loopback one). */
export const NODE_ADDRESS = '10.250.0.10';
/** The pods' addresses (the CNI bridge's), within the cluster's pod range. */
export const POD_CIDR = '10.244.0.0/24';
export const CLUSTER_CIDR = '10.244.0.0/16';
/** Ports inside the node's network namespace, which is the node's alone. */
export const NODE_PORTS = { etcd: 2379, etcdPeer: 2380, api: 6443, kubelet: 10250 } as const;

export interface NodePaths {
  dir: string;
  containerdSocket: string;
  cniConfDir: string;
}

export function nodePaths(dir: string): NodePaths {
  return {
    dir,
    containerdSocket: join(dir, 'containerd.sock'),
    cniConfDir: join(dir, 'cni', 'net.d'),
  };
}

/**
 * containerd with its own root, state and sockets, the CRI plugin with the cgroupfs driver (cgroup v1
 * without systemd), the sandbox image built here, and `restrict_oom_score_adj`: without
 * CAP_SYS_RESOURCE (dropped in this sandbox) every sandbox fails to lower its oom_score_adj otherwise.
 */
export function containerdConfig(paths: NodePaths, sandboxImage: string): string {
  const q = JSON.stringify;
  return `version = 2
root = ${q(join(paths.dir, 'containerd', 'root'))}
state = ${q(join(paths.dir, 'containerd', 'state'))}
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = ${q(paths.containerdSocket)}

[ttrpc]
  address = ${q(join(paths.dir, 'containerd.ttrpc.sock'))}

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(join(paths.dir, 'containerd', 'opt'))}

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${q(sandboxImage)}
  restrict_oom_score_adj = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = ${q(paths.cniConfDir)}
`;
}

/**
 * One bridge for the pods, with the node as their gateway (the bridge plugin turns on ip_forward in the
 * node's network namespace, not the host's); no masquerade: nothing leaves the namespace.
 */
export function cniConfig(paths: NodePaths): object {
  return {
    cniVersion: '1.0.0',
    name: 'gardenless',
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: POD_CIDR }]],
          routes: [{ dst: '0.0.0.0/0' }],
          dataDir: join(paths.dir, 'cni', 'ipam'),
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  };
}

export interface KubeletConfigOptions {
  paths: NodePaths;
  /** The kubelet's cgroup root: the node's cgroup (its pods go below it). */
  cgroupRoot: string;
  caCert: string;
  servingCert: string;
  servingKey: string;
  /** Empty: pods get no name servers (nothing outside the node answers). */
  resolvConf: string;
}

export function kubeletConfig(o: KubeletConfigOptions): object {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: '0.0.0.0',
    port: NODE_PORTS.kubelet,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    tlsCertFile: o.servingCert,
    tlsPrivateKeyFile: o.servingKey,
    // As a real node's: the API server authenticates with its client certificate, every request is
    // authorized by a SubjectAccessReview.
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: o.caCert } },
    authorization: { mode: 'Webhook' },
    cgroupDriver: 'cgroupfs',
    cgroupRoot: o.cgroupRoot,
    cgroupsPerQOS: true,
    containerRuntimeEndpoint: `unix://${o.paths.containerdSocket}`,
    failSwapOn: false,
    resolvConf: o.resolvConf,
    clusterDomain: 'cluster.local',
    // A shared development disk: evict only when it is really full, never collect the imported images
    // (nothing could pull them again).
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '1%',
      'imagefs.available': '1%',
      'nodefs.inodesFree': '1%',
    },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    // The kubelet cannot lower its own oom_score_adj without CAP_SYS_RESOURCE.
    oomScoreAdj: 0,
    serializeImagePulls: false,
    // It sets its kernel tunables; the node's mount namespace has files of its own in their place.
    protectKernelDefaults: false,
  };
}

export function kubeProxyConfig(kubeconfig: string): object {
  return {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig },
    hostnameOverride: NODE_NAME,
    mode: 'iptables',
    clusterCIDR: CLUSTER_CIDR,
    // No conntrack table sizes or timeouts: those are the host kernel's, not the namespace's.
    conntrack: { maxPerCore: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    oomScoreAdj: 0,
    metricsBindAddress: '127.0.0.1:10249',
    healthzBindAddress: '127.0.0.1:10256',
  };
}
