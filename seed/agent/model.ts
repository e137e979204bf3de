import {
  GARDEN_ROLE_CONTROLPLANE,
  GARDEN_ROLE_LABEL,
  ROLE_LABEL,
  SCALE_DOWN_ORDER,
  type ScalableDependent,
} from '../../core/dwd/components.js';
import { reconcileReplicas, type HeldComponent, type WatchdogHold } from '../../core/dwd/reconcile-guard.js';
import { COMPONENTS, replicasFor, type ComponentName } from '../../core/ha/layout.js';
import type { HostedControlPlane } from '../../core/model/seed.js';

/**
 * The modelled part of a control plane: every component's replicas and its pods, with the pod states a
 * kubelet would report. Pure state and pure functions; the runtimes feed it what they observe (is etcd
 * available, does kube-apiserver answer) and report it in the seed heartbeat.
 */

export type PodState = 'Running' | 'CrashLoopBackOff' | 'NotReady';
export type Pod = NonNullable<HostedControlPlane['pods']>[number] & { component: ComponentName; state: PodState };

export interface ControlPlaneModel {
  technicalID: string;
  hibernated: boolean;
  failureTolerance?: 'node' | 'zone';
  replicas: Record<ComponentName, number>;
  pods: Pod[];
  /** What the dependency watchdog holds down: remembered on scale to 0, so a reconcile keeps it down. */
  hold: { scaledDown: boolean; rememberedReplicas: Partial<Record<ScalableDependent, number>> };
  /** Bumped for every pod created, so a restarted pod gets a new name and uid as in Kubernetes. */
  podSerial: number;
}

/** The `role` label each component's pods carry (the weeder's selectors exclude `apiserver` and etcd's `main`). */
export const ROLE_OF: Record<ComponentName, string> = {
  etcd: 'main',
  'kube-apiserver': 'apiserver',
  'gardener-resource-manager': 'gardener-resource-manager',
  'kube-controller-manager': 'controller-manager',
  'kube-scheduler': 'scheduler',
  'machine-controller-manager': 'machine-controller-manager',
  'cluster-autoscaler': 'cluster-autoscaler',
};

/** Replicas a reconcile wants: the HA layout's numbers awake, zero hibernated. */
export function desiredReplicas(spec: {
  hibernated: boolean;
  failureTolerance?: 'node' | 'zone';
}): Record<ComponentName, number> {
  return Object.fromEntries(
    COMPONENTS.map((c) => [c, spec.hibernated ? 0 : replicasFor(c, spec.failureTolerance)]),
  ) as Record<ComponentName, number>;
}

export function newModel(options: {
  technicalID: string;
  hibernated: boolean;
  failureTolerance?: 'node' | 'zone';
}): ControlPlaneModel {
  return {
    technicalID: options.technicalID,
    hibernated: options.hibernated,
    ...(options.failureTolerance ? { failureTolerance: options.failureTolerance } : {}),
    replicas: Object.fromEntries(COMPONENTS.map((c) => [c, 0])) as Record<ComponentName, number>,
    pods: [],
    hold: { scaledDown: false, rememberedReplicas: {} },
    podSerial: 0,
  };
}

/**
 * Brings the replicas to the spec, except for what the watchdog holds down (`reconcileReplicas`):
 * Gardener once scaled kube-controller-manager back up in a reconcile during the very outage it hid.
 */
export function reconcileModel(
  model: ControlPlaneModel,
  spec: { hibernated: boolean; failureTolerance?: 'node' | 'zone' },
): { held: HeldComponent[] } {
  model.hibernated = spec.hibernated;
  if (spec.failureTolerance) model.failureTolerance = spec.failureTolerance;
  const { replicas, held } = reconcileReplicas(
    desiredReplicas({
      hibernated: spec.hibernated,
      ...(model.failureTolerance ? { failureTolerance: model.failureTolerance } : {}),
    }),
    model.hold as WatchdogHold,
  );
  model.replicas = replicas;
  syncPods(model);
  return { held };
}

/**
 * A scale command of the prober. Scaling to 0 remembers the replicas before (the first time only, so a
 * repeated command does not remember 0); scaling up releases the hold of that component.
 */
