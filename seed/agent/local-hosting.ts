import { setTimeout as sleep } from 'node:timers/promises';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SidecarSettings } from '../../core/model/seed.js';
import type { OwnerCheckResult } from '../../core/ownership/index.js';
import type { SnapshotStore } from '../../core/snapshots/index.js';
import type { RangedObjectReader } from '../backup-restore/ranged-download.js';
import { plannedPorts, portsFree } from '../ports.js';
import type {
  ApiServerView,
  ControlPlaneHosting,
  EtcdSpec,
  EtcdStarted,
  EtcdView,
  LiveMemberPlan,
  OwnerNoticeDelivery,
  ControlPlaneComponents,
} from './hosting.js';
import {
  controllers,
  pollUntil,
  type ApiServerSpec,
  type ControllerSpec,
  type DeployWaiter,
  type HostedController,
  type WaitOptions,
} from './components.js';
import { kubeBinDir } from './kube/binaries.js';
import type { KubeComponent } from './kube/component-flags.js';
import { LocalKubeControlPlane } from './kube/kube-control-plane.js';
import { SniLoadBalancer } from './kube/load-balancer.js';
import { LocalEtcdCluster, RESTORE_START_TIMEOUT_MS, type LocalMember } from './local-etcd-cluster.js';
import { sidecarArgs, type SidecarDefaults } from './sidecar-args.js';
import { reportedSettings } from './sidecar-settings.js';
import { CatchUpError, LocalProcessError, messageOf } from './errors.js';
import { SidecarProcess } from './sidecar-process.js';
import { recordProcess, stopStaleProcess } from './stale-process.js';
import { etcdPeerScheme, pkiDir, readShootSecrets, writeEtcdPeerFiles, writeShootSecrets } from './secret-files.js';
import type { ShootSecrets } from '../../core/shootstate/secrets.js';

export interface LocalHostingOptions extends SidecarDefaults {
  /** Data dirs and logs go under `<workDir>/<technicalID>/`. */
  workDir: string;
  /** The gardenless CLI (its `backup-restore serve` runs the sidecars); default the repository's sidecar-only entry point. */
  cliCommand?: readonly string[];
  /** Environment of the sidecars (AWS credentials); default this process's. */
  env?: NodeJS.ProcessEnv;
  /** The seed's backup bucket: the members of a cluster restore from one download of the full snapshot. */
  backups?: (bucket: string) => { store: SnapshotStore; rangedReader?: RangedObjectReader };
  log?: (entry: Record<string, unknown>) => void;
  /**
   * The seed's load balancer for its shoots' kube-apiservers: a loopback address of this seed's own
   * (127.0.0.2, ...) and a port that is the same on every seed of the landscape (as 443 is), so that the
   * shoot's API record alone decides which seed a client reaches, and its API domain (SNI) which shoot.
   * Default 127.0.0.1 and a free port.
   */
  loadBalancer?: { host?: string; port?: number };
  /**
   * Where kube-apiserver, kube-controller-manager and kube-scheduler are (default the binaries
   * scripts/build-kube.sh builds); tests that need only a health endpoint give harness/fixtures/fake-kube.
   */
  kubeBinDir?: string;
  /** The seed's name, for logs. */
  seedName?: string;
}

interface Hosted {
  /**
   * etcd's client and peer ports, kube-apiserver's secure port, and a single etcd's client port for its
   * kube-apiserver (`apiServerEtcd`: the sidecar's second gate, which holds it until etcd serves and lets
   * it read a standby): kept for the plane's life on this machine.
   */
  ports: Ports;
  sidecar?: SidecarProcess;
  /** A `node` or `zone` shoot's etcd: three members. */
  cluster?: LocalEtcdCluster;
  kube?: LocalKubeControlPlane;
  apiDomain?: string;
  /** What its sidecars last said they run with. */
  settings?: SidecarSettings;
}

