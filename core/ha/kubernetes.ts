/** The slice of the Kubernetes API the control-plane layout emits, as plain JSON shapes. */

export interface LabelSelector {
  matchLabels: Record<string, string>;
}

export interface PodAffinityTerm {
  labelSelector: LabelSelector;
  topologyKey: string;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: 'In';
  values: string[];
}

export interface Affinity {
  nodeAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: { matchExpressions: NodeSelectorRequirement[] }[];
    };
  };
  podAffinity?: { requiredDuringSchedulingIgnoredDuringExecution: PodAffinityTerm[] };
  podAntiAffinity?: { requiredDuringSchedulingIgnoredDuringExecution: PodAffinityTerm[] };
}

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  labelSelector: LabelSelector;
}

export interface ObjectMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
}

export interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: { affinity?: Affinity; topologySpreadConstraints?: TopologySpreadConstraint[] };
}

export interface Workload {
  apiVersion: 'apps/v1';
  kind: 'Deployment' | 'StatefulSet';
  metadata: ObjectMeta;
  spec: { replicas: number; selector: LabelSelector; serviceName?: string; template: PodTemplate };
}

export interface PodDisruptionBudget {
  apiVersion: 'policy/v1';
  kind: 'PodDisruptionBudget';
  metadata: ObjectMeta;
  spec: { maxUnavailable: number; selector: LabelSelector; unhealthyPodEvictionPolicy: 'AlwaysAllow' };
}

export const ZONE_KEY = 'topology.kubernetes.io/zone';
export const HOSTNAME_KEY = 'kubernetes.io/hostname';
export const SHOOT_LABEL = 'gardener.cloud/shoot';
export const ROLE_LABEL = 'gardener.cloud/role';
export const ROLLOUT_VERSION_LABEL = 'gardener.cloud/rolloutVersion';
