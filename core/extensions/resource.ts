import type { LastOperation } from '../model/common.js';

/**
 * Extension resources as data, shaped like Gardener's `extensions.gardener.cloud/v1alpha1` objects. They
 * live in the shoot's namespace on its seed (`namespace` = the shoot's technical ID); an extension
 * controller (here: an `Actuator` per kind behind the generic driver) acts on them.
 */
export const EXTENSION_API_VERSION = 'extensions.gardenless.io/v1';

export const EXTENSION_KINDS = [
  'Infrastructure',
  'Network',
  'OperatingSystemConfig',
  'ControlPlane',
  'DNSRecord',
  'Worker',
  'BackupEntry',
  'Etcd',
] as const;
export type ExtensionKind = (typeof EXTENSION_KINDS)[number];

/**
 * The order in which a restore (and a create) brings the kinds up: backups and etcd first (the data), then
 * the infrastructure everything else runs in, the network, node configuration, the control plane, its
 * API record (Gardener's `DNSRecord`: it needs the control plane's load balancer), and the machines last.
 * Migrate walks it backwards, so that nothing is cleaned up before what depends on it.
 */
export const RESTORE_ORDER: readonly ExtensionKind[] = [
  'BackupEntry',
  'Etcd',
  'Infrastructure',
  'Network',
  'OperatingSystemConfig',
  'ControlPlane',
  'DNSRecord',
  'Worker',
];
export const MIGRATE_ORDER: readonly ExtensionKind[] = [...RESTORE_ORDER].reverse();

/** The annotation that asks for an operation other than the implicit reconcile of a changed spec. */
export const OPERATION_ANNOTATION = 'gardener.cloud/operation';
export const OPERATIONS = ['reconcile', 'migrate', 'restore'] as const;
export type ExtensionOperation = (typeof OPERATIONS)[number];

/** A resource that an extension references (usually a secret), kept in `status.resources` so it moves with the shoot. */
export interface NamedResourceReference {
  name: string;
  resourceRef: { kind: string; name: string; apiVersion?: string };
}

export interface ExtensionStatus {
  /** What the extension needs to carry its work to another seed (Terraform state, machine state, ...). Any JSON. */
  state?: unknown;
  resources?: NamedResourceReference[];
  lastOperation?: LastOperation;
  /** The `generation` the last successful operation acted on. */
  observedGeneration?: number;
}

export interface ExtensionResource {
  apiVersion: typeof EXTENSION_API_VERSION;
  kind: ExtensionKind;
  name: string;
  /** The shoot's technical ID (`shoot--<project>--<name>`). */
  namespace: string;
  /** Several resources of one kind are told apart by purpose (ControlPlane `normal` / `exposure`). */
  purpose?: string;
  /** Increases with every spec change; `status.observedGeneration` tells whether it has been acted on. */
  generation: number;
  /** The provider-specific desired state; opaque to the driver. */
  spec: Record<string, unknown>;
  status: ExtensionStatus;
  annotations: Record<string, string>;
  /** Set when the resource is being deleted (the actuator's `delete` runs, then the resource is gone). */
  deletionTimestamp?: string;
}

/** Identity of an extension resource within its namespace. */
export function extensionId(resource: Pick<ExtensionResource, 'kind' | 'name' | 'purpose'>): string {
  return resource.purpose === undefined
    ? `${resource.kind}/${resource.name}`
    : `${resource.kind}/${resource.name}/${resource.purpose}`;
}

export function newExtension(options: {
  kind: ExtensionKind;
  namespace: string;
  name?: string;
  purpose?: string;
  spec?: Record<string, unknown>;
  annotations?: Record<string, string>;
}): ExtensionResource {
  return {
    apiVersion: EXTENSION_API_VERSION,
    kind: options.kind,
    name: options.name ?? options.namespace,
    namespace: options.namespace,
    ...(options.purpose === undefined ? {} : { purpose: options.purpose }),
    generation: 1,
    spec: options.spec ?? {},
    status: {},
    annotations: { ...(options.annotations ?? {}) },
  };
}

/** The operation the annotation asks for, or undefined when it is absent or not one of the three. */
export function requestedOperation(resource: Pick<ExtensionResource, 'annotations'>): ExtensionOperation | undefined {
  const value = resource.annotations[OPERATION_ANNOTATION];
  return (OPERATIONS as readonly string[]).includes(value ?? '') ? (value as ExtensionOperation) : undefined;
}

/** The resource with the operation annotation set: how the garden side asks for migrate or restore. */
export function annotate(resource: ExtensionResource, operation: ExtensionOperation): ExtensionResource {
  return { ...resource, annotations: { ...resource.annotations, [OPERATION_ANNOTATION]: operation } };
}

export function withoutOperationAnnotation(resource: ExtensionResource): ExtensionResource {
  if (!(OPERATION_ANNOTATION in resource.annotations)) return resource;
  const { [OPERATION_ANNOTATION]: _removed, ...annotations } = resource.annotations;
  return { ...resource, annotations };
}
