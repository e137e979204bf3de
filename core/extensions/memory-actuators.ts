import { createHash } from 'node:crypto';
import type { Actuator, ActuatorInput, ActuatorResult, ActuatorSet } from './actuator.js';
import { MissingExtensionStateError } from './errors.js';
import { EXTENSION_KINDS, extensionId, type ExtensionKind, type ExtensionResource } from './resource.js';

/** Kinds whose restore without saved state would create new infrastructure or machines instead of adopting them. */
export const STATEFUL_KINDS: ReadonlySet<ExtensionKind> = new Set(['Infrastructure', 'Worker']);

interface ExternalResource {
  id: string;
  kind: ExtensionKind;
  /** How often it was created: more than once means an operation recreated what should have been kept. */
  creations: number;
}

/**
 * The world outside the seeds that extensions act on (the cloud account, DNS, machines), shared by every
 * seed's actuators, plus the seed-local objects each seed holds for a shoot. Tests read it to assert that
 * a migrate cleaned up only the seed and that a restore adopted instead of recreating.
 */
export class MemoryExtensionWorld {
  private readonly external = new Map<string, ExternalResource>();
  private readonly local = new Map<string, Set<string>>();

  externalResource(key: string): Readonly<ExternalResource> | undefined {
    return this.external.get(key);
  }
  externalKeys(): string[] {
    return [...this.external.keys()].sort();
  }
  seedObjects(seed: string): string[] {
    return [...(this.local.get(seed) ?? [])].sort();
  }

  ensureExternal(key: string, kind: ExtensionKind, id: string): ExternalResource {
    const existing = this.external.get(key);
    if (existing) return existing;
    const created = { id, kind, creations: 1 };
    this.external.set(key, created);
    return created;
  }
  /** Recreates an external resource that a buggy restore would replace (for fault tests). */
  recreateExternal(key: string, kind: ExtensionKind, id: string): void {
    const previous = this.external.get(key);
    this.external.set(key, { id, kind, creations: (previous?.creations ?? 0) + 1 });
  }
  deleteExternal(key: string): void {
    this.external.delete(key);
  }
  addSeedObject(seed: string, key: string): void {
    let objects = this.local.get(seed);
    if (!objects) this.local.set(seed, (objects = new Set()));
    objects.add(key);
  }
  removeSeedObject(seed: string, key: string): void {
    this.local.get(seed)?.delete(key);
  }
}

export function externalKey(resource: Pick<ExtensionResource, 'namespace' | 'kind' | 'name' | 'purpose'>): string {
  return `${resource.namespace}/${extensionId(resource)}`;
}

function digest(text: string, length = 8): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/**
 * The deterministic fake state of each kind: what the real extension would keep (Terraform state,
 * machine state, ...), derived from the resource identity and generation only, so that tests can
 * predict it exactly.
 */
export function fakeState(resource: ExtensionResource, externalId: string): Record<string, unknown> {
  const seed = digest(externalKey(resource));
  const base = { kind: resource.kind, externalId, generation: resource.generation };
  switch (resource.kind) {
    case 'Infrastructure':
      return {
        ...base,
        terraform: { version: 4, serial: resource.generation, lineage: `${seed}-lineage` },
        vpcId: `vpc-${seed}`,
        subnets: [`subnet-${seed}-a`, `subnet-${seed}-b`, `subnet-${seed}-c`],
      };
    case 'Network':
      return { ...base, ipamPool: `ipam-${seed}` };
    case 'OperatingSystemConfig':
      return { ...base, cloudConfigChecksum: digest(JSON.stringify(resource.spec), 16) };
    case 'ControlPlane':
      return { ...base, cloudControllerManager: { leaderLease: `lease-${seed}` } };
    case 'DNSRecord':
      // Gardener's DNSRecord keeps the zone it found for the name, so that the destination need not look it up again.
      return {
        ...base,
        name: typeof resource.spec.name === 'string' ? resource.spec.name : `api.${resource.namespace}`,
        zone: typeof resource.spec.zone === 'string' ? resource.spec.zone : `zone-${seed}`,
      };
    case 'Worker': {
      const replicas = typeof resource.spec.minimum === 'number' ? resource.spec.minimum : 1;
      return {
        ...base,
        machineDeployments: [{ name: `${resource.name}-${seed}`, replicas }],
        machines: Array.from({ length: replicas }, (_, i) => `machine-${seed}-${i}`),
      };
    }
    case 'BackupEntry':
      return {
        ...base,
        bucket: typeof resource.spec.bucketName === 'string' ? resource.spec.bucketName : `bucket-${seed}`,
        prefix: `${resource.namespace}/v2`,
      };
    case 'Etcd':
      return { ...base, backupPrefix: `${resource.namespace}/v2`, memberId: `member-${seed}` };
  }
}

/** The id of the external resource the saved state points at, if it points at one. */
function savedExternalId(state: unknown): string | undefined {
  if (typeof state !== 'object' || state === null) return undefined;
  const id = (state as { externalId?: unknown }).externalId;
  return typeof id === 'string' ? id : undefined;
}

class MemoryActuator implements Actuator {
  constructor(
    readonly kind: ExtensionKind,
    private readonly world: MemoryExtensionWorld,
    private readonly seed: string,
  ) {}

  async reconcile({ resource }: ActuatorInput): Promise<ActuatorResult> {
    const key = externalKey(resource);
    // Adopt what exists (a reconcile after a restore, or a retry); create only what is missing.
    const external = this.world.ensureExternal(
      key,
      this.kind,
      savedExternalId(resource.status.state) ?? `${this.kind.toLowerCase()}-${digest(key)}`,
    );
    this.world.addSeedObject(this.seed, key);
    return {
      state: fakeState(resource, external.id),
      resources: [{ name: 'cloudprovider', resourceRef: { kind: 'Secret', name: `cloudprovider-${digest(key, 6)}` } }],
    };
  }

