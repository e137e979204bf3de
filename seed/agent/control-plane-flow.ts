import { COMPONENTS, replicasFor, type ComponentName } from '../../core/ha/layout.js';
import type { ControllerName, WaitOptions } from './components.js';
import type { ControlPlaneComponents } from './hosting.js';

/** The controllers, in the layout's order: each runs on the shoot's kube-apiserver. */
export const CONTROLLERS = COMPONENTS.filter((c): c is ControllerName => c !== 'etcd' && c !== 'kube-apiserver');

export interface KubeDeploy {
  apiDomain?: string;
  /** Per component, after the dependency watchdog's hold; a component not named gets the layout's replicas. */
  replicas?: Partial<Record<ComponentName, number>>;
  /** The replicas the watchdog remembered for what it holds down. */
  remembered?: Partial<Record<ComponentName, number>>;
  /** kube-apiserver alone, its controllers held until the plane is this seed's (a standby, a live walk's member). */
  standby?: boolean;
  failureTolerance?: 'node' | 'zone';
}

/**
 * The Kubernetes control plane on the shoot's etcd: kube-apiserver first, then every controller at its
 * replicas (none on a standby, none the watchdog holds at 0). Not waited for: a Create or a wake waits for
 * kube-apiserver alone (`waitForApiServer`), and the controllers retry until it answers, as in a cluster.
 */
export async function deployKube(components: ControlPlaneComponents, input: KubeDeploy): Promise<void> {
  const tolerance = input.failureTolerance ? { failureTolerance: input.failureTolerance } : {};
  await components['kube-apiserver'].deploy({
    ...(input.apiDomain ? { apiDomain: input.apiDomain } : {}),
    ...(input.standby ? { standby: true } : {}),
    ...(input.replicas?.['kube-apiserver'] === undefined ? {} : { replicas: input.replicas['kube-apiserver'] }),
    ...tolerance,
  });
  await Promise.all(
    CONTROLLERS.map((name) => {
      const remembered = input.remembered?.[name];
      return components.controllers[name].deploy({
        replicas: input.standby ? 0 : (input.replicas?.[name] ?? replicasFor(name, input.failureTolerance)),
        ...(remembered === undefined ? {} : { remembered }),
        ...tolerance,
      });
    }),
  );
}

/** The controllers first, so that none acts on a kube-apiserver that is going; then kube-apiserver. */
export async function destroyKube(components: ControlPlaneComponents): Promise<void> {
  await Promise.all(CONTROLLERS.map((name) => components.controllers[name].destroy()));
  await components['kube-apiserver'].destroy();
}

/** Until nothing of the Kubernetes control plane runs: before a restore replaces the etcd it read. */
export async function waitKubeCleanup(components: ControlPlaneComponents, options: WaitOptions): Promise<void> {
  await Promise.all(CONTROLLERS.map((name) => components.controllers[name].waitCleanup(options)));
  await components['kube-apiserver'].waitCleanup(options);
}

/** Everything stops; what it keeps stays for the plane's removal. */
export async function destroyAll(components: ControlPlaneComponents): Promise<void> {
  await destroyKube(components);
  await components.etcd.destroy();
}
