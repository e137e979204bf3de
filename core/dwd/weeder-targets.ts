import {
  ETCD,
  GARDEN_ROLE_CONTROLPLANE,
  GARDEN_ROLE_LABEL,
  KUBE_APISERVER,
  ROLE_LABEL,
  type WeederDependency,
} from './components.js';
import type { LabelSelector } from './label-selector.js';

/** One dependency the weeder watches and the pods that crash-loop while it is gone. */
export interface WeederTarget {
  dependency: WeederDependency;
  dependantSelector: LabelSelector;
}

/** `role` label values of the pods that are themselves dependencies, never dependants of the API server. */
export const APISERVER_ROLE = 'apiserver';
export const ETCD_ROLES = ['main', 'events'] as const;

// Typed before freezing so the selector operators keep their literal types.
const defaultTargets: WeederTarget[] = [
  {
    dependency: ETCD,
    dependantSelector: {
      matchLabels: { [GARDEN_ROLE_LABEL]: GARDEN_ROLE_CONTROLPLANE, [ROLE_LABEL]: APISERVER_ROLE },
    },
  },
  {
    dependency: KUBE_APISERVER,
    dependantSelector: {
      matchLabels: { [GARDEN_ROLE_LABEL]: GARDEN_ROLE_CONTROLPLANE },
      matchExpressions: [{ key: ROLE_LABEL, operator: 'NotIn', values: [APISERVER_ROLE, ...ETCD_ROLES] }],
    },
  },
];

/**
 * Seed bootstrapping's weeder configuration: kube-apiserver pods depend on etcd; every other
 * control-plane pod depends on kube-apiserver. The API server and etcd are excluded from the second
 * selector because restarting them when the API server recovers would undo the recovery.
 */
export const DEFAULT_WEEDER_TARGETS: readonly WeederTarget[] = Object.freeze(defaultTargets);

/** The default target for a dependency. */
export function defaultWeederTarget(dependency: WeederDependency): WeederTarget {
  const target = DEFAULT_WEEDER_TARGETS.find((t) => t.dependency === dependency);
  // Unreachable while DEFAULT_WEEDER_TARGETS covers WEEDER_DEPENDENCIES; a unit test holds that line.
  if (target === undefined) throw new Error(`no default weeder target for ${dependency}`);
  return target;
}
