import type {
  KubeConfig,
  KubernetesObject,
  V1Deployment,
  V1Namespace,
  V1Pod,
  V1Service,
  V1StatefulSet,
} from '@kubernetes/client-node';
import type { CommandOf, CommandResult, CommandType, SeedCommand } from '../../core/commands/index.js';
import { SCALE_DOWN_ORDER, type ScalableDependent } from '../../core/dwd/components.js';
import {
  externalKey,
  memoryActuators,
  MemoryExtensionWorld,
  type ActuatorSet,
  type ExtensionResource,
} from '../../core/extensions/index.js';
import { COMPONENTS, type ComponentName } from '../../core/ha/layout.js';
import type { HostedControlPlane } from '../../core/model/seed.js';
import type { OwnerCheckResult } from '../../core/ownership/index.js';
import type { BlobStore } from '../../core/shootstate/index.js';
import type { SnapshotStore } from '../../core/snapshots/index.js';
import { AgentCommandError, messageOf } from '../agent/errors.js';
import { newModel, reconcileModel, scaleModel, type ControlPlaneModel } from '../agent/model.js';
import type { EtcdSpec } from '../agent/hosting.js';
import type { SeedRuntime } from '../agent/runtime.js';
import {
  deleteShootExtensions,
  migrateShootExtensions,
  reconcileExtensions,
  restoreShootExtensions,
} from '../common/extension-ops.js';
import {
  assertNotOwnedElsewhere,
  assertNotOwner,
  assertOwner,
  checkRestorable,
  notRestoredAhead,
  restoreBucket,
} from '../common/restore-ops.js';
import { imageVector, type ImageVector } from './image-vector.js';
import { KubeObjects, KubernetesApiError } from './kube-api.js';
import {
  controlPlaneObjects,
  MANAGED_BY,
  FIELD_MANAGER,
  REMEMBERED_REPLICAS,
  SEED_LABEL,
  ETCD_PORTS,
  type PodSidecarSettings,
} from './objects.js';

export interface KubernetesRuntimeOptions {
  seed: string;
  kubeConfig: KubeConfig;
  /** The seed's zones (its nodes' `topology.kubernetes.io/zone`), for the GEP-20 layout. */
  zones: readonly string[];
  sidecar: PodSidecarSettings;
  images?: ImageVector;
  blobStore: (bucket: string) => BlobStore;
  snapshotStore: (bucket: string) => SnapshotStore;
  ownerCheck?: (shoot: SeedCommand['shoot']) => Promise<OwnerCheckResult>;
  actuators?: ActuatorSet;
  world?: MemoryExtensionWorld;
  /**
   * Put before each shoot namespace (`<prefix>shoot--<project>--<name>`): only where several seeds share
   * one cluster (tests, the local landscape). A real seed has none.
   */
  namespacePrefix?: string;
  /**
   * The kube-apiserver's external URL from its load balancer's address (the Service's ingress): what the
   * garden's prober probes. Default `https://<host>[:<port>]`.
   */
  externalUrl?: (lb: { host: string; port: number }) => string;
  /** How long a create, reconcile or restore waits for etcd to be Ready before it answers; default 60 s. */
  readyTimeoutMs?: number;
  /** How long a delete waits for the namespace to be gone; default 120 s (then RuntimeUnavailable: retry). */
  deleteTimeoutMs?: number;
  now?: () => Date;
}

/** What the runtime keeps per control plane in the namespace itself, so that an agent restart loses nothing. */
interface PlaneState {
  technicalID: string;
  /** The shoot the commands named (reported, so that the garden can tell a leftover). */
  shoot?: { project: string; name: string };
  backupBucket: string;
  hibernated: boolean;
  failureTolerance?: 'node' | 'zone';
  /** The extensions were migrated away: nothing is active here any more. */
  migrated: boolean;
  extensions: ExtensionResource[];
}

const STATE_CONFIGMAP = 'gardenless-control-plane';
const APPS = 'apps/v1';

/**
 * The `kubernetes` seed runtime: each command becomes objects on the seed's API server. Per shoot a
 * namespace with the GEP-20 layout (etcd as a StatefulSet whose pods run the backup-restore sidecar, the
 * other components as Deployments, PDBs, Services with a load balancer for kube-apiserver), applied
 * server-side; the dependency watchdog's scale is a patch that remembers the replicas in an annotation,
 * which every reconcile honours; the heartbeat reports what the API server says. The extension and
 * restore steps are the ones the local runtime runs (seed/common).
 */
