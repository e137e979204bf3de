import type {
  KubernetesObject,
  V1Deployment,
  V1Pod,
  V1Secret,
  V1Service,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { COMPONENTS, replicasFor, type ComponentName } from '../../core/ha/layout.js';
import type { ShootSecrets } from '../../core/shootstate/secrets.js';
import { AgentCommandError } from '../agent/errors.js';
import {
  agentAccessOf,
  controlPlaneFileContents,
  type ControlPlaneFileContents,
} from '../agent/kube/control-plane-files.js';
import { bindViewers, shootApiRequest } from '../agent/kube/shoot-api.js';
import type {
  ApiServerView,
  ControlPlaneHosting,
  EtcdSpec,
  EtcdStarted,
  EtcdView,
  HostedPod,
  OwnerNoticeDelivery,
  ControlPlaneComponents,
} from '../agent/hosting.js';
import {
  controllers,
  pollUntil,
  type ApiServerSpec,
  type HostedController,
  type ControllerSpec,
  type DeployWaiter,
  type WaitOptions,
} from '../agent/components.js';
import { imageVector, type ImageVector } from './image-vector.js';
import type { SidecarSettings } from '../../core/model/seed.js';
import { slowestSettings } from '../../core/snapshots/index.js';
import { parseServeArgv, servedSettings } from '../backup-restore/served-settings.js';
import type { SeedNamespaces } from './namespaces.js';
import {
  BACKUP_CREDENTIALS_SECRET,
  CONTROL_PLANE_FILES_SECRET,
  controlPlaneFilesSecret,
  controlPlaneObjects,
  ETCD_PORTS,
  FIELD_MANAGER,
  MANAGED_BY,
  SEED_LABEL,
  SIDECAR_CONTAINER,
  type KubeComponentsInput,
  type PodSidecarSettings,
} from './objects.js';

export interface KubernetesHostingOptions {
  namespaces: SeedNamespaces;
  /** The seed's zones (its nodes' `topology.kubernetes.io/zone`), for the GEP-20 layout. */
  zones: readonly string[];
  sidecar: PodSidecarSettings;
  images?: ImageVector;
  /**
   * The kube-apiserver's external URL from its load balancer's address (the Service's ingress): what the
   * garden's prober probes. Default `https://<host>[:<port>]`.
   */
  externalUrl?: (lb: { host: string; port: number }) => string;
  /**
   * The AWS environment of the etcd pods' sidecars (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, with
   * temporary credentials, AWS_SESSION_TOKEN), kept in each shoot's namespace as `Secret/backup-credentials`;
   * none where the shoot namespaces' ServiceAccount has a role (IRSA, Pod Identity).
   */
  sidecarCredentials?: Readonly<Record<string, string>>;
  /** How long starting etcd waits for it to be Ready (it answers either way; the view says which); default 60 s. */
  readyTimeoutMs?: number;
  /** How long a removal waits for the namespace to be gone; default 120 s (then RuntimeUnavailable: retry). */
  deleteTimeoutMs?: number;
}

const APPS = 'apps/v1';
/** How long the heartbeat's view of the cluster is shared between the reads of one round. */
const VIEW_MAX_AGE_MS = 1_000;
/** How long after a start the viewers' binding is tried, and how often. */
const VIEWER_BINDING_MS = 10 * 60_000;
const VIEWER_BINDING_INTERVAL_MS = 2_000;

/** What the seed's API server said of every control plane of this seed, by namespace. */
interface ClusterView {
  workloads: Map<string, Map<ComponentName, V1Deployment | V1StatefulSet>>;
  services: Map<string, V1Service>;
  pods: Map<string, V1Pod[]>;
}

/**
 * The control plane's components as Kubernetes objects on the seed (the `kubernetes` runtime): per shoot
 * a namespace with the GEP-20 layout, etcd as a StatefulSet whose pods run the backup-restore sidecar, the
 * other components as Deployments, PDBs, and a Service of type LoadBalancer for kube-apiserver, all applied
 * server-side. The flow of every command is the one `ControlPlaneRuntime`'s; this only renders, applies,
 * waits and reads back. The pods outlive the agent: stopping it stops nothing.
 */
export class KubernetesHosting implements ControlPlaneHosting {
  private readonly images: ImageVector;
  private view: { at: number; lists: Promise<ClusterView> } | undefined;
  private readonly secrets = new Map<string, ShootSecrets>();
  /** Per shoot, the agent's access to its kube-apiserver (made once from its secrets) and a pending binding. */
  private readonly agentAccess = new Map<string, Promise<ControlPlaneFileContents['agent']>>();
  private readonly viewerBindings = new Map<string, NodeJS.Timeout>();
  /** Per shoot, what its Kubernetes components were last rendered with (kube-apiserver's deploy makes it). */
  private readonly kubeInputs = new Map<string, KubeComponentsInput>();

  constructor(private readonly options: KubernetesHostingOptions) {
    this.images = options.images ?? imageVector();
  }

  private get kube() {
    return this.options.namespaces.kube;
  }

  // Kept in memory only: the seed gets the files made from them (`kubeFiles`), never the CAs' keys.
  async installSecrets(technicalID: string, secrets: ShootSecrets): Promise<void> {
    this.secrets.set(technicalID, secrets);
    this.agentAccess.delete(technicalID);
  }

  /**
   * Each component as its workload (a StatefulSet for etcd, a Deployment for the others) with its PDB,
   * applied on its own; destroying one scales it to none (its objects stay, as a hibernated shoot's do in
   * Gardener; the namespace's removal deletes them), and the waits read the workloads and their pods.
   */
  components(technicalID: string): ControlPlaneComponents {
    const namespace = this.options.namespaces.of(technicalID);
    const gone = (component: ComponentName) => (options: WaitOptions) =>
      pollUntil(async () => (await this.podsOf(namespace, component)).length === 0, {
        ...options,
        describe: () => `pods of ${component} of ${technicalID} are still there`,
      });
    return {
      etcd: {
        name: 'etcd',
        deploy: (spec) => this.startEtcd(spec),
        destroy: () => this.scaleTo(technicalID, ['etcd'], 0),
        // No full snapshot, unlike a local seed: the agent does not reach the sidecars' status ports from
        // outside the cluster, so the bucket holds what their last delta uploaded.
        snapshot: async () => {},
        wait: (options) =>
          pollUntil(async () => etcdServes(await this.workload(namespace, 'etcd')), {
            ...options,
            describe: () => `etcd of ${technicalID} has no quorum of Ready pods`,
          }),
        waitCleanup: gone('etcd'),
      },
      'kube-apiserver': {
        name: 'kube-apiserver',
        deploy: (spec) => this.startApiServer(technicalID, namespace, spec),
        destroy: () => this.scaleTo(technicalID, ['kube-apiserver'], 0),
        wait: (options) =>
          pollUntil(async () => ((await this.workload(namespace, 'kube-apiserver'))?.status?.readyReplicas ?? 0) > 0, {
            ...options,
            describe: () => `kube-apiserver of ${technicalID} has no Ready pod`,
          }),
        waitCleanup: gone('kube-apiserver'),
      },
      controllers: controllers((name) => this.controller(technicalID, namespace, name, gone(name))),
    };
  }

  private controller(
    technicalID: string,
    namespace: string,
    name: HostedController,
    waitCleanup: (options: WaitOptions) => Promise<void>,
  ): DeployWaiter<ControllerSpec> {
    return {
      name,
      deploy: async (spec) => {
        const kube = this.kubeInputs.get(technicalID) ?? (await this.kubeFiles(technicalID, namespace));
        await this.applyWorkloads({ technicalID, project: '', name: '' }, namespace, {
          components: [name],
          replicas: { [name]: spec.replicas },
          kube,
          ...(spec.remembered === undefined ? {} : { remembered: { [name]: spec.remembered } }),
          ...(spec.failureTolerance ? { failureTolerance: spec.failureTolerance } : {}),
        });
      },
      destroy: () => this.scaleTo(technicalID, [name], 0),
      wait: (options) =>
        pollUntil(async () => ((await this.workload(namespace, name))?.status?.readyReplicas ?? 0) > 0, {
          ...options,
          describe: () => `${name} of ${technicalID} has no Ready pod`,
        }),
      waitCleanup,
    };
  }

  private async startEtcd(spec: EtcdSpec): Promise<EtcdStarted> {
    // Its sidecars restore when the StatefulSet starts them, once the shoot is this seed's: nothing waits ahead.
    if (spec.restore?.ahead) return { ahead: false };
    const namespace = await this.options.namespaces.ensure(spec.shoot.technicalID);
    if (this.options.sidecarCredentials) await this.kube.apply(this.credentialsSecret(namespace));
    const apply = (restore: EtcdSpec['restore']) =>
      this.applyWorkloads(spec.shoot, namespace, {
        components: ['etcd'],
        replicas: { etcd: replicasFor('etcd', spec.failureTolerance) },
        bucket: spec.bucket,
        ...(spec.failureTolerance ? { failureTolerance: spec.failureTolerance } : {}),
        ...(restore ? { restore } : {}),
      });
    await apply(spec.restore);
    // Once restored, the sidecars are told to start from their data again (a rollout of their pods): a pod
    // that restarts later must not restore over writes its bucket does not hold yet. One that did not get
    // Ready keeps the flags, so that no restart cuts a restore short.
    if ((await this.waitForEtcd(namespace)) && spec.restore) {
      await apply(undefined);
      await this.waitForEtcd(namespace);
    }
    return {};
  }

  async etcd(technicalID: string): Promise<EtcdView> {
    const namespace = this.options.namespaces.of(technicalID);
    const view = await this.clusterView();
    const etcd = view.workloads.get(namespace)?.get('etcd');
    const available = etcdServes(etcd);
    const settings = podSidecarSettings(view.pods.get(namespace) ?? []);
    return {
      running: (etcd?.spec?.replicas ?? 0) > 0,
      available,
      ...(available ? { clientUrl: `http://etcd-client.${namespace}.svc:${ETCD_PORTS.client}` } : {}),
      ...(settings ? { settings } : {}),
    };
  }

  private async startApiServer(technicalID: string, namespace: string, options: ApiServerSpec): Promise<void> {
    if ((await this.workload(namespace, 'etcd')) === undefined)
      throw new AgentCommandError(
        'RuntimeUnavailable',
        `no etcd of ${technicalID} on this seed to start kube-apiserver on`,
      );
    const kube = await this.kubeFiles(technicalID, namespace, options.apiDomain);
    this.kubeInputs.set(technicalID, kube);
    // Only etcd's sidecar names the shoot (its owner record); these workloads carry its technical ID alone.
    await this.applyWorkloads({ technicalID, project: '', name: '' }, namespace, {
      components: ['kube-apiserver'],
      replicas: { 'kube-apiserver': options.replicas ?? replicasFor('kube-apiserver', options.failureTolerance) },
      kube,
      ...(options.failureTolerance ? { failureTolerance: options.failureTolerance } : {}),
    });
    if (!options.standby) this.bindViewersWhenReady(technicalID, namespace);
  }

  /** One workload of the shoot's, read now (not from the heartbeat's shared view). */
  private workload(namespace: string, component: ComponentName): Promise<V1Deployment | V1StatefulSet | undefined> {
    const kind = component === 'etcd' ? 'StatefulSet' : 'Deployment';
    return this.kube.read<V1Deployment | V1StatefulSet>({ apiVersion: APPS, kind, name: component, namespace });
  }

  /** The pods of one component of the shoot's, whatever their phase. */
  private podsOf(namespace: string, component: ComponentName): Promise<V1Pod[]> {
    return this.kube.list<V1Pod>('v1', 'Pod', { namespace, labelSelector: `app=${component}` });
  }

  async apiServer(technicalID: string): Promise<ApiServerView> {
    const namespace = this.options.namespaces.of(technicalID);
    const view = await this.clusterView();
    const api = view.workloads.get(namespace)?.get('kube-apiserver');
    const externalUrl = this.externalUrlOf(view.services.get(namespace));
    return {
      running: (api?.spec?.replicas ?? 0) > 0,
      // The kubelets' readiness probes are the internal probe: kube-apiserver pods Ready behind its Service.
      internalProbe: (api?.status?.readyReplicas ?? 0) > 0 ? 'Success' : 'Failure',
      ...(externalUrl ? { externalUrl } : {}),
    };
  }

  async pods(technicalID: string): Promise<HostedPod[]> {
    const pods = (await this.clusterView()).pods.get(this.options.namespaces.of(technicalID)) ?? [];
    return pods.map((p) => ({
      name: p.metadata!.name!,
      ...(p.metadata?.uid ? { uid: p.metadata.uid } : {}),
      labels: p.metadata?.labels ?? {},
      state: podState(p),
      ...(p.metadata?.deletionTimestamp ? { deleting: true } : {}),
    }));
  }

  async restartPod(technicalID: string, name: string): Promise<boolean> {
    const ref = { apiVersion: 'v1', kind: 'Pod', name, namespace: this.options.namespaces.of(technicalID) };
    const pod = await this.kube.read<V1Pod>(ref);
    if (pod === undefined || podState(pod) !== 'CrashLoopBackOff') return false;
    this.view = undefined;
    return this.kube.delete(ref);
  }

  // The etcd pods' sidecars take notices from loopback only, and the agent runs in its own pod: they learn
  // of the change at their next poll, which is what bounds the fence anyway.
  async noticeOwnerChange(): Promise<OwnerNoticeDelivery> {
    return { sidecars: 0, notified: 0 };
  }

  /** Removes the namespace and with it every control-plane object; the backups stay in the bucket. */
  async remove(technicalID: string): Promise<void> {
    const ref = { apiVersion: 'v1', kind: 'Namespace', name: this.options.namespaces.of(technicalID) };
    this.view = undefined;
    this.secrets.delete(technicalID);
    this.agentAccess.delete(technicalID);
    this.kubeInputs.delete(technicalID);
    clearTimeout(this.viewerBindings.get(technicalID));
    this.viewerBindings.delete(technicalID);
    if (!(await this.kube.delete(ref))) return;
    const timeoutMs = this.options.deleteTimeoutMs ?? 120_000;
    const deadline = Date.now() + timeoutMs;
    while ((await this.kube.read(ref)) !== undefined) {
      if (Date.now() > deadline)
        throw new AgentCommandError('RuntimeUnavailable', `namespace ${ref.name} is not gone within ${timeoutMs} ms`);
      await sleep(250);
    }
  }

  async stopAll(): Promise<void> {
    // Only the viewers' bindings run in this process: the control planes live on the seed and outlive the agent.
    for (const timer of this.viewerBindings.values()) clearTimeout(timer);
    this.viewerBindings.clear();
  }

  /**
   * Binds the viewers' group in the shoot once its kube-apiserver answers, as a local seed does
   * (`bindViewers`): through the Service's cluster IP (an agent in the seed) or its load balancer (one
   * outside), whichever answers, as the agent with a client certificate of the shoot's client CA. Tried every
   * few seconds for a while after each start; a shoot whose secrets this agent does not hold is left to the
   * start that delivers them.
   */
  private bindViewersWhenReady(technicalID: string, namespace: string): void {
    clearTimeout(this.viewerBindings.get(technicalID));
    const deadline = Date.now() + VIEWER_BINDING_MS;
    const attempt = async (): Promise<void> => {
      const secrets = this.secrets.get(technicalID);
      if (secrets === undefined || Date.now() > deadline) return void this.viewerBindings.delete(technicalID);
      let access = this.agentAccess.get(technicalID);
      if (access === undefined) this.agentAccess.set(technicalID, (access = agentAccessOf(secrets, new Date())));
      const identity = await access;
      for (const at of await this.apiServerAddresses(namespace)) {
        const call = (method: string, path: string, body?: unknown) =>
          shootApiRequest({ ...at, ...identity }, method, path, body, 3_000);
        try {
          if ((await call('GET', '/readyz')).status !== 200) continue;
          await bindViewers(call);
          return void this.viewerBindings.delete(technicalID);
        } catch {
          // Not reachable from here, or not ready yet: the next address, then the next attempt.
        }
      }
      schedule();
    };
    const schedule = () => {
      const timer = setTimeout(() => void attempt().catch(schedule), VIEWER_BINDING_INTERVAL_MS);
      timer.unref();
      this.viewerBindings.set(technicalID, timer);
    };
    schedule();
  }

  /** Where the shoot's kube-apiserver is reached: its Service's cluster IP, then its load balancer. */
  private async apiServerAddresses(namespace: string): Promise<{ host: string; port: number }[]> {
    const service = await this.kube
      .read<V1Service>({ apiVersion: 'v1', kind: 'Service', name: 'kube-apiserver', namespace })
      .catch(() => undefined);
    const lb = loadBalancerOf(service);
    return [...(service?.spec?.clusterIP ? [{ host: service.spec.clusterIP, port: 443 }] : []), ...(lb ? [lb] : [])];
  }

  /**
   * The Secret of the Kubernetes components' files, made again only when what it is made from changed (the
   * shoot's secrets, its API domain, the Services' cluster IPs): a start that changes none of them rolls no
   * pod, and an agent that restarted without the secrets keeps the files its predecessor made.
   * kube-apiserver reaches etcd, and its controllers reach it, by cluster IP: a seed without cluster DNS
   * serves as well, and a Service keeps its address for its life.
   */
  private async kubeFiles(technicalID: string, namespace: string, apiDomain?: string): Promise<KubeComponentsInput> {
    const service = (name: string) => this.kube.read<V1Service>({ apiVersion: 'v1', kind: 'Service', name, namespace });
    const [etcdClient, api, existing] = await Promise.all([
      service('etcd-client'),
      service('kube-apiserver'),
      this.kube.read<V1Secret>({ apiVersion: 'v1', kind: 'Secret', name: CONTROL_PLANE_FILES_SECRET, namespace }),
    ]);
    const etcdIP = etcdClient?.spec?.clusterIP;
    const apiIP = api?.spec?.clusterIP;
    if (!etcdIP || !apiIP)
      throw new AgentCommandError('RuntimeUnavailable', `the Services of ${technicalID} have no cluster IPs yet`);
    const recorded = filesInputsOf(existing);
    const secrets = this.secrets.get(technicalID);
    const domain = apiDomain ?? recorded?.apiDomain;
    const inputs: FilesInputs = {
      secrets: secrets ? sha256(JSON.stringify(secrets)) : (recorded?.secrets ?? ''),
      ...(domain ? { apiDomain: domain } : {}),
      etcdServers: [`http://${etcdIP}:${ETCD_PORTS.client}`],
      internalUrl: `https://${apiIP}:443`,
    };
    const recordedText = existing?.metadata?.annotations?.[FILES_INPUTS];
    if (recordedText !== JSON.stringify(inputs)) {
      if (secrets === undefined)
        throw new AgentCommandError(
          'ShootStateUnavailable',
          `no secrets were delivered for ${technicalID}: its kube-apiserver has no CAs to serve with`,
        );
      const { contents } = await controlPlaneFileContents({
        secrets,
        apiDomain: domain,
        addresses: [apiIP],
        internalUrl: inputs.internalUrl,
        now: new Date(),
      });
      await this.kube.apply(
        controlPlaneFilesSecret({
          namespace,
          labels: this.ownLabels,
          contents,
          annotations: { [FILES_INPUTS]: JSON.stringify(inputs) },
        }),
      );
    }
    return {
      etcdServers: inputs.etcdServers,
      ...(domain ? { apiDomain: domain } : {}),
      filesChecksum: sha256(JSON.stringify(inputs)).slice(0, 16),
    };
  }

  private credentialsSecret(namespace: string): KubernetesObject {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: BACKUP_CREDENTIALS_SECRET,
        namespace,
        labels: this.ownLabels,
      },
      type: 'Opaque',
      stringData: { ...this.options.sidecarCredentials },
    } as KubernetesObject;
  }

  /** Applies the Services, etcd's NetworkPolicy and the given components' workloads with their PDBs. */
  private async applyWorkloads(
    shoot: EtcdSpec['shoot'],
    namespace: string,
    input: {
      components: readonly ComponentName[];
      replicas: Partial<Record<ComponentName, number>>;
      bucket?: string;
      remembered?: Partial<Record<ComponentName, number>>;
      failureTolerance?: 'node' | 'zone';
      restore?: EtcdSpec['restore'];
      kube?: KubeComponentsInput;
    },
  ): Promise<void> {
    this.view = undefined;
    const objects = controlPlaneObjects({
      shoot,
      namespace,
      seed: { name: this.options.namespaces.seed, zones: this.options.zones },
      ...(input.failureTolerance ? { failureTolerance: input.failureTolerance } : {}),
      components: input.components,
      replicas: Object.fromEntries(COMPONENTS.map((c) => [c, input.replicas[c] ?? 0])) as Record<ComponentName, number>,
      ...(input.remembered ? { remembered: input.remembered } : {}),
      // Only etcd's sidecar names the bucket.
      backupBucket: input.bucket ?? '',
      ...(input.restore ? { restore: input.restore } : {}),
      ...(input.kube ? { kube: input.kube } : {}),
      images: this.images,
      sidecar: {
        ...this.options.sidecar,
        ...(this.options.sidecarCredentials ? { credentialsSecret: BACKUP_CREDENTIALS_SECRET } : {}),
      },
    });
    // Only what this call renders: the other components' objects keep what they were applied with.
    const own = objects.filter((o) => o.kind !== 'Service' && o.kind !== 'NetworkPolicy');
    for (const object of input.components.includes('etcd') ? objects : own) await this.kube.apply(object);
  }

  /** Each of `components` whose workload exists, to `replicas`. */
  private async scaleTo(technicalID: string, components: readonly ComponentName[], replicas: number): Promise<void> {
    const namespace = this.options.namespaces.of(technicalID);
    this.view = undefined;
    for (const [name, w] of await this.workloads(namespace)) {
      if (!components.includes(name) || w.spec?.replicas === replicas) continue;
      await this.kube.mergePatch({ apiVersion: APPS, kind: w.kind!, name, namespace }, { spec: { replicas } });
    }
  }

  private async workloads(namespace: string): Promise<Map<ComponentName, V1Deployment | V1StatefulSet>> {
    const mine = { namespace, labelSelector: `${MANAGED_BY}=${FIELD_MANAGER}` };
    const [deployments, statefulSets] = await Promise.all([
      this.kube.list<V1Deployment>(APPS, 'Deployment', mine),
      this.kube.list<V1StatefulSet>(APPS, 'StatefulSet', mine),
    ]);
    return new Map(
      [
        ...deployments.map((d) => ({ ...d, kind: 'Deployment' })),
        ...statefulSets.map((s) => ({ ...s, kind: 'StatefulSet' })),
      ].map((w) => [w.metadata!.name as ComponentName, w]),
    );
  }

  /** Whether etcd serves (a quorum of its pods Ready, none of them older than its template) within the timeout. */
  private async waitForEtcd(namespace: string): Promise<boolean> {
    const deadline = Date.now() + (this.options.readyTimeoutMs ?? 60_000);
    try {
      for (;;) {
        const etcd = await this.kube.read<V1StatefulSet>({
          apiVersion: APPS,
          kind: 'StatefulSet',
          name: 'etcd',
          namespace,
        });
        if (etcdServes(etcd) && rolledOut(etcd)) return true;
        if (Date.now() > deadline) return false;
        await sleep(250);
      }
    } finally {
      this.view = undefined;
    }
  }

  /**
   * A fixed number of cluster-wide lists by this seed's label, however many shoots it hosts, shared by the
   * reads of one heartbeat round; whatever this hosting changes drops it.
   */
  private clusterView(): Promise<ClusterView> {
    if (this.view === undefined || Date.now() - this.view.at > VIEW_MAX_AGE_MS) {
      const lists = this.listAll();
      lists.catch(() => {
        if (this.view?.lists === lists) this.view = undefined;
      });
      this.view = { at: Date.now(), lists };
    }
    return this.view.lists;
  }

  private async listAll(): Promise<ClusterView> {
    const mine = { labelSelector: `${SEED_LABEL}=${this.options.namespaces.seed}` };
    const [deployments, statefulSets, services, pods] = await Promise.all([
      this.kube.list<V1Deployment>(APPS, 'Deployment', mine),
      this.kube.list<V1StatefulSet>(APPS, 'StatefulSet', mine),
      this.kube.list<V1Service>('v1', 'Service', mine),
      this.kube.list<V1Pod>('v1', 'Pod', { labelSelector: 'gardener.cloud/shoot' }),
    ]);
    const view: ClusterView = { workloads: new Map(), services: new Map(), pods: new Map() };
    for (const w of [...deployments, ...statefulSets]) {
      const ns = w.metadata!.namespace!;
      if (!view.workloads.has(ns)) view.workloads.set(ns, new Map());
      view.workloads.get(ns)!.set(w.metadata!.name as ComponentName, w);
    }
    for (const s of services) if (s.metadata?.name === 'kube-apiserver') view.services.set(s.metadata.namespace!, s);
    for (const p of pods) {
      const ns = p.metadata!.namespace!;
      view.pods.set(ns, [...(view.pods.get(ns) ?? []), p]);
    }
    return view;
  }

  /** The kube-apiserver's URL behind its Service's load balancer, once the cloud wrote an address into its status. */
  private externalUrlOf(service: V1Service | undefined): string | undefined {
    const lb = loadBalancerOf(service);
    return lb === undefined ? undefined : (this.options.externalUrl ?? defaultExternalUrl)(lb);
  }

  /** The labels of what this hosting owns on its seed. */
  private get ownLabels(): Record<string, string> {
    return { [MANAGED_BY]: FIELD_MANAGER, [SEED_LABEL]: this.options.namespaces.seed };
  }
}