interface Ports {
  client: number;
  peer: number;
  apiServer: number;
  apiServerEtcd: number;
}

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** tsx on the sidecar-only entry point: it starts in about a third of the whole CLI's time. */
const SIDECAR_COMMAND = [join(REPO_ROOT, 'node_modules/.bin/tsx'), join(REPO_ROOT, 'cli/backup-restore-main.ts')];

/**
 * The `local` runtime's processes: per shoot the backup-restore sidecar children (one, or one per member
 * of a cluster, each with its real etcd in its own process group) and its Kubernetes control plane
 * (kube-apiserver, kube-controller-manager, kube-scheduler, one each), all on 127.0.0.1; per seed one load
 * balancer that routes each shoot's API domain to its kube-apiserver while its etcd serves. The ports
 * stay the same for the plane's life on this machine (recorded in its directory, so a restarted agent
 * keeps them), so a restart or a restore keeps every address; only a start that failed while another
 * process held one of them moves it to new ports.
 */
export class LocalHosting implements ControlPlaneHosting {
  private readonly hosted = new Map<string, Hosted>();
  private loadBalancer_: Promise<SniLoadBalancer> | undefined;

  constructor(private readonly options: LocalHostingOptions) {}

  async installSecrets(technicalID: string, secrets: ShootSecrets): Promise<void> {
    writeShootSecrets(this.dataDir(technicalID), secrets);
  }

  /**
   * etcd as its sidecar processes, kube-apiserver, kube-controller-manager and kube-scheduler as supervised
   * processes (one each), the seed's load balancer routing to kube-apiserver; the other controllers of the
   * layout are not run here.
   */
  components(technicalID: string): ControlPlaneComponents {
    const cleanedUp = (running: () => boolean, what: string) => (options: WaitOptions) =>
      pollUntil(async () => !running(), { ...options, describe: () => `${what} of ${technicalID} still runs` });
    return {
      etcd: {
        name: 'etcd',
        deploy: (spec) => this.startEtcd(spec),
        destroy: () => this.stopEtcd(technicalID),
        snapshot: () => this.fullSnapshot(technicalID),
        wait: (options) =>
          pollUntil(async () => (await this.etcd(technicalID)).available, {
            ...options,
            describe: () => `etcd of ${technicalID} does not serve`,
          }),
        waitCleanup: cleanedUp(() => this.sidecars(technicalID).some((s) => s.running), 'etcd'),
      },
      'kube-apiserver': {
        name: 'kube-apiserver',
        deploy: (spec) => this.startApiServer(technicalID, spec),
        destroy: () => this.stopApiServer(technicalID),
        wait: (options) => this.apiServerReady(technicalID, options),
        waitCleanup: cleanedUp(
          () => this.componentProcess(technicalID, 'kube-apiserver')?.running ?? false,
          'kube-apiserver',
        ),
      },
      controllers: controllers((name) => this.controller(technicalID, name)),
    };
  }

  private controller(technicalID: string, name: HostedController): DeployWaiter<ControllerSpec> {
    const process = () => this.componentProcess(technicalID, name);
    return {
      name,
      deploy: async (spec) => this.hosted.get(technicalID)?.kube?.scale(name, spec.replicas),
      destroy: async () => this.hosted.get(technicalID)?.kube?.scale(name, 0),
      wait: (options) =>
        pollUntil(async () => process()?.running ?? false, {
          ...options,
          describe: () => `${name} of ${technicalID} does not run`,
        }),
      waitCleanup: (options) =>
        pollUntil(async () => !(process()?.running ?? false), {
          ...options,
          describe: () => `${name} of ${technicalID} still runs`,
        }),
    };
  }

