import { VIEWERS_GROUP } from '../../../core/kubeconfig/issue.js';

/**
 * What the viewers' group may do in a shoot (Gardener binds `gardener.cloud:system:viewers` to a read-only
 * ClusterRole): get, list and watch every resource but Secrets. RBAC has no "all but", so the core group's
 * resources are named and the other groups are given whole.
 */
export const VIEWER_CLUSTER_ROLE = 'gardener.cloud:system:viewer';

const CORE_RESOURCES = [
  'bindings',
  'componentstatuses',
  'configmaps',
  'endpoints',
  'events',
  'limitranges',
  'namespaces',
  'namespaces/status',
  'nodes',
  'nodes/status',
  'persistentvolumeclaims',
  'persistentvolumeclaims/status',
  'persistentvolumes',
  'persistentvolumes/status',
  'pods',
  'pods/log',
  'pods/status',
  'podtemplates',
  'replicationcontrollers',
  'replicationcontrollers/scale',
  'replicationcontrollers/status',
  'resourcequotas',
  'resourcequotas/status',
  'serviceaccounts',
  'services',
  'services/status',
];
const OTHER_GROUPS = [
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'apps',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
];
const READ = ['get', 'list', 'watch'];

export function viewerClusterRole(): Record<string, unknown> {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: VIEWER_CLUSTER_ROLE, labels: { 'gardener.cloud/role': 'viewer' } },
    rules: [
      { apiGroups: [''], resources: CORE_RESOURCES, verbs: READ },
      { apiGroups: OTHER_GROUPS, resources: ['*'], verbs: READ },
    ],
  };
}

export function viewerClusterRoleBinding(): Record<string, unknown> {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: VIEWER_CLUSTER_ROLE, labels: { 'gardener.cloud/role': 'viewer' } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: VIEWER_CLUSTER_ROLE },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: VIEWERS_GROUP }],
  };
}
