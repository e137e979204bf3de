import type { ShootSecrets } from '../../core/shootstate/secrets.js';
import type { SidecarSettings } from '../../core/model/seed.js';
import { controllers, pollUntil, type ApiServerSpec, type ControllerSpec, type WaitOptions } from './components.js';
import type {
  ApiServerView,
  ControlPlaneHosting,
  EtcdSpec,
  EtcdStarted,
  EtcdView,
  ControlPlaneComponents,
} from './hosting.js';

interface Plane {
  etcd: boolean;
  apiServer: boolean;
  /** Each hosted controller's replicas, as deployed. */
  controllers: Map<string, number>;
  restoredRevision?: number;
  /** Restored ahead, not serving. */
  standby?: boolean;
}

/**
 * Control planes as flags, for unit tests of the runtime and the agent: etcd serves while started and
 * not made unavailable; the kube-apiserver answers its internal probe while started, not broken and etcd
 * serves. `restoreRevision` decides what a restore reports.
 */
export class MemoryHosting implements ControlPlaneHosting {
  private readonly planes = new Map<string, Plane>();
  private readonly etcdDown = new Set<string>();
  private readonly internalBroken = new Set<string>();
  private readonly externalBroken = new Set<string>();
  /** Every start and stop, in order, for assertions. */
  readonly calls: string[] = [];
  /** The secrets each plane was given. */
  readonly secrets = new Map<string, ShootSecrets>();

  /**
   * `loadBalancer: false` reports no external address (a seed whose kube-apiservers the garden cannot
   * probe from outside), so that the dependency watchdog leaves its control planes alone; `externalBaseUrl`
   * is where the external addresses point (`<base>/<technicalID>`, default `http://memory.invalid`): a
   * server there answers the watchdog's probes for every plane (the fleet benchmark runs one).
   */
  constructor(
    private readonly options: {
      restoreRevision?: (spec: EtcdSpec) => number;
      loadBalancer?: boolean;
      /** What its running etcds' sidecars report they run with; default nothing (an agent older than the report). */
      sidecarSettings?: SidecarSettings;
      externalBaseUrl?: string;
    } = {},
  ) {}

  async installSecrets(technicalID: string, secrets: ShootSecrets): Promise<void> {
    this.secrets.set(technicalID, secrets);
  }

  /**
   * Each component a flag of its plane: etcd's deploy is `startEtcd`, kube-apiserver's `startApiServer`, and
   * kube-controller-manager's replicas are recorded (a change of them as a `scale` call); the other
   * controllers are not hosted here, as on a local seed.
   */
  components(technicalID: string): ControlPlaneComponents {
    return {
      etcd: {
        name: 'etcd',
        deploy: (spec) => this.startEtcd(spec),
        destroy: () => this.stopEtcd(technicalID),
        snapshot: async () => {},
        wait: (options) =>
          pollUntil(async () => (await this.etcd(technicalID)).available, {
            ...options,
            describe: () => `etcd of ${technicalID} does not serve`,
          }),
        waitCleanup: async () => {},
      },
      'kube-apiserver': {
        name: 'kube-apiserver',
        deploy: (spec) => this.startApiServer(technicalID, spec),
        destroy: () => this.stopApiServer(technicalID),
        wait: (options) => this.apiServerReady(technicalID, options),
        waitCleanup: async () => {},
      },
      controllers: controllers((name) => ({
        name,
        deploy: async (spec: ControllerSpec) => this.deployController(technicalID, name, spec.replicas),
        // Gone with kube-apiserver (its stop is the call recorded): the next deploy starts it afresh.
        destroy: async () => void this.plane(technicalID).controllers.delete(name),
        wait: async () => {},
        waitCleanup: async () => {},
      })),
    };
  }

  async startEtcd(spec: EtcdSpec): Promise<EtcdStarted> {
    const plane = this.plane(spec.shoot.technicalID);
    if (spec.restore?.ahead) {
      // As the local hosting: never over a running plane, never for a cluster.
      if ((plane.etcd && !plane.standby) || (spec.members?.length ?? 1) > 1) return { ahead: false };
      const refreshed = plane.standby === true ? plane.restoredRevision : undefined;
      this.calls.push(`${plane.standby ? 'refresh' : 'restore'}-etcd-ahead ${spec.shoot.technicalID}`);
      plane.etcd = true;
      plane.standby = true;
      plane.restoredRevision = this.options.restoreRevision?.(spec);
      return {
        ahead: true,
        ...(plane.restoredRevision === undefined ? {} : { restoredRevision: plane.restoredRevision }),
        ...(refreshed === undefined ? {} : { aheadRevision: refreshed }),
      };
    }
    const caughtUp = plane.standby === true && spec.restore !== undefined;
    const ahead = caughtUp ? plane.restoredRevision : undefined;
    this.calls.push(`${spec.restore ? (caughtUp ? 'catch-up' : 'restore') : 'start'}-etcd ${spec.shoot.technicalID}`);
    plane.etcd = true;
    plane.standby = false;
    if (spec.restore)
      plane.restoredRevision = this.options.restoreRevision?.(spec) ?? spec.restore.expectedLastRevision ?? 0;
    if (plane.restoredRevision === undefined || !spec.restore) return {};
    return { restoredRevision: plane.restoredRevision, ...(ahead === undefined ? {} : { aheadRevision: ahead }) };
  }