  private async startEtcd(spec: EtcdSpec): Promise<EtcdStarted> {
    const id = spec.shoot.technicalID;
    // A cluster's members restore together once the shoot is theirs: no restore ahead.
    if (spec.restore?.ahead && (spec.members?.length ?? 1) > 1) return { ahead: false };
    const h = await this.entry(id);
    if ((spec.members?.length ?? 1) > 1) {
      h.cluster ??= new LocalEtcdCluster({
        technicalID: id,
        dir: join(this.options.workDir, id),
        members: spec.members!,
        defaults: this.options,
        plannedElsewhere: () => this.portsPlanned(),
        secrets: () => readShootSecrets(this.dataDir(id)),
        launch: ({ member, args, logFile, startTimeoutMs }) =>
          this.launch(`${id}/${member}`, args, logFile, startTimeoutMs),
        ...(this.options.backups ? { backups: this.options.backups } : {}),
        ...(this.options.log ? { log: this.options.log } : {}),
      });
      return h.cluster.ensure(spec);
    }
    if (h.sidecar?.running && !spec.restore && !spec.forceNewCluster) return {};
    if (spec.restore?.ahead) {
      // Never over a plane that runs here: a restore ahead only ever prepares a standby, and a standby is refreshed.
      if (h.sidecar?.running) return this.refreshAhead(id, h.sidecar);
    } else if (spec.restore && h.sidecar?.running) {
      const caught = await this.catchUp(id, h.sidecar, spec.restore);
      if (caught !== undefined) return caught;
    }
    await h.sidecar?.stop();
    const dir = join(this.options.workDir, id);
    if (spec.join) writeFileSync(this.joinFile(id), JSON.stringify(spec.join));
    const joining = spec.join ?? readJoin(this.joinFile(id));
    const secrets = readShootSecrets(dir);
    const name = joining?.name ?? 'etcd';
    const peerTls = await writeEtcdPeerFiles({
      dir: join(pkiDir(dir), 'etcd-peer'),
      secrets,
      member: name,
      peerUrls: [this.peerUrl(secrets, h.ports.peer)],
    });
    try {
      h.sidecar = await this.launch(
        id,
        sidecarArgs({
          defaults: this.options,
          spec: joining ? { ...spec, join: joining } : spec,
          dataDir: join(dir, 'etcd'),
          etcdLog: join(dir, 'etcd.log'),
          ports: h.ports,
          ...(peerTls ? { peerTls } : {}),
        }),
        join(dir, 'sidecar.log'),
        // As a cluster member's: the 60 s default failed a 500 MB bad-path restore under load (bench:downtime).
        spec.restore ? RESTORE_START_TIMEOUT_MS : undefined,
      );
    } catch (error) {
      // Another process took a port between its allocation and etcd's bind (a closed port is free to
      // anyone at once): the next attempt gets new ones. Nothing served on the old address.
      if (!(await portsFree([h.ports.client, h.ports.peer, h.ports.apiServerEtcd])))
        h.ports = await this.newPorts(id, { apiServer: h.ports.apiServer });
      throw error;
    }
    if (!spec.restore) return {};
    const status = await h.sidecar.status(5_000);
    return {
      ...(status?.restore ? { restoredRevision: status.restore.revision, fidelity: status.restore.fidelity } : {}),
      ...(spec.restore.ahead ? { ahead: true } : {}),
    };
  }

  /**
   * The restore of a plane restored ahead: its sidecar replays what was copied since and serves as any
   * restored sidecar (`POST /restore/catch-up`). Undefined when it holds no restore ahead or the catch-up
   * failed for a reason a restore from scratch may not share: the caller then restores as without one.
   * Snapshots that do not restore to the expected revision fail the restore.
   */
  private async catchUp(
    id: string,
    sidecar: SidecarProcess,
    restore: NonNullable<EtcdSpec['restore']>,
  ): Promise<EtcdStarted | undefined> {
    try {
      const result = await sidecar.catchUp({
        ...(restore.expectedLastRevision === undefined ? {} : { expectedLastRevision: restore.expectedLastRevision }),
        ...(restore.acceptDigestMismatch ? { acceptDigestMismatch: true } : {}),
      });
      if (result === 'not-ahead') return undefined;
      return { restoredRevision: result.revision, aheadRevision: result.aheadRevision, fidelity: result.fidelity };
    } catch (error) {
      if (error instanceof CatchUpError && error.refused !== undefined) throw error;
      this.options.log?.({ event: 'catch-up-failed', technicalID: id, error: messageOf(error) });
      return undefined;
    }
  }

