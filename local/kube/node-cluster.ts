import { KubernetesObjectApi, type KubernetesObject, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { signalProcess } from '../../seed/agent/process-group.js';
import { freePort } from '../../seed/ports.js';
import { PROJECT_ROOT } from '../emulator.js';
import { kubeconfigFor, writeClusterSecrets } from './certs.js';
import {
  cgroupHierarchies,
  cgroupMemory,
  cgroupPids,
  cgroupV1,
  createCgroup,
  killCgroupTree,
  removeCgroupTree,
} from './cgroups.js';
import { KubeCluster, type KubeClusterInfo } from './cluster.js';
import { SERVICE_CIDR, startApiServer, startControllers } from './control-plane.js';
import { buildTestImages, importImages, type TestImage, type TestImageName } from './images.js';
import { killNamespaceMembers, namespaceMembers, namespaceOf } from './namespaces.js';
import {
  containerdConfig,
  cniConfig,
  kubeletConfig,
  kubeProxyConfig,
  NODE_ADDRESS,
  NODE_NAME,
  NODE_PORTS,
  nodePaths,
} from './node-config.js';
import { httpsStatus, processStarter, waitFor, type StartedProcess, type StartProcess } from './processes.js';
import { ensureKubeTools, kubeTools, type KubeTools } from './tools.js';

const run = promisify(execFile);
const NAMESPACE_SCRIPT = join(PROJECT_ROOT, 'local', 'kube', 'node-namespace.sh');
const TSX = join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx');
const LOAD_BALANCERS_MAIN = join(PROJECT_ROOT, 'local', 'kube', 'load-balancers-main.ts');
/** The kubelet's cgroup root: gardenless-node-<owner pid>-<mount namespace inode> (what a sweep needs to find it all). */
const CGROUP_PREFIX = 'gardenless-node-';

export interface StartNodeClusterOptions {
  /** Everything goes here: PKI, etcd data, containerd's root, the kubelet's, one log per process. */
  dir: string;
  /** Where the cluster's description goes once it is ready (for `KubeCluster.attach`); default `<dir>/cluster.json`. */
  stateFile?: string;
  /** Kill the cluster when this process exits; default true. */
  tiedToProcess?: boolean;
  /**
   * The process whose end makes the cluster stale: a later start on this machine removes a stale
   * node's processes and cgroups (a run killed before its teardown). Default this process; 0: never.
   */
  ownerPid?: number;
  /** Images to import besides the pause image (built, or found, under .tools/images); later: `loadImages`. */
  images?: readonly TestImageName[];
  /** The node's `topology.kubernetes.io/zone`; default `zone-a`. */
  zone?: string;
  /**
   * The port the load balancers of its LoadBalancer Services listen on (the one every seed of the
   * landscape serves shoots' API on); default a free one.
   */
  loadBalancerPort?: number;
  /** Local PersistentVolumes of the default StorageClass (`gardenless-local`), 10Gi each; default 24. */
  volumes?: number;
  tools?: KubeTools;
  readyTimeoutMs?: number;
  log?: (line: string) => void;
}

/**
 * The test seed with a real node: etcd, kube-apiserver, kube-controller-manager and kube-scheduler,
 * containerd, the kubelet and kube-proxy, all in a network namespace of their own where the node has
 * the address 10.250.0.10, its pods a CNI bridge, and ClusterIP Services work (kube-proxy's iptables
 * rules are the namespace's). containerd, the kubelet and kube-proxy also share a mount namespace whose
 * /var and /run are overlays in `dir` and whose kernel tunables are files, so the host keeps its own.
 * The host reaches the API server at 127.0.0.1 (a forwarder); pods reach ports of the host through
 * `exposeHostPort`; Services of type LoadBalancer get an address on the host (local/kube/load-balancers.ts,
 * a process of the cluster). Every process it starts runs in that mount namespace (forwarders on the host's side
 * too) and every container in the kubelet's cgroup tree, which is how the stop finds them all; the
 * processes stay in the cgroups of whoever started the cluster.
 * Needs root and cgroup v1 (the cgroupfs driver), and `npm run setup` (containerd, runc, the CNI
 * plugins, iptables, socat; the kubelet's build).
 */
export async function startNodeCluster(options: StartNodeClusterOptions): Promise<KubeCluster> {
  preflight(options.dir);
  const log = options.log ?? (() => undefined);
  sweepStaleNodes(log);
  const tools = options.tools ?? kubeTools();
  await ensureKubeTools(tools, ['kubeApiServer', 'kubeControllerManager', 'kubeScheduler', 'kubelet', 'kubeProxy'], {
    log,
  });
  const images = buildTestImages({ which: ['pause', ...(options.images ?? [])], tools, log });
  // A build that fails before it is awaited must not be an unhandled rejection.
  images.catch(() => undefined);
  const dir = resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  const paths = nodePaths(join(dir, 'node'));
  mkdirSync(paths.cniConfDir, { recursive: true });
  const started = Date.now();
  const secrets = await writeClusterSecrets(dir, {
    addresses: [NODE_ADDRESS],
    node: { name: NODE_NAME, address: NODE_ADDRESS },
  });
  const node = secrets.node!;
  const caCertPem = readFileSync(secrets.caCert, 'utf8');
  const hostPort = await freePort();
  const server = `https://127.0.0.1:${hostPort}`;
  const inside = `https://${NODE_ADDRESS}:${NODE_PORTS.api}`;
  const kubeconfig = (name: string, token: string, at: string, user?: string) => {
    const file = join(dir, name);
    writeFileSync(file, kubeconfigFor({ server: at, caCertPem, token, ...(user ? { user } : {}) }), { mode: 0o600 });
    return file;
  };
  const kubeconfigPath = kubeconfig('kubeconfig', secrets.token, server);
  const info: KubeClusterInfo = {
    server,
    kubeconfigPath,
    token: secrets.token,
    dir,
    groups: [],
    zones: [options.zone ?? 'zone-a'],
    nodes: [NODE_NAME],
    startedAt: new Date().toISOString(),
    node: {
      name: NODE_NAME,
      address: NODE_ADDRESS,
      holderPid: 0,
      mountNamespace: '',
      cgroup: '',
      containerd: paths.containerdSocket,
      loadBalancerPort: options.loadBalancerPort ?? (await freePort()),
    },
  };
  const cluster = new KubeCluster(info);
  if (options.tiedToProcess !== false) process.once('exit', () => cluster.killNow());
  const timeout = options.readyTimeoutMs ?? 120_000;
  try {
    const holder = processStarter(dir, info.groups)('node-namespace', 'unshare', [
      '--net',
      '--mount',
      '--propagation',
      'private',
      '--',
      NAMESPACE_SCRIPT,
      paths.dir,
      NODE_ADDRESS,
      SERVICE_CIDR,
    ]);
    await waitFor('the node namespace', timeout, async () => existsSync(join(paths.dir, 'ready')), [holder]);
    const nodeInfo = info.node!;
    nodeInfo.holderPid = holder.child.pid!;
    nodeInfo.mountNamespace = namespaceOf(nodeInfo.holderPid, 'mnt')!;
    nodeInfo.cgroup = `${CGROUP_PREFIX}${options.ownerPid ?? process.pid}-${/\d+/.exec(nodeInfo.mountNamespace)![0]}`;
    createCgroup(nodeInfo.cgroup);
    const start = nodeStarters(dir, info);

    const { etcd, api } = startApiServer({
      dir,
      secrets,
      tools,
      start: start.inNode,
      etcd: { client: NODE_PORTS.etcd, peer: NODE_PORTS.etcdPeer },
      api: { bind: NODE_ADDRESS, port: NODE_PORTS.api, advertise: NODE_ADDRESS },
      node: true,
    });
    const apiForward = await startForward(start, info, {
      name: 'api',
      listen: { side: 'host', host: '127.0.0.1', port: hostPort },
      target: { host: NODE_ADDRESS, port: NODE_PORTS.api },
    });
    await waitFor(
      'kube-apiserver /readyz',
      timeout,
      async () => (await httpsStatus(`${server}/readyz`, secrets.token, Buffer.from(caCertPem))) === 200,
      [etcd, api, ...apiForward],
    );
    const { kcm, scheduler } = startControllers({
      secrets,
      tools,
      start: start.inNode,
      kubeconfigPath: kubeconfig('kubeconfig-node', secrets.token, inside),
    });

    writeFileSync(join(paths.cniConfDir, '10-gardenless.conflist'), JSON.stringify(cniConfig(paths), null, 2));
    const built = await images;
    writeFileSync(join(paths.dir, 'containerd.toml'), containerdConfig(paths, built.pause.ref));
    const containerd = start.inNode('containerd', 'containerd', ['--config', join(paths.dir, 'containerd.toml')]);
    await waitFor(
      'containerd',
      timeout,
      async () => run('ctr', ['--address', paths.containerdSocket, 'version']).then(() => true),
      [containerd],
    );
    // The sandbox image first; the others while the kubelet starts.
    await importImages(paths.containerdSocket, [built.pause]);
    const importStarted = Date.now();
    const others = Object.values(built).filter((i) => i.name !== 'pause');
    const importing = importImages(paths.containerdSocket, others).then(() =>
      log(
        `kube: ${others.map((i) => i.ref).join(', ') || 'no other images'} imported in ${Date.now() - importStarted} ms`,
      ),
    );
    importing.catch(() => undefined);

    writeFileSync(join(paths.dir, 'resolv.conf'), '');
    writeFileSync(
      join(paths.dir, 'kubelet.json'),
      JSON.stringify(
        kubeletConfig({
          paths,
          cgroupRoot: `/${nodeInfo.cgroup}`,
          caCert: secrets.caCert,
          servingCert: node.kubeletCert,
          servingKey: node.kubeletKey,
          resolvConf: join(paths.dir, 'resolv.conf'),
        }),
        null,
        2,
      ),
    );
    const kubelet = start.inNode('kubelet', tools.kubelet, [
      `--config=${join(paths.dir, 'kubelet.json')}`,
      `--kubeconfig=${kubeconfig('kubeconfig-kubelet', node.kubeletToken, inside, `system:node:${NODE_NAME}`)}`,
      `--hostname-override=${NODE_NAME}`,
      `--node-ip=${NODE_ADDRESS}`,
      `--node-labels=topology.kubernetes.io/zone=${info.zones[0]}`,
      `--root-dir=${join(paths.dir, 'kubelet')}`,
    ]);
    writeFileSync(
      join(paths.dir, 'kube-proxy.json'),
      JSON.stringify(kubeProxyConfig(kubeconfig('kubeconfig-kube-proxy', node.kubeProxyToken, inside, 'kube-proxy'))),
    );
    const kubeProxy = start.inNode('kube-proxy', tools.kubeProxy, [`--config=${join(paths.dir, 'kube-proxy.json')}`]);

    const objects = KubernetesObjectApi.makeApiClient(cluster.kubeConfig());
    const everything = [etcd, api, ...apiForward, kcm, scheduler, containerd, kubelet, kubeProxy];
    await waitFor(
      `node ${NODE_NAME} Ready`,
      timeout,
      async () => {
        const n = await objects.read<V1Node>({ apiVersion: 'v1', kind: 'Node', metadata: { name: NODE_NAME } });
        return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
      },
      everything,
    );
    // One pod through the whole chain: scheduled, its sandbox and container run by containerd, Ready.
    await waitFor('a pod Running and Ready', timeout, () => podReady(objects, built.pause), everything);
    await objects.delete({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'node-ready', namespace: 'default' } });
    await importing;
    for (const object of localVolumes(join(dir, 'volumes'), options.volumes ?? 24)) await objects.create(object);
    const stateFile = options.stateFile ?? join(dir, 'cluster.json');
    writeFileSync(stateFile, JSON.stringify(info, null, 2));
    // The load balancers outlive whichever process started the cluster; it stops them with the rest.
    start.besideNode('load-balancers', TSX, [LOAD_BALANCERS_MAIN, stateFile]);
    writeFileSync(stateFile, JSON.stringify(info, null, 2));
    log(`kube: test seed with a real node ready in ${Date.now() - started} ms at ${server} (logs in ${dir})`);
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

/** Imports more images into the node (built or found first; an image already there is kept). */
export async function loadImages(
  cluster: KubeCluster,
  names: readonly TestImageName[],
): Promise<Record<TestImageName, TestImage>> {
  const built = await buildTestImages({ which: names });
  await importImages(requireNode(cluster.info).containerd, Object.values(built));
  return built;
}

/**
 * Makes the host's 127.0.0.1:`port` reachable from the node's pods at `<node address>:<port>` (the
 * emulator, for a pod's AWS endpoint). Idempotent: a forward already running is kept.
 */
export async function exposeHostPort(cluster: KubeCluster, port: number): Promise<string> {
  const node = requireNode(cluster.info);
  const name = `expose-${port}`;
  const listen = `TCP-LISTEN:${port},bind=${node.address},`;
  const running = namespaceMembers('mnt', node.mountNamespace).some((pid) => commandLine(pid).includes(listen));
  if (!running) {
    await startForward(nodeStarters(cluster.info.dir, cluster.info), cluster.info, {
      name,
      listen: { side: 'node', host: node.address, port },
      target: { host: '127.0.0.1', port },
    });
  }
  return `${node.address}:${port}`;
}

/**
 * A forward from the host's `listen` into the node's network namespace to `target` (the test seed's
 * load balancers: local/kube/load-balancers.ts). Its processes stop with the node.
 */
export function nodeForward(
  cluster: KubeCluster,
  forward: { name: string; listen: { host: string; port: number }; target: { host: string; port: number } },
): Promise<StartedProcess[]> {
  return startForward(nodeStarters(cluster.info.dir, cluster.info), cluster.info, {
    ...forward,
    listen: { side: 'host', ...forward.listen },
  });
}

/**
 * What the node's parts hold in memory, in bytes: each process it started (resident set, by process
 * group; containerd's shims, which leave containerd's group, as `containerd-shim`), and each pod (its
 * cgroup's `total_rss`: the containers' anonymous memory; page cache not counted), by pod UID.
 */
export function nodeMemory(info: KubeClusterInfo): { processes: Record<string, number>; pods: Record<string, number> } {
  const node = requireNode(info);
  const byGroup = new Map(info.groups.map((g) => [g.pgid, g.name]));
  const processes: Record<string, number> = {};
  for (const pid of namespaceMembers('mnt', node.mountNamespace)) {
    const status = procStatus(pid);
    const name = byGroup.get(status.pgid) ?? status.comm;
    processes[name] = (processes[name] ?? 0) + status.rss;
  }
  const pods: Record<string, number> = {};
  for (const qos of ['kubepods', 'kubepods/burstable', 'kubepods/besteffort']) {
    for (const name of cgroupChildren(`${node.cgroup}/${qos}`).filter((n) => n.startsWith('pod')))
      pods[name.slice('pod'.length)] = cgroupMemory(`${node.cgroup}/${qos}/${name}`)?.rss ?? 0;
  }
  return { processes, pods };
}

/**
 * Stops the whole node as a machine that hangs: every process of the cluster (its control plane,
 * containerd, the kubelet, kube-proxy, its load balancers and forwards) and every container, by SIGSTOP,
 * again until no new one appears (containerd may start one meanwhile). Returns them for `thawNode`.
 */
export function freezeNode(cluster: KubeCluster): number[] {
  const node = requireNode(cluster.info);
  const frozen = new Set<number>();
  for (;;) {
    const fresh = [...namespaceMembers('mnt', node.mountNamespace), ...cgroupPids(node.cgroup)].filter(
      (pid) => !frozen.has(pid),
    );
    if (fresh.length === 0) return [...frozen];
    for (const pid of fresh) {
      frozen.add(pid);
      signalProcess(pid, 'SIGSTOP');
    }
  }
}

/** Resumes what `freezeNode` stopped. */
export function thawNode(pids: readonly number[]): void {
  for (const pid of pids) signalProcess(pid, 'SIGCONT');
}

function requireNode(info: KubeClusterInfo) {
  if (!info.node) throw new Error(`the cluster in ${info.dir} has no real node (it is kwok's)`);
  return info.node;
}

interface Starters {
  /** In the node's network and mount namespaces (its control plane, containerd, the kubelet, kube-proxy). */
  inNode: StartProcess;
  /** In the node's mount namespace and the host's network namespace (the host's side of a forward). */
  besideNode: StartProcess;
}

function nodeStarters(dir: string, info: KubeClusterInfo): Starters {
  const pid = requireNode(info).holderPid;
  const starter = (namespaces: string[]) =>
    processStarter(dir, info.groups, (_name, command, args) => ({
      command: 'nsenter',
      args: [`--target=${pid}`, ...namespaces, '--', command, ...args],
    }));
  return { inNode: starter(['--net', '--mount']), besideNode: starter(['--mount']) };
}

/**
 * A TCP forward between the host's and the node's network namespaces: a socat listening on `listen`
 * (in the host's namespace or the node's) passes each connection through a unix socket in the node's
 * directory (the file system is common to both) to a socat in the other namespace that connects to
 * `target`. Returns when both listen.
 */
async function startForward(
  starters: Starters,
  info: KubeClusterInfo,
  forward: {
    name: string;
    listen: { side: 'host' | 'node'; host: string; port: number };
    target: { host: string; port: number };
  },
): Promise<StartedProcess[]> {
  const [listenSide, targetSide] =
    forward.listen.side === 'host' ? [starters.besideNode, starters.inNode] : [starters.inNode, starters.besideNode];
  const socket = join(info.dir, 'node', `${forward.name}.sock`);
  const targetEnd = targetSide(`${forward.name}-${forward.listen.side === 'host' ? 'node' : 'host'}`, 'socat', [
    '-d',
    '-d',
    `UNIX-LISTEN:${socket},fork,unlink-early`,
    `TCP:${forward.target.host}:${forward.target.port}`,
  ]);
  await waitFor(`the forward ${forward.name} (unix side)`, 30_000, async () => listening(targetEnd), [targetEnd]);
  const listenEnd = listenSide(`${forward.name}-${forward.listen.side}`, 'socat', [
    '-d',
    '-d',
    `TCP-LISTEN:${forward.listen.port},bind=${forward.listen.host},fork,reuseaddr`,
    `UNIX-CONNECT:${socket}`,
  ]);
  await waitFor(`the forward ${forward.name} (TCP side)`, 30_000, async () => listening(listenEnd), [listenEnd]);
  return [targetEnd, listenEnd];
}

/** socat -d -d says "listening on" once its socket is bound. */
function listening(p: StartedProcess): boolean {
  return existsSync(p.logFile) && readFileSync(p.logFile, 'utf8').includes('listening on');
}

async function podReady(objects: KubernetesObjectApi, pause: TestImage): Promise<boolean> {
  const ref = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'node-ready', namespace: 'default' } };
  const pod = await objects.read<V1Pod>(ref).catch(async (error: unknown) => {
    if ((error as { code?: number }).code !== 404) throw error;
    return objects.create<V1Pod>({
      ...ref,
      spec: {
        containers: [{ name: 'pause', image: pause.ref, imagePullPolicy: 'Never' }],
        automountServiceAccountToken: false,
        terminationGracePeriodSeconds: 0,
      },
    } as V1Pod);
  });
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/**
 * The node's storage: `count` local volumes (directories of the node, which the kubelet gives to a pod's
 * fsGroup as a real disk's would be) of the default StorageClass, bound when a pod first uses its claim
 * (kube-controller-manager's binder). A released one is not reused (Retain): a test run needs few.
 */
function localVolumes(dir: string, count: number): KubernetesObject[] {
  const storageClass = {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'gardenless-local', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'kubernetes.io/no-provisioner',
    reclaimPolicy: 'Retain',
    volumeBindingMode: 'WaitForFirstConsumer',
  };
  const volumes = Array.from({ length: count }, (_, i) => {
    const path = join(dir, `pv-${i}`);
    mkdirSync(path, { recursive: true });
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: `local-${i}` },
      spec: {
        capacity: { storage: '10Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: 'gardenless-local',
        local: { path },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE_NAME] }] },
            ],
          },
        },
      },
    };
  });
  return [storageClass, ...volumes] as KubernetesObject[];
}