export class KubernetesRuntime implements SeedRuntime {
  readonly world: MemoryExtensionWorld;
  readonly kube: KubeObjects;
  private readonly actuators: ActuatorSet;
  private readonly images: ImageVector;
  private readonly now: () => Date;
  private observing: Promise<HostedControlPlane[]> | undefined;

  constructor(private readonly options: KubernetesRuntimeOptions) {
    this.kube = new KubeObjects(options.kubeConfig);
    this.world = options.world ?? new MemoryExtensionWorld();
    this.actuators = options.actuators ?? memoryActuators({ world: this.world, seed: options.seed });
    this.images = options.images ?? imageVector();
    this.now = options.now ?? (() => new Date());
  }

  /** The namespace of a shoot on this seed. */
  namespaceOf(technicalID: string): string {
    return `${this.options.namespacePrefix ?? ''}${technicalID}`;
  }

  async execute<T extends CommandType>(command: CommandOf<T>, signal?: AbortSignal): Promise<CommandResult<T>> {
    try {
      return (await this.dispatch(command as SeedCommand, signal)) as CommandResult<T>;
    } catch (error) {
      if (error instanceof AgentCommandError) throw error;
      // The API server refused or did not answer: transient as far as the protocol goes (Step Functions retries).
      throw new AgentCommandError(
        'RuntimeUnavailable',
        `${command.type} of ${command.shoot.technicalID} on the seed's API server: ${messageOf(error)}`,
        undefined,
        { cause: error },
      );
    }
  }

  /**
   * The heartbeat's report: a fixed number of cluster-wide lists by this seed's label, however many
   * shoots it hosts. A call while one is running shares its answer (heartbeats must not pile up on a
   * slow API server).
   */
  controlPlanes(): Promise<HostedControlPlane[]> {
    this.observing ??= this.observeAll().finally(() => {
      this.observing = undefined;
    });
    return this.observing;
  }

  private async observeAll(): Promise<HostedControlPlane[]> {
    const mine = { labelSelector: `${SEED_LABEL}=${this.options.seed}` };
    const [configMaps, deployments, statefulSets, services, pods] = await Promise.all([
      this.kube.list<KubernetesObject & { data?: Record<string, string> }>('v1', 'ConfigMap', mine),
      this.kube.list<V1Deployment>(APPS, 'Deployment', mine),
      this.kube.list<V1StatefulSet>(APPS, 'StatefulSet', mine),
      this.kube.list<V1Service>('v1', 'Service', mine),
      this.kube.list<V1Pod>('v1', 'Pod', { labelSelector: 'gardener.cloud/shoot' }),
    ]);
    const inNamespace = <T extends KubernetesObject>(items: T[], namespace: string) =>
      items.filter((o) => o.metadata?.namespace === namespace);
    return configMaps
      .filter((cm) => cm.metadata?.name === STATE_CONFIGMAP && cm.data?.['state.json'] !== undefined)
      .map((cm) => {
        const namespace = cm.metadata!.namespace!;
        const workloads = new Map(
          [...inNamespace(deployments, namespace), ...inNamespace(statefulSets, namespace)].map((w) => [
            w.metadata!.name as ComponentName,
            w,
          ]),
        );
        const lb = inNamespace(services, namespace).find((svc) => svc.metadata?.name === 'kube-apiserver');
        return this.report(namespace, JSON.parse(cm.data!['state.json']!) as PlaneState, {
          workloads,
          pods: inNamespace(pods, namespace),
          lb,
        });
      });
  }

  async stop(): Promise<void> {
    // Nothing runs in this process: the control planes live on the seed and outlive the agent.
  }

  private async dispatch(command: SeedCommand, signal?: AbortSignal): Promise<CommandResult<CommandType>> {
    switch (command.type) {
      case 'create-control-plane':
      case 'reconcile':
        return this.reconcile(command, signal);
      case 'migrate':
        return this.migrate(command, signal);
      case 'delete-control-plane':
        return this.delete(command);
      case 'restore':
        return this.restore(command, signal);
      case 'scale':
        return this.scale(command);
      case 'restart':
        return this.restart(command);
      case 'check-owner':
        // The etcd pods' sidecars take notices from loopback only, and the agent runs in its own pod: they
        // learn of the change at their next poll, which is what bounds the fence anyway.
        return { sidecars: 0, notified: 0 };
      case 'hand-over':
        // The seed's ingress is the cluster's own (a Service of type LoadBalancer): nothing here to hand over.
        return { handedOver: false };
    }
  }

