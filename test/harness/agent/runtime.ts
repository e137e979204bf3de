import type { CommandOf, CommandResult, CommandType, SeedCommand } from '../../../core/commands/index.js';
import {
  externalKey,
  operateAll,
  memoryActuators,
  MemoryExtensionWorld,
  RESTORE_ORDER,
  shootExtensions,
  type ActuatorSet,
  type ExtensionResource,
  type OperateOutcome,
} from '../../../core/extensions/index.js';
import type { HostedControlPlane } from '../../../core/model/seed.js';
import { BlobIntegrityError, BlobNotFoundError, BlobStoreError, migrateExtensions, restoreExtensions, type BlobStore } from '../../../core/shootstate/index.js';
import { SnapshotStoreError, type SnapshotStore } from '../../../core/snapshots/index.js';
import { AgentCommandError } from '../../../seed/agent/errors.js';
import { summarizeRestore } from '../../../seed/agent/restore-check.js';

// Generic parts moved to the seed agent; re-exported so the test agent and its tests keep their imports.
export { AgentCommandError } from '../../../seed/agent/errors.js';
export { summarizeRestore, type RestoreSummary } from '../../../seed/agent/restore-check.js';

/** The owner check the restore makes: this seed may activate only while the owner record names it. */
export type OwnerCheck = (shoot: SeedCommand['shoot']) => Promise<'owner' | 'not-owner' | 'unknown'>;

export interface TestSeedRuntimeOptions {
  seed: string;
  /** The world outside the seeds; share one between agents to see a restore adopt what a migrate kept. */
  world?: MemoryExtensionWorld;
  /** Default: the in-memory actuators of core/extensions acting on `world`. */
  actuators?: ActuatorSet;
  /** The state bucket named in a command, as a blob store. */
  blobStore: (bucket: string) => BlobStore;
  /** A backup bucket named in a command, as a snapshot store. */
  snapshotStore: (bucket: string) => SnapshotStore;
  /**
   * A command for a shoot this seed has never seen creates its control plane first (the standard
   * extensions, reconciled), as if it had been created before the test started: the API does not send
   * create-control-plane to test agents. Default true; a deleted control plane is never adopted again.
   */
  adoptUnknownShoots?: boolean;
  /** Restores run only when this answers `owner`; default: no check. */
  ownerCheck?: OwnerCheck;
  now?: () => Date;
}

interface ControlPlane {
  technicalID: string;
  extensions: ExtensionResource[];
  /** Migrated away: the extensions are handed over; nothing is active here any more. */
  migrated: boolean;
  hibernated: boolean;
  etcdReady: boolean;
  components: Record<string, number>;
  /** From a restore's etcd part. */
  restoredRevision?: number;
}

type Outcome = { kind: ExtensionResource['kind']; name: string; purpose?: string; action: OperateOutcome['action'] };

/**
 * The control planes of one test seed, in memory: extensions driven by the generic driver with the
 * in-memory actuators, etcd as a flag and a revision. `execute` does what a command asks and returns the
 * protocol result, or throws `AgentCommandError` with the failure name to answer.
 */
export class TestSeedRuntime {
  readonly world: MemoryExtensionWorld;
  private readonly actuators: ActuatorSet;
  private readonly planes = new Map<string, ControlPlane>();
  private readonly deleted = new Set<string>();
  private readonly now: () => Date;

  constructor(private readonly options: TestSeedRuntimeOptions) {
    this.world = options.world ?? new MemoryExtensionWorld();
    this.actuators = options.actuators ?? memoryActuators({ world: this.world, seed: options.seed });
    this.now = options.now ?? (() => new Date());
  }

  /** Creates (and reconciles) a control plane here, as create-control-plane would. */
  async host(options: { technicalID: string; backupBucket?: string; hibernated?: boolean; extensions?: ExtensionResource[] }): Promise<void> {
    const extensions = options.extensions ?? shootExtensions({ technicalID: options.technicalID, ...(options.backupBucket ? { backupBucket: options.backupBucket } : {}) });
    const plane = this.fresh(options.technicalID, options.hibernated ?? false);
    this.deleted.delete(options.technicalID);
    await this.reconcile(plane, extensions);
  }