/**
 * What the shoot's etcd pods' sidecars run with, read from each pod's own command line (a rollout's old and
 * new pods may differ: each field's largest value, the safe one); undefined unless every one reads.
 */
function podSidecarSettings(pods: readonly V1Pod[]): SidecarSettings | undefined {
  const etcdPods = pods.filter((p) => p.metadata?.labels?.app === 'etcd' && !p.metadata.deletionTimestamp);
  const flags = etcdPods.map((p) => {
    const container = p.spec?.containers.find((c) => c.name === SIDECAR_CONTAINER);
    return container?.args ? parseServeArgv(container.args) : undefined;
  });
  if (flags.length === 0 || flags.some((f) => f === undefined)) return undefined;
  return slowestSettings(flags.map((f) => servedSettings(f!)));
}

/** The address the cloud wrote into the Service's status for its load balancer, if it has one yet. */
function loadBalancerOf(service: V1Service | undefined): { host: string; port: number } | undefined {
  const ingress = service?.status?.loadBalancer?.ingress?.[0];
  const host = ingress?.hostname ?? ingress?.ip;
  return host === undefined ? undefined : { host, port: ingress?.ports?.[0]?.port ?? 443 };
}

/** What the components' files were made from, recorded on their Secret (the secrets by digest only). */
interface FilesInputs {
  secrets: string;
  apiDomain?: string;
  etcdServers: string[];
  internalUrl: string;
}
const FILES_INPUTS = 'gardenless.io/made-from';