  private async reconcile(
    command: CommandOf<'create-control-plane'> | CommandOf<'reconcile'>,
    signal?: AbortSignal,
  ): Promise<CommandResult<'reconcile'>> {
    const id = command.shoot.technicalID;
    const spec = command.controlPlane;
    const known = await this.readState(this.namespaceOf(id));
    if (!known)
      await assertNotOwnedElsewhere({
        command,
        seed: this.options.seed,
        ...(this.options.ownerCheck ? { ownerCheck: this.options.ownerCheck } : {}),
      });
    const namespace = await this.ensureNamespace(command.shoot);
    const state = known ?? this.fresh(id, spec.backup.bucket);
    state.backupBucket = spec.backup.bucket;
    state.shoot = { project: command.shoot.project, name: command.shoot.name };
    state.hibernated = spec.hibernated;
    if (spec.failureTolerance) state.failureTolerance = spec.failureTolerance;
    const step = await reconcileExtensions({
      technicalID: id,
      spec,
      current: state.extensions,
      actuators: this.actuators,
      now: this.now,
      ...(signal ? { signal } : {}),
    });
    state.extensions = step.resources;
    await this.writeState(namespace, state);
    if (step.error) throw step.error;
    await this.applyControlPlane(command.shoot, namespace, state);
    const etcdReady = await this.waitForEtcd(namespace, state, signal);
    // The garden points the API record at the load balancer once the cloud gave the Service an address,
    // as Gardener's DNSRecord follows it; a hibernated plane names none, so hibernation leaves the record.
    const external = state.hibernated
      ? undefined
      : this.externalUrlOf(
          await this.kube.read<V1Service>({ apiVersion: 'v1', kind: 'Service', name: 'kube-apiserver', namespace }),
        );
    return { extensions: step.result ?? [], etcdReady, ...(external ? { externalUrl: external } : {}) };
  }

  private async migrate(command: CommandOf<'migrate'>, signal?: AbortSignal): Promise<CommandResult<'migrate'>> {
    const namespace = this.namespaceOf(command.shoot.technicalID);
    const state = await this.existing(command, namespace);
    const step = await migrateShootExtensions({
      command,
      current: state.extensions,
      actuators: this.actuators,
      blobStore: this.options.blobStore,
      seed: this.options.seed,
      now: this.now,
      ...(signal ? { signal } : {}),
    });
    state.extensions = step.resources;
    if (!step.error) state.migrated = true;
    await this.writeState(namespace, state);
    if (step.error) throw step.error;
    return step.result!;
  }