  /** The control planes as the heartbeat reports them. */
  controlPlanes(): HostedControlPlane[] {
    return [...this.planes.values()].map((p) => ({
      technicalID: p.technicalID,
      active: !p.migrated,
      etcdReady: p.etcdReady,
      components: Object.fromEntries(Object.entries(p.components).map(([name, replicas]) => [name, { replicas }])),
    }));
  }

  /** The extension resources of one control plane (a copy), or undefined when there is none. */
  extensions(technicalID: string): ExtensionResource[] | undefined {
    const plane = this.planes.get(technicalID);
    return plane ? plane.extensions.map((e) => structuredClone(e)) : undefined;
  }

  async execute<T extends CommandType>(command: CommandOf<T>, signal?: AbortSignal): Promise<CommandResult<T>> {
    const result = await this.dispatch(command as SeedCommand, signal);
    return result as CommandResult<T>;
  }

  private async dispatch(command: SeedCommand, signal?: AbortSignal): Promise<CommandResult<CommandType>> {
    const id = command.shoot.technicalID;
    switch (command.type) {
      case 'create-control-plane':
      case 'reconcile': {
        const plane = this.planes.get(id) ?? this.fresh(id, command.controlPlane.hibernated);
        this.deleted.delete(id);
        plane.hibernated = command.controlPlane.hibernated;
        const desired = command.controlPlane.extensions?.map((e) => ({
          apiVersion: 'extensions.gardenless.io/v1' as const,
          kind: e.kind,
          name: e.name,
          namespace: id,
          ...(e.purpose === undefined ? {} : { purpose: e.purpose }),
          generation: 1,
          spec: e.spec,
          status: {},
          annotations: {},
        }));
        const existing = plane.extensions.length > 0 ? plane.extensions : shootExtensions({ technicalID: id, backupBucket: command.controlPlane.backup.bucket });
        const outcomes = await this.reconcile(plane, desired ?? existing, signal);
        return { extensions: outcomes, etcdReady: plane.etcdReady };
      }
      case 'migrate': {
        const plane = await this.existing(command);
        const result = await guardBlobs(() =>
          migrateExtensions({
            shoot: command.shoot,
            resources: plane.extensions,
            actuators: this.actuators,
            blobs: this.options.blobStore(command.stateBucket),
            seed: this.options.seed,
            now: this.now,
            ...(command.inlineBudgetBytes === undefined ? {} : { inlineBudgetBytes: command.inlineBudgetBytes }),
            ...(signal ? { signal } : {}),
          }),
        );
        plane.extensions = result.resources;
        if (!result.ok) throw extensionFailure(result.error);
        plane.migrated = true;
        return { shootState: result.shootState, extensions: outcomesOf(result.outcomes) };
      }
      case 'delete-control-plane': {
        const plane = this.planes.get(id);
        if (plane === undefined) return { deleted: false, extensionsDropped: 0 };
        this.planes.delete(id);
        this.deleted.add(id);
        // Migrated resources are dropped without deleting what they manage; only their seed-local objects go.
        for (const e of plane.extensions) this.world.removeSeedObject(this.options.seed, externalKey(e));
        return { deleted: true, extensionsDropped: plane.extensions.length };
      }
      case 'restore':
        return this.restore(command, signal);
      case 'scale': {
        const plane = await this.existing(command);
        const previousReplicas = plane.components[command.component] ?? 1;
        plane.components[command.component] = command.replicas;
        return { component: command.component, previousReplicas, replicas: command.replicas };
      }
      case 'restart': {
        await this.existing(command);
        return { pod: command.pod, restarted: true };
      }
    }
  }

