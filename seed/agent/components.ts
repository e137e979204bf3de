import type { ComponentName } from '../../core/ha/layout.js';
import { ComponentWaitError } from './errors.js';

/**
 * One part of a shoot's control plane behind one contract, as Gardener's `component.DeployWaiter`: the
 * runtime composes the parts into its flows (`seed/agent/control-plane-flow.ts`) and knows nothing of how
 * a hosting renders one (a process on a local seed, objects on a Kubernetes seed, a flag in memory).
 * Every method is idempotent.
 */
export interface DeployWaiter<Spec, Deployed = void> {
  readonly name: ComponentName;
  /** Makes it run as `spec` says (starting, updating or scaling it). */
  deploy(spec: Spec): Promise<Deployed>;
  /**
   * Makes it stop running. What it keeps stays (a data dir, a volume, a Kubernetes seed's objects at zero
   * replicas, as a hibernated shoot's are): the plane's removal deletes that.
   */
  destroy(): Promise<void>;
  /** Resolves once it serves; rejects after `timeoutMs` or on `signal`. */
  wait(options: WaitOptions): Promise<void>;
  /** Resolves once nothing of it runs any more; rejects after `timeoutMs` or on `signal`. */
  waitCleanup(options: WaitOptions): Promise<void>;
}

export interface WaitOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * kube-apiserver: also until clients outside the seed reach it (a local seed's load balancer forwards to
   * it, which it does only while etcd serves as this seed's); where the hosting routes to whatever is ready
   * (a Service's endpoints), ready is reachable.
   */
  reachable?: boolean;
}

export interface ApiServerSpec {
  /** The shoot's API domain (`api.<shoot>.<project>.<external domain>`): its kube-apiserver's name. */
  apiDomain?: string;
  /**
   * Held until the plane is this seed's: on a standby (etcd restored ahead, every write refused), or on a
   * live walk's destination member before the owner record names it. Its controllers do not run then.
   */
  standby?: boolean;
  /** The shoot's failure tolerance (GEP-20): where a hosting places it by it. */
  failureTolerance?: 'node' | 'zone';
  replicas?: number;
}

export interface ControllerSpec {
  /** After the dependency watchdog's hold: 0 stops it. */
  replicas: number;
  /** The replicas the watchdog remembered while it holds the component down (kept with the workload). */
  remembered?: number;
  failureTolerance?: 'node' | 'zone';
}

/** The components that run on the shoot's kube-apiserver. */
export type ControllerName = Exclude<ComponentName, 'etcd' | 'kube-apiserver'>;

/**
 * The controllers a seed runs. GEP-20 lays out gardener-resource-manager, machine-controller-manager and
 * cluster-autoscaler too, and the API reports their layout, but no hosting runs them: a gardenless shoot
 * has no worker pools (Gardener's workerless shoots run neither machine-controller-manager nor
 * cluster-autoscaler), and the agent applies the shoot's own system objects itself (the viewers' RBAC),
 * which is gardener-resource-manager's job in Gardener (docs/design.md section 9).
 */
export const HOSTED_CONTROLLERS = [
  'kube-controller-manager',
  'kube-scheduler',
] as const satisfies readonly ControllerName[];
export type HostedController = (typeof HOSTED_CONTROLLERS)[number];

/** Every controller: the hosted ones as `hosted` makes them, the others `notHosted`. */
export function controllers(
  hosted: (name: HostedController) => DeployWaiter<ControllerSpec>,
): Record<ControllerName, DeployWaiter<ControllerSpec>> {
  return {
    'kube-controller-manager': hosted('kube-controller-manager'),
    'kube-scheduler': hosted('kube-scheduler'),
    'gardener-resource-manager': notHosted('gardener-resource-manager'),
    'machine-controller-manager': notHosted('machine-controller-manager'),
    'cluster-autoscaler': notHosted('cluster-autoscaler'),
  };
}

/**
 * A component no hosting runs (`HOSTED_CONTROLLERS`):
 * deploying and destroying it change nothing, and it is always cleaned up. Waiting for it to serve is an
 * error in the flow, not a wait.
 */
export function notHosted<Spec>(name: ComponentName): DeployWaiter<Spec> {
  return {
    name,
    deploy: async () => {},
    destroy: async () => {},
    wait: async () => {
      throw new Error(`${name} does not run on this seed: nothing to wait for`);
    },
    waitCleanup: async () => {},
  };
}

/** Polls `done` every `intervalMs` until it holds; rejects with `describe()` after the timeout or on abort. */
export async function pollUntil(
  done: () => Promise<boolean>,
  options: WaitOptions & { intervalMs?: number; describe: () => Promise<string> | string },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (await done()) return;
    if (Date.now() >= deadline || options.signal?.aborted) throw new ComponentWaitError(await options.describe());
    await new Promise<void>((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
  }
}
