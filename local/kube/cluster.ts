import { KubeConfig, KubernetesObjectApi, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { processGroupAlive, signalProcessGroup } from '../../seed/agent/process-group.js';
import { freePort } from '../../seed/ports.js';
import { kubeconfigFor, writeClusterSecrets } from './certs.js';
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

/** A process of the cluster that did not come up; `logFile` says why. */
export class KubeClusterError extends Error {
  constructor(
    message: string,
    readonly logFile?: string,
    options?: { cause?: unknown },
  ) {
    super(logFile ? `${message}\n--- last lines of ${logFile} ---\n${tail(logFile, 30)}` : message, options);
    this.name = 'KubeClusterError';
  }
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
  const start = (name: string, command: string, args: string[]) => {
    const logFile = join(dir, `${name}.log`);
    const out = openSync(logFile, 'a');
    const child = spawn(command, args, { stdio: ['ignore', out, out], detached: true });
    child.unref();
    if (child.pid === undefined) throw new KubeClusterError(`${name} did not start`, logFile);
    info.groups.push({ name, pgid: child.pid });
    return { child, logFile };
  };
  try {
    const etcd = start('etcd', 'etcd', [
      '--name',
      'kube',
      '--data-dir',
      join(dir, 'etcd-data'),
      '--listen-client-urls',
      `http://127.0.0.1:${ports.etcd}`,
      '--advertise-client-urls',
      `http://127.0.0.1:${ports.etcd}`,
      '--listen-peer-urls',
      `http://127.0.0.1:${ports.etcdPeer}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${ports.etcdPeer}`,
      '--initial-cluster',
      `kube=http://127.0.0.1:${ports.etcdPeer}`,
      '--quota-backend-bytes',
      String(2 * 1024 ** 3),
    ]);
    const api = start('kube-apiserver', tools.kubeApiServer, [
      `--etcd-servers=http://127.0.0.1:${ports.etcd}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${ports.api}`,
      '--advertise-address=127.0.0.1',
      `--tls-cert-file=${secrets.servingCert}`,
      `--tls-private-key-file=${secrets.servingKey}`,
      `--client-ca-file=${secrets.caCert}`,
      `--token-auth-file=${secrets.tokenFile}`,
      '--authorization-mode=RBAC',
      '--anonymous-auth=false',
      '--service-account-issuer=https://kubernetes.default.svc',
      `--service-account-key-file=${secrets.serviceAccountPub}`,
      `--service-account-signing-key-file=${secrets.serviceAccountKey}`,
      '--service-cluster-ip-range=10.96.0.0/16',
      // Two cores shared with everything else: no fairness queues, no profiling endpoints.
      '--enable-priority-and-fairness=false',
      '--profiling=false',
      '--endpoint-reconciler-type=none',
    ]);
    await waitFor(
      'kube-apiserver /readyz',
      options.readyTimeoutMs ?? 60_000,
      async () => (await httpsStatus(`${server}/readyz`, secrets.token, readFileSync(secrets.caCert))) === 200,
      [etcd, api],
    );
    const common = [`--kubeconfig=${kubeconfigPath}`, '--leader-elect=false', '--secure-port=0'];
    const kcm = start('kube-controller-manager', tools.kubeControllerManager, [
      ...common,
      `--service-account-private-key-file=${secrets.serviceAccountKey}`,
      `--root-ca-file=${secrets.caCert}`,
      // Every default controller, node-lifecycle included (kwok's nodes renew their leases).
      '--controllers=*',
      '--concurrent-deployment-syncs=10',
      '--concurrent-statefulset-syncs=10',
      '--concurrent-replicaset-syncs=10',
    ]);
    const scheduler = start('kube-scheduler', tools.kubeScheduler, common);
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

  killNow(): void {
    for (const { pgid } of this.info.groups) signalProcessGroup(pgid, 'SIGKILL');
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

function httpsStatus(url: string, token: string, ca: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` }, ca, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function waitFor(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
  processes: { child: { exitCode: number | null }; logFile: string }[],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const dead = processes.find((p) => p.child.exitCode !== null);
    if (dead)
      throw new KubeClusterError(
        `waiting for ${what}: a process exited with code ${dead.child.exitCode}`,
        dead.logFile,
      );
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new KubeClusterError(
        `${what} not reached within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`,
        processes.at(-1)?.logFile,
        { cause: last },
      );
    }
    await sleep(250);
  }
}

function tail(file: string, lines: number): string {
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