  /**
   * A restore ahead of a plane that waits restored ahead: its sidecar brings it up to what the bucket holds
   * now and keeps it in standby (the migration's second pre-copy round). A failed refresh is no failure of
   * the restore ahead: etcd waits where it got to, and the catch-up goes on from there.
   */
  private async refreshAhead(id: string, sidecar: SidecarProcess): Promise<EtcdStarted> {
    try {
      const result = await sidecar.refreshAhead();
      if (result !== 'not-ahead')
        return { ahead: true, restoredRevision: result.revision, aheadRevision: result.aheadRevision };
    } catch (error) {
      this.options.log?.({ event: 'refresh-ahead-failed', technicalID: id, error: messageOf(error) });
    }
    const status = await sidecar.status(5_000);
    return status?.standby ? { ahead: true, restoredRevision: status.restore?.revision ?? 0 } : { ahead: false };
  }

  private async fullSnapshot(technicalID: string): Promise<void> {
    const h = this.hosted.get(technicalID);
    if (h?.cluster) await h.cluster.fullSnapshot();
    else if (h?.sidecar?.running) await h.sidecar.fullSnapshot();
  }

  private async stopEtcd(technicalID: string): Promise<void> {
    const h = this.hosted.get(technicalID);
    await h?.cluster?.stop();
    await h?.sidecar?.stop();
    if (h) delete h.sidecar;
  }

  /**
   * The etcd as its sidecars report it, with the settings they last said they run with when they do not
   * answer now: a sidecar that died or hangs runs, once restarted, with the same flags, and a seed dying
   * piece by piece must still tell the garden, in its last heartbeat, how long its sidecars may go on.
   */
  async etcd(technicalID: string): Promise<EtcdView> {
    const view = await this.observeEtcd(technicalID);
    const h = this.hosted.get(technicalID);
    if (view.settings) {
      if (h) h.settings = view.settings;
      return view;
    }
    return h?.settings ? { ...view, settings: h.settings } : view;
  }

  private async observeEtcd(technicalID: string): Promise<EtcdView> {
    const h = this.hosted.get(technicalID);
    if (h?.cluster) return h.cluster.view();
    const sidecar = h?.sidecar;
    if (!sidecar?.running) return { running: false, available: false };
    const status = await sidecar.status();
    if (status === undefined) return { running: true, available: false, unanswered: true };
    const lastResult = status.owner.lastResult as OwnerCheckResult | null;
    const settings = reportedSettings([status]);
    return {
      running: status.etcd.running,
      available: status.ready && !status.etcd.fenced,
      ...(lastResult ? { ownerCheck: lastResult } : {}),
      clientUrl: sidecar.clientUrl,
      ...(settings ? { settings } : {}),
    };
  }

  private async startApiServer(technicalID: string, options: ApiServerSpec): Promise<void> {
    const h = await this.entry(technicalID);
    const dir = this.dataDir(technicalID);
    const secrets = readShootSecrets(dir);
    if (secrets === undefined)
      throw new LocalProcessError(
        `no secrets were delivered for ${technicalID}: its kube-apiserver has no CAs to serve with`,
        technicalID,
      );
    if (options.apiDomain) h.apiDomain = options.apiDomain;
    const lb = await this.loadBalancer();
    h.kube ??= new LocalKubeControlPlane({
      technicalID,
      dir,
      binDir: this.options.kubeBinDir ?? kubeBinDir(),
      apiServerPort: h.ports.apiServer,
      etcdServers: () => this.etcdServers(technicalID),
      loadBalancerHost: lb.host,
      ...(this.options.log ? { log: this.options.log } : {}),
    });
    await h.kube.startApiServer({ secrets, apiDomain: h.apiDomain, ...(options.standby ? { standby: true } : {}) });
    // Reachable from outside under its API domain, while (and only while) its etcd serves as this seed's,
    // and once its kube-apiserver answers.
    const kube = h.kube;
    if (h.apiDomain)
      lb.route(technicalID, {
        serverName: h.apiDomain,
        backend: { host: '127.0.0.1', port: h.ports.apiServer },
        serving: async () => {
          const etcd = await this.etcd(technicalID);
          return etcd.unanswered ? undefined : etcd.available && (await kube.answering());
        },
      });
  }