  async stopEtcd(technicalID: string): Promise<void> {
    const plane = this.planes.get(technicalID);
    if (plane?.etcd) this.calls.push(`stop-etcd ${technicalID}`);
    if (plane) {
      plane.etcd = false;
      plane.standby = false;
    }
  }

  async etcd(technicalID: string): Promise<EtcdView> {
    const plane = this.planes.get(technicalID);
    const running = plane?.etcd ?? false;
    // A standby etcd runs no owner watchdog and serves nothing.
    if (plane?.standby) return { running, available: false };
    const available = running && !this.etcdDown.has(technicalID);
    return {
      running,
      available,
      ...(running
        ? {
            ownerCheck: available ? ('owner' as const) : ('not-owner' as const),
            clientUrl: `memory://${technicalID}/etcd`,
            ...(this.options.sidecarSettings ? { settings: this.options.sidecarSettings } : {}),
          }
        : {}),
    };
  }

  /** kube-apiserver's wait: until it answers its internal probe. */
  async apiServerReady(technicalID: string, options: WaitOptions): Promise<void> {
    await pollUntil(async () => (await this.apiServer(technicalID)).internalProbe === 'Success', {
      ...options,
      describe: () => `kube-apiserver of ${technicalID} is not ready`,
    });
  }

  async startApiServer(technicalID: string, _spec: ApiServerSpec = {}): Promise<void> {
    const plane = this.plane(technicalID);
    if (!plane.apiServer) this.calls.push(`start-apiserver ${technicalID}`);
    plane.apiServer = true;
  }

  async stopApiServer(technicalID: string): Promise<void> {
    const plane = this.planes.get(technicalID);
    if (plane?.apiServer) this.calls.push(`stop-apiserver ${technicalID}`);
    if (plane) plane.apiServer = false;
  }

  private deployController(technicalID: string, name: string, replicas: number): void {
    const deployed = this.plane(technicalID).controllers;
    const before = deployed.get(name);
    if (before !== undefined && before !== replicas) this.calls.push(`scale ${name} ${technicalID} ${replicas}`);
    deployed.set(name, replicas);
  }

  async apiServer(technicalID: string): Promise<ApiServerView> {
    const plane = this.planes.get(technicalID);
    if (!plane?.apiServer) return { running: false, internalProbe: 'Failure' };
    const etcd = await this.etcd(technicalID);
    const up = etcd.available && !this.internalBroken.has(technicalID);
    if (this.options.loadBalancer === false) return { running: true, internalProbe: up ? 'Success' : 'Failure' };
    return {
      running: true,
      internalProbe: up ? 'Success' : 'Failure',
      externalUrl: `${this.options.externalBaseUrl ?? 'http://memory.invalid'}/${technicalID}${this.externalBroken.has(technicalID) ? '/broken' : ''}`,
    };
  }

  async noticeOwnerChange(technicalID: string): Promise<{ sidecars: number; notified: number }> {
    const running = this.planes.get(technicalID)?.etcd ?? false;
    this.calls.push(`notice-owner-change ${technicalID}`);
    return { sidecars: running ? 1 : 0, notified: running ? 1 : 0 };
  }

  async remove(technicalID: string): Promise<void> {
    this.planes.delete(technicalID);
  }

  async stopAll(): Promise<void> {
    for (const id of this.planes.keys()) {
      await this.stopApiServer(id);
      await this.stopEtcd(id);
    }
  }

  /** Fault controls: etcd stops serving (fenced or crashed) / the kube-apiserver's internal address / the load balancer. */
  setEtcdAvailable(technicalID: string, available: boolean): void {
    toggle(this.etcdDown, technicalID, !available);
  }
  breakInternal(technicalID: string, broken = true): void {
    toggle(this.internalBroken, technicalID, broken);
  }
  breakExternal(technicalID: string, broken = true): void {
    toggle(this.externalBroken, technicalID, broken);
  }

  private plane(technicalID: string): Plane {
    let plane = this.planes.get(technicalID);
    if (!plane) this.planes.set(technicalID, (plane = { etcd: false, apiServer: false, controllers: new Map() }));
    return plane;
  }
}

function toggle(set: Set<string>, key: string, on: boolean): void {
  if (on) set.add(key);
  else set.delete(key);
}