function filesInputsOf(secret: V1Secret | undefined): FilesInputs | undefined {
  const text = secret?.metadata?.annotations?.[FILES_INPUTS];
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as FilesInputs;
  } catch {
    return undefined;
  }
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function defaultExternalUrl(lb: { host: string; port: number }): string {
  return lb.port === 443 ? `https://${lb.host}` : `https://${lb.host}:${lb.port}`;
}

/** etcd serves while a quorum of its members is Ready. */
function etcdServes(etcd: { spec?: { replicas?: number }; status?: { readyReplicas?: number } } | undefined): boolean {
  const replicas = etcd?.spec?.replicas ?? 0;
  return replicas > 0 && (etcd?.status?.readyReplicas ?? 0) > replicas / 2;
}

/** The StatefulSet controller has seen its latest template and every pod runs it. */
function rolledOut(sts: V1StatefulSet | undefined): boolean {
  const status = sts?.status;
  return (
    status !== undefined &&
    (status.observedGeneration ?? 0) >= (sts?.metadata?.generation ?? 0) &&
    (status.updateRevision === undefined || status.currentRevision === status.updateRevision) &&
    (status.updatedReplicas ?? 0) >= (sts?.spec?.replicas ?? 0)
  );
}

/** A pod as the weeder reads it: Running (and Ready), CrashLoopBackOff, or NotReady. */
function podState(pod: V1Pod): 'Running' | 'CrashLoopBackOff' | 'NotReady' {
  if (pod.status?.containerStatuses?.some((c) => c.state?.waiting?.reason === 'CrashLoopBackOff'))
    return 'CrashLoopBackOff';
  const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  return pod.status?.phase === 'Running' && ready ? 'Running' : 'NotReady';
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
