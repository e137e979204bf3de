import type { FailureToleranceType, Seed, Shoot } from '../model/index.js';
import { failureTolerance, technicalID as technicalIDOf } from '../model/index.js';
import {
  HOSTNAME_KEY,
  ROLE_LABEL,
  ROLLOUT_VERSION_LABEL,
  SHOOT_LABEL,
  ZONE_KEY,
  type Affinity,
  type LabelSelector,
  type PodDisruptionBudget,
  type TopologySpreadConstraint,
  type Workload,
} from './kubernetes.js';
import { chooseZones, stableHash } from './zones.js';

/** The control-plane components docs/design.md section 7 lays out, in the order they are reported. */
export const COMPONENTS = [
  'etcd',
  'kube-apiserver',
  'gardener-resource-manager',
  'kube-controller-manager',
  'kube-scheduler',
  'machine-controller-manager',
  'cluster-autoscaler',
] as const;
export type ComponentName = (typeof COMPONENTS)[number];

/**
 * Which of GEP-20's scheduling cases applied:
 * - `single-replica`: nothing to spread;
 * - `single-zone`: all replicas in one zone, spread over nodes (etcd: hostname anti-affinity);
 * - `multi-zone`: replicas <= zones, one replica per zone (zone anti-affinity);
 * - `multi-zone-overflow`: replicas > zones, topology spread over zones (maxSkew 2) and nodes (maxSkew 1).
 */
export type LayoutCase = 'single-replica' | 'single-zone' | 'multi-zone' | 'multi-zone-overflow';

export interface ComponentLayout {
  name: ComponentName;
  replicas: number;
  case: LayoutCase;
  workload: Workload;
  podDisruptionBudget: PodDisruptionBudget;
}

export interface ControlPlaneLayout {
  technicalID: string;
  seedName: string;
  failureTolerance: FailureToleranceType | 'none';
  /** The zones the control plane runs in. */
  zones: string[];
  /** Whether the components are pinned to one zone of a seed with several (none or `node` tolerance). */
  zonePinned: boolean;
  components: ComponentLayout[];
}

export interface LayoutOptions {
  shoot: Pick<Shoot, 'metadata' | 'spec'> & { status?: Partial<Shoot['status']> };
  seed: Pick<Seed, 'metadata' | 'spec'>;
  /** Zones chosen earlier and to keep (volumes live there); default: derived from the technical ID. */
  zones?: string[];
  /** kube-apiserver scales horizontally; its replicas, at least 3 when HA. Default: the minimum. */
  apiServerReplicas?: number;
  /** Value of `gardener.cloud/rolloutVersion`; default: a hash of what the spread depends on, so it changes with it. */
  rolloutVersion?: string;
}

/** Replicas when awake: docs/design.md section 7 (GEP-20's recommended numbers). */
export function replicasFor(
  component: ComponentName,
  tolerance: FailureToleranceType | undefined,
  apiServerReplicas?: number,
): number {
  const ha = tolerance !== undefined;
  switch (component) {
    case 'etcd':
    case 'gardener-resource-manager':
      return ha ? 3 : 1;
    case 'kube-apiserver':
      return Math.max(ha ? 3 : 1, apiServerReplicas ?? 0);
    default:
      return ha ? 2 : 1;
  }
}

function selectorFor(component: ComponentName, technicalID: string): LabelSelector {
  return { matchLabels: { app: component, [SHOOT_LABEL]: technicalID } };
}

function layoutCase(replicas: number, zoneCount: number, tolerance: FailureToleranceType | undefined): LayoutCase {
  if (replicas <= 1) return 'single-replica';
  if (tolerance !== 'zone') return 'single-zone';
  return replicas <= zoneCount ? 'multi-zone' : 'multi-zone-overflow';
}

interface Placement {
  technicalID: string;
  tolerance: FailureToleranceType | undefined;
  zones: string[];
  zonePinned: boolean;
  rolloutVersion: string;
}