  async delete({ resource }: ActuatorInput): Promise<void> {
    const key = externalKey(resource);
    this.world.deleteExternal(key);
    this.world.removeSeedObject(this.seed, key);
  }

  async migrate({ resource }: ActuatorInput): Promise<ActuatorResult> {
    const key = externalKey(resource);
    // Only the seed-local objects go; the external resource is handed over as it is.
    this.world.removeSeedObject(this.seed, key);
    const external = this.world.externalResource(key);
    return external ? { state: fakeState(resource, external.id) } : {};
  }

  async restore(input: ActuatorInput): Promise<ActuatorResult> {
    const { resource } = input;
    if (STATEFUL_KINDS.has(this.kind) && savedExternalId(resource.status.state) === undefined) {
      throw new MissingExtensionStateError(
        `${extensionId(resource)} in ${resource.namespace} has no saved state to restore from; a reconcile would create new ${this.kind === 'Worker' ? 'machines' : 'infrastructure'}`,
      );
    }
    return this.reconcile(input);
  }
}

/**
 * An actuator for every kind acting on an in-memory world: what the local seed runtime uses and what
 * unit tests drive. `seed` names the seed whose local objects the actuators manage.
 */
export function memoryActuators(options: { world: MemoryExtensionWorld; seed: string }): Required<ActuatorSet> {
  return Object.fromEntries(
    EXTENSION_KINDS.map((kind) => [kind, new MemoryActuator(kind, options.world, options.seed)]),
  ) as unknown as Required<ActuatorSet>;
}

export type ActuatorMethod = 'reconcile' | 'delete' | 'migrate' | 'restore';

/** An actuator whose chosen methods (default: all) always throw: for fault tests of the driver and the flows. */
export class FailingActuator implements Actuator {
  private readonly failing: ReadonlySet<ActuatorMethod>;

  constructor(
    readonly kind: ExtensionKind,
    private readonly options: { methods?: readonly ActuatorMethod[]; message?: string; delegate?: Actuator } = {},
  ) {
    this.failing = new Set(options.methods ?? ['reconcile', 'delete', 'migrate', 'restore']);
  }

  private fail(method: ActuatorMethod): never {
    throw new Error(this.options.message ?? `${this.kind} ${method} failed (failing actuator)`);
  }

  async reconcile(input: ActuatorInput): Promise<ActuatorResult> {
    if (this.failing.has('reconcile') || !this.options.delegate) this.fail('reconcile');
    return this.options.delegate.reconcile(input);
  }
  async delete(input: ActuatorInput): Promise<void> {
    if (this.failing.has('delete') || !this.options.delegate) this.fail('delete');
    return this.options.delegate.delete(input);
  }
  async migrate(input: ActuatorInput): Promise<ActuatorResult> {
    if (this.failing.has('migrate') || !this.options.delegate) this.fail('migrate');
    return this.options.delegate.migrate(input);
  }
  async restore(input: ActuatorInput): Promise<ActuatorResult> {
    if (this.failing.has('restore') || !this.options.delegate) this.fail('restore');
    return this.options.delegate.restore(input);
  }
}

/** A set whose every kind fails the given methods (delegating the others to `delegates` when given). */
export function failingActuators(
  options: { methods?: readonly ActuatorMethod[]; message?: string; delegates?: ActuatorSet } = {},
): Required<ActuatorSet> {
  return Object.fromEntries(
    EXTENSION_KINDS.map((kind) => {
      const delegate = options.delegates?.[kind];
      return [
        kind,
        new FailingActuator(kind, {
          ...(options.methods ? { methods: options.methods } : {}),
          ...(options.message ? { message: options.message } : {}),
          ...(delegate ? { delegate } : {}),
        }),
      ];
    }),
  ) as unknown as Required<ActuatorSet>;
}

/**
 * The standard set of extension resources of a shoot (ControlPlane twice: `normal` and `exposure`; the
 * DNSRecord of the API domain, `external`, when the shoot has one).
 */
export function shootExtensions(options: {
  technicalID: string;
  backupBucket?: string;
  workerMinimum?: number;
  apiDomain?: string;
}): ExtensionResource[] {
  const ns = options.technicalID;
  const make = (
    kind: ExtensionKind,
    extra: { purpose?: string; spec?: Record<string, unknown>; name?: string } = {},
  ): ExtensionResource => ({
    apiVersion: 'extensions.gardenless.io/v1',
    kind,
    name: extra.name ?? ns,
    namespace: ns,
    ...(extra.purpose === undefined ? {} : { purpose: extra.purpose }),
    generation: 1,
    spec: { type: 'aws', ...(extra.spec ?? {}) },
    status: {},
    annotations: {},
  });
  return [
    make('BackupEntry', { spec: options.backupBucket ? { bucketName: options.backupBucket } : {} }),
    make('Etcd', { name: 'etcd-main' }),
    make('Infrastructure'),
    make('Network'),
    make('OperatingSystemConfig', { name: `${ns}-worker` }),
    make('ControlPlane', { purpose: 'normal' }),
    make('ControlPlane', { name: `${ns}-exposure`, purpose: 'exposure' }),
    make('DNSRecord', {
      name: `${ns}-external`,
      purpose: 'external',
      spec: { type: 'aws-route53', ...(options.apiDomain ? { name: options.apiDomain } : {}) },
    }),
    make('Worker', { spec: { minimum: options.workerMinimum ?? 2 } }),
  ];
}