  private async apiServerReady(technicalID: string, options: WaitOptions): Promise<void> {
    const deadline = Date.now() + options.timeoutMs;
    for (;;) {
      const kube = this.hosted.get(technicalID)?.kube;
      const ready = (await kube?.probe()) === 'Success';
      if (ready && (!options.reachable || (await this.reachable(technicalID)))) return;
      if (Date.now() >= deadline || options.signal?.aborted) {
        const process = kube?.process('kube-apiserver');
        throw new LocalProcessError(
          `kube-apiserver of ${technicalID} was not ${options.reachable ? 'reachable' : 'ready'} within ${options.timeoutMs} ms (${process?.running ? 'running' : 'not running'}, ${process?.restarts ?? 0} restarts)`,
          technicalID,
        );
      }
      // Ready, waiting for the route: the load balancer's own check runs every 250 ms.
      await sleep(ready ? 50 : 250);
    }
  }

  /** Whether the load balancer forwards to the shoot's kube-apiserver; without an API domain it has no route to wait for. */
  private async reachable(technicalID: string): Promise<boolean> {
    if (!this.hosted.get(technicalID)?.apiDomain) return true;
    return (await this.loadBalancer_)?.forwarding(technicalID) ?? false;
  }

  private async stopApiServer(technicalID: string): Promise<void> {
    (await this.loadBalancer_)?.unroute(technicalID);
    await this.hosted.get(technicalID)?.kube?.stopApiServer();
  }

  /** kube-apiserver and its controllers stop; etcd runs on. */
  private async stopKube(technicalID: string): Promise<void> {
    (await this.loadBalancer_)?.unroute(technicalID);
    await this.hosted.get(technicalID)?.kube?.stop();
  }

  async apiServer(technicalID: string): Promise<ApiServerView> {
    const h = this.hosted.get(technicalID);
    const kube = h?.kube;
    if (!kube?.process('kube-apiserver').running) return { running: false, internalProbe: 'Failure' };
    const lb = await this.loadBalancer_;
    return {
      running: true,
      internalProbe: await kube.probe(),
      ...(lb && h?.apiDomain ? { externalUrl: lb.url } : {}),
    };
  }

  /** The Kubernetes control plane of one shoot (its processes, its agent's requests), for tests. */
  kubeControlPlane(technicalID: string): LocalKubeControlPlane | undefined {
    return this.hosted.get(technicalID)?.kube;
  }

  /** The seed's load balancer, once a control plane started. */
  async seedLoadBalancer(): Promise<SniLoadBalancer | undefined> {
    return this.loadBalancer_;
  }

  /**
   * A test seam for the dependency watchdog: `internal` hangs kube-apiserver (SIGSTOP: its address takes
   * connections and answers nothing), `external` makes the load balancer refuse the shoot.
   */
  async breakApiServer(technicalID: string, address: 'internal' | 'external', broken: boolean): Promise<void> {
    if (address === 'internal') this.hosted.get(technicalID)?.kube?.process('kube-apiserver').freeze(broken);
    else (await this.loadBalancer_)?.break(technicalID, broken);
  }

  /** A component of one shoot's control plane as a process (for tests: kill, running, restarts). */
  componentProcess(technicalID: string, component: KubeComponent) {
    return this.hosted.get(technicalID)?.kube?.process(component);
  }

  /** etcd's client URLs for kube-apiserver: the single member's address for it (its sidecar's second gate), or every member's. */
  private etcdServers(technicalID: string): string[] {
    const h = this.hosted.get(technicalID);
    if (h?.cluster) return h.cluster.clientUrls();
    return [`http://127.0.0.1:${h?.ports.apiServerEtcd}`];
  }