function podSpec(
  component: ComponentName,
  replicas: number,
  placement: Placement,
): { affinity?: Affinity; topologySpreadConstraints?: TopologySpreadConstraint[]; case: LayoutCase } {
  const { technicalID, tolerance, zones } = placement;
  const selector = selectorFor(component, technicalID);
  const which = layoutCase(replicas, zones.length, tolerance);
  const affinity: Affinity = {};
  let spread: TopologySpreadConstraint[] | undefined;

  // Keep the pods in the chosen zones: one zone (pinning) or the three of a `zone` control plane.
  if (placement.zonePinned || (tolerance === 'zone' && zones.length > 0)) {
    affinity.nodeAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE_KEY, operator: 'In', values: [...zones] }] }],
      },
    };
  }
  // GEP-20 "Zone Pinning": every pod of the control plane follows the others into their zone.
  if (placement.zonePinned) {
    affinity.podAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { labelSelector: { matchLabels: { [SHOOT_LABEL]: technicalID } }, topologyKey: ZONE_KEY },
      ],
    };
  }

  switch (which) {
    case 'single-replica':
      break;
    case 'single-zone':
      if (component === 'etcd') {
        // GEP-20 "Single-Zone": one etcd member per node, strictly.
        affinity.podAntiAffinity = {
          requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: selector, topologyKey: HOSTNAME_KEY }],
        };
      } else {
        // Best effort without a failure tolerance, strict with one (Gardener's high-availability conventions).
        spread = [
          {
            maxSkew: 1,
            topologyKey: HOSTNAME_KEY,
            whenUnsatisfiable: tolerance === undefined ? 'ScheduleAnyway' : 'DoNotSchedule',
            labelSelector: selector,
          },
        ];
      }
      break;
    case 'multi-zone':
      // GEP-20 "Multi-Zone (#replicas <= #zones)": at most one replica per zone.
      affinity.podAntiAffinity = {
        requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: selector, topologyKey: ZONE_KEY }],
      };
      break;
    case 'multi-zone-overflow': {
      // GEP-20 "Multi-Zone (#replicas > #zones)": spread with skew; the rollout version keeps old and new
      // pods of a rolling update from counting against each other (kubernetes/kubernetes#98215).
      const versioned: LabelSelector = {
        matchLabels: { ...selector.matchLabels, [ROLLOUT_VERSION_LABEL]: placement.rolloutVersion },
      };
      spread = [
        { maxSkew: 2, topologyKey: ZONE_KEY, whenUnsatisfiable: 'DoNotSchedule', labelSelector: versioned },
        { maxSkew: 1, topologyKey: HOSTNAME_KEY, whenUnsatisfiable: 'DoNotSchedule', labelSelector: versioned },
      ];
      break;
    }
  }
  return {
    ...(Object.keys(affinity).length > 0 ? { affinity } : {}),
    ...(spread ? { topologySpreadConstraints: spread } : {}),
    case: which,
  };
}

function componentLayout(
  component: ComponentName,
  awakeReplicas: number,
  hibernated: boolean,
  placement: Placement,
): ComponentLayout {
  const { technicalID } = placement;
  const selector = selectorFor(component, technicalID);
  const labels = { ...selector.matchLabels, [ROLE_LABEL]: 'controlplane' };
  const { case: which, ...spec } = podSpec(component, awakeReplicas, placement);
  const podLabels =
    which === 'multi-zone-overflow' ? { ...labels, [ROLLOUT_VERSION_LABEL]: placement.rolloutVersion } : labels;
  const metadata = { name: component, namespace: technicalID, labels };
  return {
    name: component,
    // Constraints are computed for the awake replicas, so that waking up needs no new layout.
    replicas: hibernated ? 0 : awakeReplicas,
    case: which,
    workload: {
      apiVersion: 'apps/v1',
      kind: component === 'etcd' ? 'StatefulSet' : 'Deployment',
      metadata,
      spec: {
        replicas: hibernated ? 0 : awakeReplicas,
        selector,
        ...(component === 'etcd' ? { serviceName: 'etcd-peer' } : {}),
        template: { metadata: { labels: podLabels }, spec },
      },
    },
    podDisruptionBudget: {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { ...metadata },
      spec: { maxUnavailable: 1, selector, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
    },
  };
}

/**
 * The HA layout of a shoot's control plane on a seed (docs/design.md section 7, GEP-20), as Kubernetes objects: per
 * component a Deployment or StatefulSet carrying replicas, labels, affinity and topology spread constraints,
 * and a PodDisruptionBudget with `maxUnavailable: 1`. Pure: the same shoot and seed give the same objects.
 * Containers are not part of the layout; the seed runtime fills them in.
 */
export function controlPlaneLayout(options: LayoutOptions): ControlPlaneLayout {
  const { shoot, seed } = options;
  const technicalID = shoot.status?.technicalID ?? technicalIDOf(shoot.metadata.project, shoot.metadata.name);
  const tolerance = failureTolerance(shoot.spec);
  const zones = options.zones ?? chooseZones(seed.spec, technicalID, tolerance);
  const zonePinned = tolerance !== 'zone' && seed.spec.provider.zones.length > 1 && zones.length === 1;
  const hibernated = shoot.spec.hibernation?.enabled === true;
  const components = COMPONENTS.map((component) => {
    const replicas = replicasFor(component, tolerance, options.apiServerReplicas);
    const rolloutVersion =
      options.rolloutVersion ??
      `r${stableHash(JSON.stringify([component, replicas, zones, tolerance ?? 'none'])).toString(36)}`;
    return componentLayout(component, replicas, hibernated, {
      technicalID,
      tolerance,
      zones,
      zonePinned,
      rolloutVersion,
    });
  });
  return {
    technicalID,
    seedName: seed.metadata.name,
    failureTolerance: tolerance ?? 'none',
    zones,
    zonePinned,
    components,
  };
}

/** All objects of a layout in one list, for `GET .../controlplane` and for applying them in a runtime. */
export function layoutObjects(layout: ControlPlaneLayout): (Workload | PodDisruptionBudget)[] {
  return layout.components.flatMap((c) => [c.workload, c.podDisruptionBudget]);
}