function preflight(dir: string): void {
  const problems: string[] = [];
  if (process.getuid?.() !== 0) problems.push('it runs as root (namespaces, mounts, cgroups)');
  if (!cgroupV1()) problems.push("cgroup v1 (the kubelet's cgroupfs driver; on cgroup v2 this harness is untested)");
  for (const command of ['containerd', 'runc', 'ctr', 'socat', 'iptables', 'unshare', 'nsenter', 'ip']) {
    try {
      execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    } catch {
      problems.push(`${command} (npm run setup installs it)`);
    }
  }
  if (!existsSync('/usr/lib/cni/bridge'))
    problems.push('the CNI plugins in /usr/lib/cni (npm run setup installs them)');
  const absolute = resolve(dir);
  if (/^\/(var|run)(\/|$)/.test(absolute))
    problems.push(`a directory outside /var and /run (the node overlays them), not ${absolute}`);
  if (problems.length > 0) throw new Error(`the test seed's real node needs ${problems.join('; ')}`);
}

/** Nodes whose owner process is gone (a run killed before its teardown): their processes and cgroups go. */
function sweepStaleNodes(log: (line: string) => void): void {
  removeNodes((owner) => owner !== 0 && !processAlive(owner), log);
}

/**
 * Removes every node `owner` started that is still there (a test run's teardown: a worker that died
 * while it started one left no state file to stop it by).
 */