  /** Removes the namespace and with it every control-plane object; the backups stay in the bucket. */
  private async delete(command: CommandOf<'delete-control-plane'>): Promise<CommandResult<'delete-control-plane'>> {
    const namespace = this.namespaceOf(command.shoot.technicalID);
    const ns = await this.kube.read<V1Namespace>({ apiVersion: 'v1', kind: 'Namespace', name: namespace });
    if (ns === undefined) return { deleted: false, extensionsDropped: 0 };
    await assertNotOwner({
      command,
      seed: this.options.seed,
      ...(this.options.ownerCheck ? { ownerCheck: this.options.ownerCheck } : {}),
    });
    const state = await this.readState(namespace);
    if (state && !command.keepExternalResources) {
      // The shoot's deletion: the extensions delete what they manage before the namespace goes.
      const step = await deleteShootExtensions({ current: state.extensions, actuators: this.actuators, now: this.now });
      state.extensions = step.resources;
      if (step.error) {
        await this.writeState(namespace, state);
        throw step.error;
      }
    }
    // Migrated resources are dropped without deleting what they manage; only their seed-local objects go.
    for (const e of state?.extensions ?? []) this.world.removeSeedObject(this.options.seed, externalKey(e));
    await this.kube.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace });
    await this.until(
      `namespace ${namespace} is gone`,
      this.options.deleteTimeoutMs ?? 120_000,
      async () => (await this.kube.read({ apiVersion: 'v1', kind: 'Namespace', name: namespace })) === undefined,
    );
    return { deleted: true, extensionsDropped: state?.extensions.length ?? 0 };
  }

  private async restore(command: CommandOf<'restore'>, signal?: AbortSignal): Promise<CommandResult<'restore'>> {
    // Not yet here: its etcd pods' sidecars restore when the StatefulSet starts them, once the shoot is this seed's.
    if (command.etcd?.ahead) return notRestoredAhead();
    const id = command.shoot.technicalID;
    await assertOwner({
      command,
      seed: this.options.seed,
      ...(this.options.ownerCheck ? { ownerCheck: this.options.ownerCheck } : {}),
    });
    const namespace = this.namespaceOf(id);
    const known = await this.readState(namespace);
    const bucket = restoreBucket(command, known?.backupBucket);
    const state = known ?? this.fresh(id, bucket);
    state.migrated = false;
    state.hibernated = command.hibernated;
    if (command.controlPlane?.failureTolerance) state.failureTolerance = command.controlPlane.failureTolerance;
    const result: CommandResult<'restore'> = {};
    if (command.etcd) {
      const summary = await checkRestorable({
        command: { ...command, etcd: command.etcd },
        snapshotStore: this.options.snapshotStore,
      });
      state.backupBucket = command.etcd.bucket;
      await this.ensureNamespace(command.shoot);
      await this.writeState(namespace, state);
      // The sidecar of each etcd pod restores from the copies in the bucket before etcd serves.
      const expected = command.etcd.expectedLastRevision;
      await this.applyControlPlane(
        command.shoot,
        namespace,
        state,
        command.hibernated
          ? undefined
          : {
              ...(expected === undefined ? {} : { expectedLastRevision: expected }),
              ...(command.etcd.acceptDigestMismatch ? { acceptDigestMismatch: true } : {}),
            },
      );
      if (!command.hibernated) await this.waitForEtcd(namespace, state, signal);
      result.etcd = summary;
    } else {
      await this.ensureNamespace(command.shoot);
    }
    if (command.extensions) {
      const step = await restoreShootExtensions({
        extensions: command.extensions,
        current: state.extensions,
        actuators: this.actuators,
        blobStore: this.options.blobStore,
        now: this.now,
        ...(signal ? { signal } : {}),
      });
      state.extensions = step.resources;
      await this.writeState(namespace, state);
      if (step.error) throw step.error;
      result.extensions = step.result ?? [];
    } else {
      await this.writeState(namespace, state);
    }
    return result;
  }

  /** The prober's scale: a patch of the Deployment's replicas; scaling to 0 remembers the replicas before (once). */
  private async scale(command: CommandOf<'scale'>): Promise<CommandResult<'scale'>> {
    const namespace = this.namespaceOf(command.shoot.technicalID);
    const state = await this.existing(command, namespace);
    const model = await this.observedModel(namespace, state);
    const { previousReplicas } = scaleModel(model, command.component, command.replicas);
    const remembered = model.hold.rememberedReplicas[command.component];
    await this.kube.mergePatch(
      { apiVersion: APPS, kind: 'Deployment', name: command.component, namespace },
      {
        metadata: { annotations: { [REMEMBERED_REPLICAS]: remembered === undefined ? null : String(remembered) } },
        spec: { replicas: command.replicas },
      },
    );
    return { component: command.component, previousReplicas, replicas: command.replicas };
  }

  /** The weeder's restart: delete the pod (its controller makes a new one) while it crash-loops. */
  private async restart(command: CommandOf<'restart'>): Promise<CommandResult<'restart'>> {
    const namespace = this.namespaceOf(command.shoot.technicalID);
    await this.existing(command, namespace);
    const pod = await this.kube.read<V1Pod>({ apiVersion: 'v1', kind: 'Pod', name: command.pod, namespace });
    if (pod === undefined || podState(pod) !== 'CrashLoopBackOff') return { pod: command.pod, restarted: false };
    await this.kube.delete({ apiVersion: 'v1', kind: 'Pod', name: command.pod, namespace });
    return { pod: command.pod, restarted: true };
  }

  /**
   * Applies every object of the layout with the replicas a reconcile wants, through the watchdog's
   * guard (`reconcileModel`): a component the watchdog holds down stays at 0 with its annotation.
   */
  private async applyControlPlane(
    shoot: SeedCommand['shoot'],
    namespace: string,
    state: PlaneState,
    restore?: EtcdSpec['restore'],
  ): Promise<void> {
    const model = await this.observedModel(namespace, state);
    reconcileModel(model, {
      hibernated: state.hibernated,
      ...(state.failureTolerance ? { failureTolerance: state.failureTolerance } : {}),
    });
    const objects = controlPlaneObjects({
      shoot,
      namespace,
      seed: { name: this.options.seed, zones: this.options.zones },
      ...(state.failureTolerance ? { failureTolerance: state.failureTolerance } : {}),
      replicas: model.replicas,
      remembered: model.hold.rememberedReplicas,
      backupBucket: state.backupBucket,
      ...(restore ? { restore } : {}),
      images: this.images,
      sidecar: this.options.sidecar,
    });
    for (const object of objects) await this.kube.apply(object);
  }

  /** The model of `seed/agent/model.ts` filled from the cluster: replicas and the watchdog's hold as the workloads carry them. */
  private async observedModel(namespace: string, state: PlaneState): Promise<ControlPlaneModel> {
    const model = newModel({
      technicalID: state.technicalID,
      hibernated: state.hibernated,
      ...(state.failureTolerance ? { failureTolerance: state.failureTolerance } : {}),
    });
    const workloads = await this.workloads(namespace);
    for (const c of COMPONENTS) model.replicas[c] = workloads.get(c)?.spec?.replicas ?? 0;
    for (const c of SCALE_DOWN_ORDER) {
      const remembered = workloads.get(c)?.metadata?.annotations?.[REMEMBERED_REPLICAS];
      if (remembered !== undefined && /^\d+$/.test(remembered))
        model.hold.rememberedReplicas[c as ScalableDependent] = Number(remembered);
    }
    model.hold.scaledDown = Object.keys(model.hold.rememberedReplicas).length > 0;
    return model;
  }

  private async workloads(namespace: string): Promise<Map<ComponentName, V1Deployment | V1StatefulSet>> {
    const [deployments, statefulSets] = await Promise.all([
      this.kube.list<V1Deployment>(APPS, 'Deployment', { namespace, labelSelector: `${MANAGED_BY}=${FIELD_MANAGER}` }),
      this.kube.list<V1StatefulSet>(APPS, 'StatefulSet', {
        namespace,
        labelSelector: `${MANAGED_BY}=${FIELD_MANAGER}`,
      }),
    ]);
    return new Map([...deployments, ...statefulSets].map((w) => [w.metadata!.name as ComponentName, w]));
  }

  private report(
    namespace: string,
    state: PlaneState,
    seen: { workloads: Map<ComponentName, V1Deployment | V1StatefulSet>; pods: V1Pod[]; lb: V1Service | undefined },
  ): HostedControlPlane {
    const { workloads, pods, lb } = seen;
    const etcdReady = etcdServes(workloads.get('etcd'));
    const api = workloads.get('kube-apiserver');
    const external = this.externalUrlOf(lb);
    return {
      technicalID: state.technicalID,
      ...(state.shoot ? { shoot: state.shoot } : {}),
      active: !state.migrated && etcdReady,
      // The kubelets' readiness probes are the internal probe: kube-apiserver pods Ready behind its Service.
      ...((api?.spec?.replicas ?? 0) > 0
        ? {
            internalProbe: (api?.status?.readyReplicas ?? 0) > 0 ? ('Success' as const) : ('Failure' as const),
            internalProbeTime: this.now().toISOString(),
          }
        : {}),
      ...(external ? { externalUrl: external } : {}),
      etcdReady,
      ...(etcdReady ? { etcdClientUrl: `http://etcd-client.${namespace}.svc:${ETCD_PORTS.client}` } : {}),
      components: Object.fromEntries(COMPONENTS.map((c) => [c, { replicas: workloads.get(c)?.spec?.replicas ?? 0 }])),
      pods: pods.slice(0, 200).map((p) => ({
        name: p.metadata!.name!,
        ...(p.metadata?.uid ? { uid: p.metadata.uid } : {}),
        labels: p.metadata?.labels ?? {},
        state: podState(p),
        ...(p.metadata?.deletionTimestamp ? { deleting: true } : {}),
      })),
    };
  }

  /** The kube-apiserver's URL behind its Service's load balancer, once the cloud wrote an address into its status. */
  private externalUrlOf(lb: V1Service | undefined): string | undefined {
    const ingress = lb?.status?.loadBalancer?.ingress?.[0];
    const host = ingress?.hostname ?? ingress?.ip;
    return host === undefined
      ? undefined
      : (this.options.externalUrl ?? defaultExternalUrl)({ host, port: ingress?.ports?.[0]?.port ?? 443 });
  }

  private async waitForEtcd(namespace: string, state: PlaneState, signal?: AbortSignal): Promise<boolean> {
    if (state.hibernated) return false;
    const deadline = Date.now() + (this.options.readyTimeoutMs ?? 60_000);
    for (;;) {
      const etcd = await this.kube.read<V1StatefulSet>({
        apiVersion: APPS,
        kind: 'StatefulSet',
        name: 'etcd',
        namespace,
      });
      if (etcdServes(etcd)) return true;
      if (Date.now() > deadline || signal?.aborted) return false;
      await sleep(250);
    }
  }

  private async ensureNamespace(shoot: SeedCommand['shoot']): Promise<string> {
    const name = this.namespaceOf(shoot.technicalID);
    const existing = await this.kube.read<V1Namespace>({ apiVersion: 'v1', kind: 'Namespace', name });
    if (existing?.metadata?.deletionTimestamp)
      throw new AgentCommandError(
        'RuntimeUnavailable',
        `namespace ${name} is still being deleted; retry when it is gone`,
      );
    const owner = existing?.metadata?.labels?.[SEED_LABEL];
    if (owner !== undefined && owner !== this.options.seed)
      throw new AgentCommandError(
        'RuntimeUnavailable',
        `namespace ${name} belongs to seed ${owner}, not ${this.options.seed}`,
      );
    await this.kube.apply({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name,
        labels: {
          [MANAGED_BY]: FIELD_MANAGER,
          [SEED_LABEL]: this.options.seed,
          'gardener.cloud/shoot': shoot.technicalID,
          'gardener.cloud/role': 'shoot',
        },
      },
    });
    return name;
  }

  private async readState(namespace: string): Promise<PlaneState | undefined> {
    const cm = await this.kube.read<KubernetesObject & { data?: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: STATE_CONFIGMAP,
      namespace,
    });
    const text = cm?.data?.['state.json'];
    return text === undefined ? undefined : (JSON.parse(text) as PlaneState);
  }

  private async writeState(namespace: string, state: PlaneState): Promise<void> {
    await this.kube.apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: STATE_CONFIGMAP,
        namespace,
        labels: { [MANAGED_BY]: FIELD_MANAGER, [SEED_LABEL]: this.options.seed },
      },
      data: { 'state.json': JSON.stringify(state) },
    } as KubernetesObject);
  }

  private fresh(technicalID: string, backupBucket: string): PlaneState {
    return { technicalID, backupBucket, hibernated: false, migrated: false, extensions: [] };
  }

  private async existing(command: SeedCommand, namespace: string): Promise<PlaneState> {
    const state = await this.readState(namespace);
    if (state) return state;
    throw new AgentCommandError(
      'ControlPlaneNotFound',
      `seed ${this.options.seed} hosts no control plane for ${command.shoot.technicalID}`,
    );
  }

  private async until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline)
        throw new AgentCommandError('RuntimeUnavailable', `${what}: not within ${timeoutMs} ms`);
      await sleep(250);
    }
  }
}

function defaultExternalUrl(lb: { host: string; port: number }): string {
  return lb.port === 443 ? `https://${lb.host}` : `https://${lb.host}:${lb.port}`;
}

/** etcd serves while a quorum of its members is Ready. */
function etcdServes(etcd: { spec?: { replicas?: number }; status?: { readyReplicas?: number } } | undefined): boolean {
  const replicas = etcd?.spec?.replicas ?? 0;
  return replicas > 0 && (etcd?.status?.readyReplicas ?? 0) > replicas / 2;
}

/** A pod as the weeder reads it: Running (and Ready), CrashLoopBackOff, or NotReady. */
export function podState(pod: V1Pod): 'Running' | 'CrashLoopBackOff' | 'NotReady' {
  if (pod.status?.containerStatuses?.some((c) => c.state?.waiting?.reason === 'CrashLoopBackOff'))
    return 'CrashLoopBackOff';
  const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  return pod.status?.phase === 'Running' && ready ? 'Running' : 'NotReady';
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export { KubernetesApiError };