export function scaleModel(
  model: ControlPlaneModel,
  component: ScalableDependent,
  replicas: number,
): { previousReplicas: number } {
  const previousReplicas = model.replicas[component];
  if (replicas === 0) {
    if (!(component in model.hold.rememberedReplicas)) model.hold.rememberedReplicas[component] = previousReplicas;
  } else {
    delete model.hold.rememberedReplicas[component];
  }
  model.hold.scaledDown = SCALE_DOWN_ORDER.some((c) => c in model.hold.rememberedReplicas);
  model.replicas[component] = replicas;
  syncPods(model);
  return { previousReplicas };
}

/** The dependency watchdog's hold as a record kept it: these components stay down until it scales them up. */
export function holdDown(model: ControlPlaneModel, remembered: Partial<Record<ScalableDependent, number>>): void {
  for (const c of SCALE_DOWN_ORDER) if (remembered[c] !== undefined) model.hold.rememberedReplicas[c] = remembered[c];
  model.hold.scaledDown = SCALE_DOWN_ORDER.some((c) => c in model.hold.rememberedReplicas);
}

/** What the runtime observed of the two dependencies. */
export interface Observation {
  etcdAvailable: boolean;
  apiServerAvailable: boolean;
}

/**
 * Applies what kubelets would see: kube-apiserver pods crash-loop while etcd is unavailable, every other
 * control-plane pod while kube-apiserver is. A crash-looping pod stays so after the dependency returns
 * (CrashLoopBackOff's back-off grows to minutes): bringing it back is the weeder's restart.
 */
export function observe(model: ControlPlaneModel, seen: Observation): void {
  for (const pod of model.pods) {
    if (pod.component === 'etcd') pod.state = seen.etcdAvailable ? 'Running' : 'NotReady';
    else if (!dependencyAvailable(pod.component, seen)) pod.state = 'CrashLoopBackOff';
  }
}

/** The weeder's restart: the pod is deleted and comes back as a new pod, Running if its dependency is available. */
export function restartPod(
  model: ControlPlaneModel,
  podName: string,
  seen: Observation,
): { restarted: boolean; found: boolean } {
  const index = model.pods.findIndex((p) => p.name === podName);
  if (index < 0) return { restarted: false, found: false };
  const pod = model.pods[index]!;
  if (pod.state !== 'CrashLoopBackOff') return { restarted: false, found: true };
  const fresh = newPod(model, pod.component);
  fresh.state = dependencyAvailable(pod.component, seen) ? 'Running' : 'CrashLoopBackOff';
  model.pods.splice(index, 1, fresh);
  return { restarted: true, found: true };
}

function dependencyAvailable(component: ComponentName, seen: Observation): boolean {
  if (component === 'etcd') return true;
  if (component === 'kube-apiserver') return seen.etcdAvailable;
  return seen.apiServerAvailable;
}

/** Adds or removes pods so that each component has as many as its replicas (the newest go first). */
export function syncPods(model: ControlPlaneModel): void {
  for (const component of COMPONENTS) {
    const mine = model.pods.filter((p) => p.component === component);
    const want = model.replicas[component];
    for (let i = mine.length; i < want; i++) model.pods.push(newPod(model, component));
    for (const extra of mine.slice(want)) model.pods.splice(model.pods.indexOf(extra), 1);
  }
}

function newPod(model: ControlPlaneModel, component: ComponentName): Pod {
  model.podSerial += 1;
  const suffix = model.podSerial.toString(36).padStart(5, '0');
  return {
    name: component === 'etcd' ? `etcd-main-${suffix}` : `${component}-${suffix}`,
    uid: `${model.technicalID}-${suffix}`,
    component,
    labels: {
      [GARDEN_ROLE_LABEL]: GARDEN_ROLE_CONTROLPLANE,
      [ROLE_LABEL]: ROLE_OF[component],
      app: component,
      'gardener.cloud/shoot': model.technicalID,
    },
    state: 'Running',
  };
}

/** The model's part of the heartbeat. */
export function reportModel(model: ControlPlaneModel): Pick<HostedControlPlane, 'components' | 'pods'> {
  return {
    components: Object.fromEntries(COMPONENTS.map((c) => [c, { replicas: model.replicas[c] }])),
    pods: model.pods.slice(0, 200).map(({ component: _component, ...pod }) => pod),
  };
}
