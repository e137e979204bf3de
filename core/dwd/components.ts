/**
 * Names the dependency watchdog acts on. They are the Deployment names of the control-plane
 * components in a shoot namespace, so the seed agent can apply a command without a lookup table.
 */
export const KUBE_APISERVER = 'kube-apiserver';
export const ETCD = 'etcd';
export const KUBE_CONTROLLER_MANAGER = 'kube-controller-manager';
export const MACHINE_CONTROLLER_MANAGER = 'machine-controller-manager';
export const CLUSTER_AUTOSCALER = 'cluster-autoscaler';

/**
 * The prober's dependents in scale-down order. kube-controller-manager goes first because it is the
 * one that marks nodes NotReady and evicts their pods when kubelets cannot reach the API server;
 * machine-controller-manager would then replace those "unhealthy" machines and cluster-autoscaler
 * would add more. Scale-up walks this list backwards.
 */
export const SCALE_DOWN_ORDER = [KUBE_CONTROLLER_MANAGER, MACHINE_CONTROLLER_MANAGER, CLUSTER_AUTOSCALER] as const;

export type ScalableDependent = (typeof SCALE_DOWN_ORDER)[number];

/** Reverse of {@link SCALE_DOWN_ORDER}: restore the consumers after the things they drive. */
export const SCALE_UP_ORDER: readonly ScalableDependent[] = [...SCALE_DOWN_ORDER].reverse();

/** Dependencies the weeder watches. */
export const WEEDER_DEPENDENCIES = [ETCD, KUBE_APISERVER] as const;
export type WeederDependency = (typeof WEEDER_DEPENDENCIES)[number];

/** Labels Gardener puts on control-plane pods; the weeder's default selectors use them. */
export const GARDEN_ROLE_LABEL = 'gardener.cloud/role';
export const GARDEN_ROLE_CONTROLPLANE = 'controlplane';
export const ROLE_LABEL = 'role';