  private loadBalancer(): Promise<SniLoadBalancer> {
    this.loadBalancer_ ??= SniLoadBalancer.start({
      host: this.options.loadBalancer?.host ?? '127.0.0.1',
      port: this.options.loadBalancer?.port ?? 0,
      ...(this.options.log ? { log: this.options.log } : {}),
    });
    return this.loadBalancer_;
  }

  /** The sidecar process of one shoot (of a cluster, the first member's), for tests. */
  sidecar(technicalID: string): SidecarProcess | undefined {
    const h = this.hosted.get(technicalID);
    return h?.cluster ? h.cluster.list()[0]?.sidecar : h?.sidecar;
  }

  /** Every sidecar process of one shoot: one, or one per member of its cluster. */
  sidecars(technicalID: string): SidecarProcess[] {
    const h = this.hosted.get(technicalID);
    if (h?.cluster) return h.cluster.sidecars();
    return h?.sidecar ? [h.sidecar] : [];
  }

  /** Test seam: the members of a shoot's etcd cluster are no longer restarted when they die (the seed is gone). */
  stopRestarting(technicalID: string): void {
    this.hosted.get(technicalID)?.cluster?.stopRestarting();
  }

  /** The members of a shoot's etcd cluster (none for a single etcd), for tests and the CLI. */
  members(technicalID: string): LocalMember[] {
    return this.hosted.get(technicalID)?.cluster?.list() ?? [];
  }

  async noticeOwnerChange(technicalID: string): Promise<OwnerNoticeDelivery> {
    const sidecars = this.sidecars(technicalID).filter((s) => s.running);
    const answers = await Promise.all(sidecars.map((s) => s.noticeOwnerChange()));
    const notified = answers.filter(Boolean).length;
    this.options.log?.({ event: 'owner-notice-delivered', shoot: technicalID, sidecars: sidecars.length, notified });
    return { sidecars: sidecars.length, notified };
  }

  async handOver(input: { apiDomain: string; target: string; until: Date }): Promise<boolean> {
    // A seed that never ran a load balancer had no client of the shoot to hand over.
    const lb = await this.loadBalancer_;
    if (lb === undefined) return false;
    const url = new URL(input.target);
    return lb.handOver(input.apiDomain, { host: url.hostname, port: Number(url.port) }, input.until);
  }

  /** Where one shoot's files live on this machine (etcd data, logs); remove() deletes it. */
  dataDir(technicalID: string): string {
    return join(this.options.workDir, technicalID);
  }

