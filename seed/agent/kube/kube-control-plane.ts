import { join } from 'node:path';
import type { ShootSecrets } from '../../../core/shootstate/secrets.js';
import { messageOf } from '../errors.js';
import {
  KUBE_COMPONENTS,
  kubeApiServerFlags,
  kubeControllerManagerFlags,
  kubeSchedulerFlags,
  type KubeComponent,
} from './component-flags.js';
import { writeControlPlaneFiles, type ControlPlaneFiles } from './control-plane-files.js';
import { SupervisedProcess } from './supervised-process.js';
import { bindViewers, shootApiRequest, type ShootApiResponse } from './shoot-api.js';

export interface KubeControlPlaneOptions {
  technicalID: string;
  /** `<workDir>/<technicalID>`: files under `pki/components/`, logs beside etcd's. */
  dir: string;
  /** Where kube-apiserver, kube-controller-manager and kube-scheduler are. */
  binDir: string;
  /** kube-apiserver's secure port on 127.0.0.1 (kept for the plane's life on this machine). */
  apiServerPort: number;
  /** etcd's client URLs, read at every start of kube-apiserver. */
  etcdServers: () => string[];
  /** The load balancer's address, which the serving certificate names too. */
  loadBalancerHost?: string;
  log?: (entry: Record<string, unknown>) => void;
}

export interface KubeStart {
  secrets: ShootSecrets;
  /** The shoot's API domain: the serving certificate's name and the ServiceAccount issuer. */
  apiDomain: string | undefined;
  /** Held until the plane is this seed's (a standby, a live walk's destination): the viewers' binding waits for that start. */
  standby?: boolean;
}

/** One replica each, supervised: its health is its process, and nothing else elects. */
const SUPERVISED = { securePort: 0, leaderElect: false } as const;
/** How long kube-apiserver gets for its graceful shutdown before it is killed. */
const KUBE_APISERVER_STOP_MS = 3_000;

/**
 * The Kubernetes control plane of one shoot on this machine: kube-apiserver against the shoot's etcd,
 * kube-controller-manager and kube-scheduler against kube-apiserver, each a supervised process (restarted
 * when it dies), at most one replica each (the local runtime's cap; the HA layout's replicas are reported,
 * not run). TLS throughout, with the shoot's own CAs; the components' certificates are made at every start.
 */
export class LocalKubeControlPlane {
  private readonly processes: Record<KubeComponent, SupervisedProcess>;
  private files: ControlPlaneFiles | undefined;
  /** The files of the last start: every component (and every restart) waits for them. */
  private filesWritten: Promise<void> | undefined;
  private start_: KubeStart | undefined;
  private rbacDone = false;
  private rbacTimer: NodeJS.Timeout | undefined;
  /** The kube-apiserver process that answered ready (`answering`). */
  private answeredPid: number | undefined;

  constructor(private readonly options: KubeControlPlaneOptions) {
    const supervised = (component: KubeComponent, args: () => string[]) =>
      new SupervisedProcess({
        name: `${options.technicalID}/${component}`,
        logFile: join(options.dir, `${component}.log`),
        pidFile: join(options.dir, `${component}.pid`),
        prepare: async () => {
          await this.filesWritten;
          return { command: join(options.binDir, component), args: args() };
        },
        ...(options.log ? { log: options.log } : {}),
      });
    this.processes = {
      'kube-apiserver': supervised('kube-apiserver', () => this.apiServerArgs()),
      'kube-controller-manager': supervised('kube-controller-manager', () => this.controllerManagerArgs()),
      'kube-scheduler': supervised('kube-scheduler', () => this.schedulerArgs()),
    };
  }

  get internalUrl(): string {
    return `https://127.0.0.1:${this.options.apiServerPort}`;
  }

  process(component: KubeComponent): SupervisedProcess {
    return this.processes[component];
  }

  /**
   * Writes the components' files (made again at every start) and starts kube-apiserver unless it runs; its
   * controllers start with `scale`, once it runs.
   */
  async startApiServer(input: KubeStart): Promise<void> {
    this.start_ = input;
    this.filesWritten = this.writeFiles();
    await this.filesWritten;
    await this.processes['kube-apiserver'].start();
    if (input.standby) clearTimeout(this.rbacTimer);
    else this.bindViewersWhenReady();
  }