export function removeNodesOwnedBy(owner: number, log: (line: string) => void = () => undefined): void {
  removeNodes((o) => o === owner, log);
}

function removeNodes(which: (owner: number) => boolean, log: (line: string) => void): void {
  const [mount] = cgroupHierarchies();
  if (!mount) return;
  for (const name of readdirSync(mount)) {
    const match = new RegExp(`^${CGROUP_PREFIX}(\\d+)-(\\d+)$`).exec(name);
    if (!match || !which(Number(match[1]))) continue;
    log(`kube: removing the test node ${name} (owner process ${match[1]})`);
    killCgroupTree(name);
    killNamespaceMembers('mnt', `mnt:[${match[2]}]`);
    killCgroupTree(name);
    removeCgroupTree(name);
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function cgroupChildren(path: string): string[] {
  const mount = cgroupHierarchies().find((m) => existsSync(join(m, 'memory.stat'))) ?? cgroupHierarchies()[0];
  const dir = join(mount!, path);
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
}

function procStatus(pid: number): { comm: string; pgid: number; rss: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm is in parentheses and may hold spaces; the fields after it are space-separated (pgrp is the 3rd).
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return { comm: stat.slice(stat.indexOf('(') + 1, close), pgid: Number(fields[2]), rss: kb ? Number(kb) * 1024 : 0 };
  } catch {
    // It exited meanwhile.
    return { comm: '(gone)', pgid: 0, rss: 0 };
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    // It exited meanwhile.
    return '';
  }
}