  async remove(technicalID: string): Promise<void> {
    await this.stopKube(technicalID);
    await this.stopEtcd(technicalID);
    this.hosted.delete(technicalID);
    await rm(join(this.options.workDir, technicalID), { recursive: true, force: true });
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.hosted.keys()].map(async (id) => {
        await this.stopKube(id);
        await this.stopEtcd(id);
      }),
    );
    const lb = this.loadBalancer_;
    this.loadBalancer_ = undefined;
    await (await lb)?.stop();
  }

  /** Starts one sidecar; a sidecar a killed agent left running on the same data dir is stopped first. */
  private async launch(
    label: string,
    args: string[],
    logFile: string,
    startTimeoutMs?: number,
  ): Promise<SidecarProcess> {
    const pidFile = join(dirname(logFile), 'sidecar.pid');
    const dataDir = args[args.indexOf('--data-dir') + 1];
    if (dataDir)
      await stopStaleProcess({ pidFile, argument: dataDir, ...(this.options.log ? { log: this.options.log } : {}) });
    const sidecar = await SidecarProcess.start({
      technicalID: label,
      command: this.options.cliCommand ?? SIDECAR_COMMAND,
      args,
      env: { ...(this.options.env ?? process.env) },
      logFile,
      ...(startTimeoutMs === undefined ? {} : { startTimeoutMs }),
    });
    recordProcess(pidFile, sidecar.pid);
    return sidecar;
  }

  private async entry(technicalID: string): Promise<Hosted> {
    let h = this.hosted.get(technicalID);
    if (!h) {
      // A plane an earlier agent ran here keeps its address (its stand-in and clients know it).
      // One an agent of before kube-apiserver had its own address to etcd gets that port planned.
      const kept = readPorts(this.portsFile(technicalID));
      h = { ports: isComplete(kept) ? kept : await this.newPorts(technicalID, kept) };
      this.hosted.set(technicalID, h);
    }
    return h;
  }

  /**
   * A single-member etcd's client and peer ports, kept in the plane's directory: planned ports, none of
   * another plane's here (a fenced plane's client port is unbound until it unfences).
   */
  private async newPorts(technicalID: string, keep: Partial<Ports> = {}): Promise<Ports> {
    const [client, peer, apiServer, apiServerEtcd] = await plannedPorts(4, {
      avoid: new Set([...this.portsPlanned(), ...Object.values(keep)]),
    });
    // What is kept stays (kube-apiserver's port when only etcd's move: its processes know it).
    const ports: Ports = {
      client: keep.client ?? client!,
      peer: keep.peer ?? peer!,
      apiServer: keep.apiServer ?? apiServer!,
      apiServerEtcd: keep.apiServerEtcd ?? apiServerEtcd!,
    };
    mkdirSync(this.dataDir(technicalID), { recursive: true });
    writeFileSync(this.portsFile(technicalID), JSON.stringify(ports));
    return ports;
  }

  /** Every port planned for a plane here, bound or not: a new plan takes none of them. */
  private portsPlanned(): Set<number> {
    return new Set(
      [...this.hosted.values()].flatMap((h) => [
        h.ports.client,
        h.ports.peer,
        h.ports.apiServer,
        h.ports.apiServerEtcd,
        ...(h.cluster?.memberPorts() ?? []),
      ]),
    );
  }

  /**
   * The single member's plan in a live walk: its own ports, and a name of this seed's (the source's member
   * has another, and etcd tells members apart by name in its initial cluster).
   */
  async liveMember(technicalID: string): Promise<LiveMemberPlan> {
    const h = await this.entry(technicalID);
    const joined = readJoin(this.joinFile(technicalID));
    return {
      name: joined?.name ?? `etcd-${this.options.identity}`,
      peerUrl: this.peerUrl(readShootSecrets(this.dataDir(technicalID)), h.ports.peer),
      clientUrl: `http://127.0.0.1:${h.ports.client}`,
      joined: joined !== undefined,
      loadBalancer: (await this.loadBalancer()).url,
    };
  }

  /**
   * A single member's peer URL: on loopback, TLS with the shoot's etcd peer CA where its secrets hold one
   * (every shoot's do once the garden added it), plain where they do not.
   */
  private peerUrl(secrets: ShootSecrets | undefined, port: number): string {
    return `${etcdPeerScheme(secrets)}://127.0.0.1:${port}`;
  }

  private joinFile(technicalID: string): string {
    return join(this.dataDir(technicalID), 'join.json');
  }

  private portsFile(technicalID: string): string {
    return join(this.dataDir(technicalID), 'ports.json');
  }
}

const PORT_NAMES = ['client', 'peer', 'apiServer', 'apiServerEtcd'] as const satisfies readonly (keyof Ports)[];

/** The ports a plane's file records, each that is a number. */
function readPorts(file: string): Partial<Ports> {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<Record<keyof Ports, unknown>>;
    return Object.fromEntries(PORT_NAMES.flatMap((n) => (typeof value[n] === 'number' ? [[n, value[n]]] : [])));
  } catch {
    // None yet (or unreadable): new ports.
    return {};
  }
}

/** How the plane's member joined a running cluster in a live walk, if it did. */
function readJoin(file: string): EtcdSpec['join'] {
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as EtcdSpec['join'];
    return typeof value?.name === 'string' && Array.isArray(value.members) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isComplete(ports: Partial<Ports>): ports is Ports {
  return PORT_NAMES.every((n) => ports[n] !== undefined);
}