  /** kube-controller-manager or kube-scheduler to 0 or 1 (more is 1 here): started only on a kube-apiserver that runs. */
  async scale(component: Exclude<KubeComponent, 'kube-apiserver'>, replicas: number): Promise<void> {
    if (replicas > 0 && this.processes['kube-apiserver'].running) await this.processes[component].start();
    else if (replicas === 0) await this.processes[component].stop();
  }

  /** Briefly: on a source that fenced, its etcd is gone and nothing it would still write can land. */
  async stopApiServer(): Promise<void> {
    clearTimeout(this.rbacTimer);
    await this.processes['kube-apiserver'].stop(KUBE_APISERVER_STOP_MS);
  }

  async stop(): Promise<void> {
    await Promise.all(KUBE_COMPONENTS.filter((c) => c !== 'kube-apiserver').map((c) => this.scale(c, 0)));
    await this.stopApiServer();
  }

  /**
   * Whether kube-apiserver takes requests: probed until it first answers ready after each start of its
   * process, then taken as given while that process runs (the load balancer asks four times a second, and
   * forwarding to a kube-apiserver that does not listen yet would fail what a hand-over could still serve).
   */
  async answering(): Promise<boolean> {
    const pid = this.processes['kube-apiserver'].pid;
    if (pid === undefined) return false;
    if (this.answeredPid === pid) return true;
    if ((await this.probe(ANSWERING_PROBE_MS)) !== 'Success') return false;
    this.answeredPid = pid;
    return true;
  }

  /** The dependency watchdog's internal probe: `/readyz` on the internal address, the cluster CA checked. */
  async probe(timeoutMs = 1_000): Promise<'Success' | 'Failure'> {
    if (!this.processes['kube-apiserver'].running || !this.files) return 'Failure';
    try {
      const res = await this.call('GET', '/readyz', undefined, timeoutMs);
      return res.status === 200 ? 'Success' : 'Failure';
    } catch {
      // Refused, reset or timed out.
      return 'Failure';
    }
  }

  /** A request to kube-apiserver as the agent (system:masters), for the control plane's own objects. */
  async call(method: string, path: string, body?: unknown, timeoutMs = 5_000): Promise<ShootApiResponse> {
    const files = this.files;
    if (!files) throw new Error(`the control plane of ${this.options.technicalID} has no files yet`);
    return shootApiRequest(
      { host: '127.0.0.1', port: this.options.apiServerPort, ...files.agent },
      method,
      path,
      body,
      timeoutMs,
    );
  }

  /**
   * Binds the viewers' group to the read-only ClusterRole once kube-apiserver answers (idempotent: what
   * exists stays). The objects live in etcd, so they move with the shoot; every start checks again.
   */
  private bindViewersWhenReady(): void {
    this.rbacDone = false;
    clearTimeout(this.rbacTimer);
    const attempt = async () => {
      if (this.rbacDone || !this.processes['kube-apiserver'].running) return;
      try {
        if ((await this.probe(2_000)) === 'Success') {
          await bindViewers((method, path, body) => this.call(method, path, body));
          this.rbacDone = true;
          return;
        }
      } catch (error) {
        this.options.log?.({ event: 'viewer-rbac-failed', shoot: this.options.technicalID, error: messageOf(error) });
      }
      this.rbacTimer = setTimeout(() => void attempt(), 1_000);
      this.rbacTimer.unref();
    };
    void attempt();
  }

  private async writeFiles(): Promise<void> {
    const start = this.start_;
    if (!start) throw new Error(`the control plane of ${this.options.technicalID} was never started`);
    this.files = await writeControlPlaneFiles({
      dir: join(this.options.dir, 'pki', 'components'),
      secrets: start.secrets,
      apiDomain: start.apiDomain,
      addresses: ['127.0.0.1', ...(this.options.loadBalancerHost ? [this.options.loadBalancerHost] : [])],
      internalUrl: this.internalUrl,
      now: new Date(),
    });
  }

  private apiServerArgs(): string[] {
    return kubeApiServerFlags({
      paths: this.files!,
      etcdServers: this.options.etcdServers(),
      bindAddress: '127.0.0.1',
      securePort: this.options.apiServerPort,
      ...(this.start_?.apiDomain ? { apiDomain: this.start_.apiDomain } : {}),
    });
  }

  private controllerManagerArgs(): string[] {
    return kubeControllerManagerFlags({ paths: this.files!, ...SUPERVISED });
  }

  private schedulerArgs(): string[] {
    return kubeSchedulerFlags({ paths: this.files!, ...SUPERVISED });
  }
}

/** Well within the load balancer's lease of its route check. */
const ANSWERING_PROBE_MS = 500;
