import { KubeConfig, KubernetesObjectApi, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processGroupAlive, signalProcessGroup } from '../../seed/agent/process-group.js';
import { freePort } from '../../seed/ports.js';
import { kubeconfigFor, writeClusterSecrets } from './certs.js';
import { removeCgroupTree, killCgroupTree } from './cgroups.js';
import { killNamespaceMembers } from './namespaces.js';
import { startApiServer, startControllers } from './control-plane.js';
import { httpsStatus, processStarter, sleep, tail, waitFor } from './processes.js';
import { ensureKubeTools, kubeTools, type KubeTools } from './tools.js';

/** What a started test seed cluster is, as written to its state file (so another process can use or stop it). */
export interface KubeClusterInfo {
  server: string;
  kubeconfigPath: string;
  token: string;
  /** Logs and data of every process. */
  dir: string;
  /** Process group ids, in start order (etcd first). */
  groups: { name: string; pgid: number }[];
  zones: string[];
  nodes: string[];
  startedAt: string;
  /** A real node (local/kube/node-cluster.ts): what its stop must take down beyond the process groups. */
  node?: RealNodeInfo;
}

export interface RealNodeInfo {
  name: string;
  /** The node's address inside its network namespace: pods reach the host's forwarded ports here. */
  address: string;
  /** The first process of the node's network and mount namespaces. */
  holderPid: number;
  /** The node's mount namespace (`mnt:[inode]`): every process the cluster starts runs in it, only containers do not. */
  mountNamespace: string;
  /** The kubelet's cgroup root (in every hierarchy): every container is below it. */
  cgroup: string;
  /** containerd's socket (`ctr --address`). */
  containerd: string;
  /** The port its load balancers listen on, each on an address of its own (local/kube/load-balancers.ts). */
  loadBalancerPort: number;
}

export interface StartKubeClusterOptions {
  /** Everything goes here: PKI, etcd data, kubeconfig, one log per process. */
  dir: string;
  /** Fake nodes per zone (kwok); default 3 (a `node` control plane pins three etcd members into one zone). */
  nodesPerZone?: number;
  zones?: string[];
  /** Where the cluster's description goes once it is ready (for `KubeCluster.attach`); default `<dir>/cluster.json`. */
  stateFile?: string;
  /** Kill the processes when this process exits (the landscape's and a test file's own cluster); default true. */
  tiedToProcess?: boolean;
  tools?: KubeTools;
  readyTimeoutMs?: number;
  log?: (line: string) => void;
}

/**
 * The test seed (envtest's idea, plus kwok): etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler and kwok on 127.0.0.1, each in its own process group, with a generated PKI and a
 * static admin token. kwok's fake nodes (spread over zones) run no containers but make pods Running and
 * Ready, so Deployments and StatefulSets roll out as on a real seed.
 */
export async function startKubeCluster(options: StartKubeClusterOptions): Promise<KubeCluster> {
  const tools = options.tools ?? kubeTools();
  await ensureKubeTools(tools, ['kubeApiServer', 'kubeControllerManager', 'kubeScheduler', 'kwok', 'kwokStages'], {
    ...(options.log ? { log: options.log } : {}),
  });
  const log = options.log ?? (() => undefined);
  const dir = options.dir;
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  const secrets = await writeClusterSecrets(dir);
  const ports = { etcd: await freePort(), etcdPeer: await freePort(), api: await freePort(), kwok: await freePort() };
  const server = `https://127.0.0.1:${ports.api}`;
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfigPath,
    kubeconfigFor({ server, caCertPem: readFileSync(secrets.caCert, 'utf8'), token: secrets.token }),
    { mode: 0o600 },
  );
  const zones = options.zones ?? ['zone-a', 'zone-b', 'zone-c'];
  const info: KubeClusterInfo = {
    server,
    kubeconfigPath,
    token: secrets.token,
    dir,
    groups: [],
    zones,
    nodes: [],
    startedAt: new Date().toISOString(),
  };
  const cluster = new KubeCluster(info);
  if (options.tiedToProcess !== false) process.once('exit', () => cluster.killNow());
  const start = processStarter(dir, info.groups);
  try {
    const { etcd, api } = startApiServer({
      dir,
      secrets,
      tools,
      start,
      etcd: { client: ports.etcd, peer: ports.etcdPeer },
      api: { bind: '127.0.0.1', port: ports.api, advertise: '127.0.0.1' },
    });
    await waitFor(
      'kube-apiserver /readyz',
      options.readyTimeoutMs ?? 60_000,
      async () => (await httpsStatus(`${server}/readyz`, secrets.token, readFileSync(secrets.caCert))) === 200,
      [etcd, api],
    );
    const { kcm, scheduler } = startControllers({ secrets, tools, start, kubeconfigPath });
    const kwokConfig = join(dir, 'kwok.yaml');
    writeFileSync(kwokConfig, kwokConfiguration(tools.kwokStages));
    const kwok = start('kwok', tools.kwok, [
      `--kubeconfig=${kubeconfigPath}`,
      `--config=${kwokConfig}`,
      '--manage-all-nodes=false',
      '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      '--cidr=10.244.0.1/16',
      '--node-ip=10.0.0.1',
      '--node-lease-duration-seconds=40',
      `--server-address=127.0.0.1:${ports.kwok}`,
    ]);
    const objects = KubernetesObjectApi.makeApiClient(cluster.kubeConfig());
    await objects.create({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'kwok-volume', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'kwok.x-k8s.io/volume',
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    } as KubernetesObject);
    const perZone = options.nodesPerZone ?? 3;
    for (const zone of zones) {
      for (let i = 0; i < perZone; i++) {
        const name = `kwok-${zone}-${i}`;
        await objects.create(fakeNode(name, zone));
        info.nodes.push(name);
      }
    }
    await waitFor(
      'kwok nodes Ready',
      options.readyTimeoutMs ?? 60_000,
      async () => {
        const nodes = await objects.list<
          KubernetesObject & { status?: { conditions?: { type: string; status: string }[] } }
        >('v1', 'Node');
        return (
          nodes.items.length === info.nodes.length &&
          nodes.items.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        );
      },
      [kwok],
    );
    // One pod through the whole chain: the scheduler places it, kwok runs it (kube-controller-manager's
    // service-account controller made the default ServiceAccount it needs).
    await waitFor(
      'a pod scheduled and Ready',
      options.readyTimeoutMs ?? 60_000,
      async () => {
        const pod = await objects
          .read<V1Pod>({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'cluster-ready', namespace: 'default' } })
          .catch(async (error: unknown) => {
            if ((error as { code?: number }).code !== 404) throw error;
            return objects.create<V1Pod>({
              apiVersion: 'v1',
              kind: 'Pod',
              metadata: { name: 'cluster-ready', namespace: 'default' },
              spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }] },
            } as V1Pod);
          });
        return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
      },
      [kcm, scheduler, kwok],
    );
    await objects.delete({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'cluster-ready', namespace: 'default' } });
    writeFileSync(options.stateFile ?? join(dir, 'cluster.json'), JSON.stringify(info, null, 2));
    log(
      `kube: test seed ready in ${Date.now() - started} ms at ${server} (${info.nodes.length} kwok nodes in ${zones.join(', ')}; logs in ${dir})`,
    );
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