  private async restore(command: CommandOf<'restore'>, signal?: AbortSignal): Promise<CommandResult<'restore'>> {
    const id = command.shoot.technicalID;
    if (this.options.ownerCheck) {
      const check = await this.options.ownerCheck(command.shoot);
      if (check !== 'owner') throw new AgentCommandError('NotOwner', `the owner record of ${id} does not name seed ${this.options.seed} (${check}); not activating`);
    }
    const plane = this.planes.get(id) ?? this.fresh(id, command.hibernated);
    this.deleted.delete(id);
    plane.hibernated = command.hibernated;
    plane.migrated = false;
    const result: CommandResult<'restore'> = {};
    if (command.etcd) {
      const store = this.options.snapshotStore(command.etcd.bucket);
      const listed = await store.list(id).catch((cause: unknown) => {
        throw new AgentCommandError('SnapshotsUnavailable', `listing the snapshots of ${id} in ${command.etcd!.bucket} failed: ${messageOf(cause)}`, undefined, { cause });
      });
      const etcd = summarizeRestore({ technicalID: id, snapshots: listed, hibernated: command.hibernated, ...(command.etcd.expectedLastRevision === undefined ? {} : { expectedLastRevision: command.etcd.expectedLastRevision }) });
      plane.restoredRevision = etcd.restoredRevision;
      plane.etcdReady = !command.hibernated;
      result.etcd = etcd;
    }
    if (command.extensions) {
      const { shootState, stateBucket } = command.extensions;
      // Resources whose restore failed before keep their annotation: continue from them, not from the ShootState again.
      const pending = plane.extensions.filter((e) => e.annotations['gardener.cloud/operation'] === 'restore');
      const outcome = await guardBlobs(async () =>
        pending.length > 0
          ? operateAll({ resources: plane.extensions, actuators: this.actuators, now: this.now, order: RESTORE_ORDER, ...(signal ? { signal } : {}) })
          : restoreExtensions({ shootState, blobs: this.options.blobStore(stateBucket), actuators: this.actuators, now: this.now, ...(signal ? { signal } : {}) }),
      );
      plane.extensions = outcome.resources;
      if (outcome.error) throw extensionFailure(outcome.error);
      result.extensions = outcomesOf(outcome.outcomes);
    }
    return result;
  }

  private fresh(technicalID: string, hibernated: boolean): ControlPlane {
    const plane: ControlPlane = { technicalID, extensions: [], migrated: false, hibernated, etcdReady: !hibernated, components: {} };
    this.planes.set(technicalID, plane);
    return plane;
  }

  private async existing(command: SeedCommand): Promise<ControlPlane> {
    const id = command.shoot.technicalID;
    const plane = this.planes.get(id);
    if (plane) return plane;
    if ((this.options.adoptUnknownShoots ?? true) && !this.deleted.has(id)) {
      await this.host({ technicalID: id });
      return this.planes.get(id)!;
    }
    throw new AgentCommandError('ControlPlaneNotFound', `seed ${this.options.seed} hosts no control plane for ${id}${this.deleted.has(id) ? ' (it was deleted)' : ''}`);
  }

  private async reconcile(plane: ControlPlane, resources: ExtensionResource[], signal?: AbortSignal): Promise<Outcome[]> {
    const outcome = await operateAll({ resources, actuators: this.actuators, now: this.now, order: RESTORE_ORDER, ...(signal ? { signal } : {}) });
    plane.extensions = outcome.resources;
    plane.etcdReady = !plane.hibernated;
    if (outcome.error) throw extensionFailure(outcome.error);
    return outcomesOf(outcome.outcomes);
  }
}

function outcomesOf(outcomes: readonly OperateOutcome[]): Outcome[] {
  return outcomes.flatMap((o) => (o.resource ? [{ kind: o.resource.kind, name: o.resource.name, ...(o.resource.purpose === undefined ? {} : { purpose: o.resource.purpose }), action: o.action }] : []));
}

function extensionFailure(error: { message: string; details?: unknown }): AgentCommandError {
  return new AgentCommandError('ExtensionOperationFailed', error.message, (error.details ?? {}) as Record<string, unknown>, { cause: error });
}

/** Blob and bucket failures are the protocol's retryable "unavailable" answers; everything else is the caller's. */
async function guardBlobs<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (cause) {
    if (cause instanceof BlobStoreError || cause instanceof BlobIntegrityError || cause instanceof BlobNotFoundError) {
      throw new AgentCommandError('ShootStateUnavailable', `the state bucket failed: ${cause.message}`, { reason: cause.name }, { cause });
    }
    if (cause instanceof SnapshotStoreError) throw new AgentCommandError('SnapshotsUnavailable', cause.message, undefined, { cause });
    throw cause;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