/** A started cluster; `KubeCluster.attach` takes one that another process started (its state file). */
export class KubeCluster {
  constructor(readonly info: KubeClusterInfo) {}

  static attach(stateFile: string): KubeCluster {
    return new KubeCluster(JSON.parse(readFileSync(stateFile, 'utf8')) as KubeClusterInfo);
  }

  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromFile(this.info.kubeconfigPath);
    return kc;
  }

  /** Whether the API server answers /readyz. */
  async ready(): Promise<boolean> {
    const ca = readFileSync(join(this.info.dir, 'ca.crt'));
    return (await httpsStatus(`${this.info.server}/readyz`, this.info.token, ca).catch(() => 0)) === 200;
  }

  /** SIGTERM to every group, newest first, SIGKILL to what is left after `timeoutMs`. */
  async stop(options: { timeoutMs?: number } = {}): Promise<void> {
    for (const { pgid } of [...this.info.groups].reverse()) signalProcessGroup(pgid, 'SIGTERM');
    const deadline = Date.now() + (options.timeoutMs ?? 10_000);
    while (Date.now() < deadline && this.info.groups.some((g) => processGroupAlive(g.pgid))) await sleep(100);
    this.killNow();
  }

  /**
   * SIGKILL to every group; on a real node also to every container (its cgroup tree) and every process
   * left in its mount namespace (containerd's shims, forwarders started by another process), whose end
   * closes its namespaces with their mounts and interfaces; then the cgroups go. Synchronous: it also
   * runs at this process's exit.
   */
  killNow(): void {
    for (const { pgid } of this.info.groups) signalProcessGroup(pgid, 'SIGKILL');
    const node = this.info.node;
    if (node) {
      // Containers first, while their shims still reap them.
      if (node.cgroup) killCgroupTree(node.cgroup);
      if (node.mountNamespace) killNamespaceMembers('mnt', node.mountNamespace);
      if (node.cgroup) {
        killCgroupTree(node.cgroup);
        removeCgroupTree(node.cgroup);
      }
    }
  }

  /** The last lines of every process log, for a failing test's message. */
  logs(lines = 20): string {
    return readdirSync(this.info.dir)
      .filter((f) => f.endsWith('.log'))
      .map((f) => `--- ${f} ---\n${tail(join(this.info.dir, f), lines)}`)
      .join('\n');
  }
}

function kwokConfiguration(stagesDir: string): string {
  // kwok plays stages and renews node leases only with parallelisms above 0; the stage files come from its own module.
  const config = [
    'apiVersion: config.kwok.x-k8s.io/v1alpha1',
    'kind: KwokConfiguration',
    'options:',
    '  podPlayStageParallelism: 8',
    '  nodePlayStageParallelism: 4',
    '  nodeLeaseParallelism: 4',
  ].join('\n');
  const stages = ['node/fast', 'node/heartbeat-with-lease', 'pod/fast', 'volume/fast'].flatMap((set) =>
    readdirSync(join(stagesDir, set))
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => readFileSync(join(stagesDir, set, f), 'utf8'))
      // The storage class is created through the API; only Stage documents go into kwok's configuration.
      .filter((text) => /^kind: Stage$/m.test(text)),
  );
  return [config, ...stages].join('\n---\n');
}

function fakeNode(name: string, zone: string): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'topology.kubernetes.io/zone': zone,
        type: 'kwok',
      },
    },
  };
}
