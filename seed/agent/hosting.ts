import type { SeedCommand } from '../../core/commands/index.js';
import type { EtcdMemberPlacement } from '../../core/ha/members.js';
import type { HostedControlPlane, SidecarSettings } from '../../core/model/seed.js';
import type { OwnerCheckResult } from '../../core/ownership/index.js';
import type { ShootSecrets } from '../../core/shootstate/secrets.js';
import type { Fidelity } from '../backup-restore/fidelity.js';
import type { ApiServerSpec, ControllerName, ControllerSpec, DeployWaiter } from './components.js';

/**
 * How a runtime hosts its control planes: per shoot its components (etcd with its backup-restore
 * sidecars, kube-apiserver behind the seed's load balancer, the controllers), what it observes of them, and
 * the seed's own services (owner-change notices, hand-overs, a kubelet's pods). The generic runtime decides
 * what should run and composes the components into its flows; a hosting renders them (`LocalHosting`: real
 * processes on loopback; `KubernetesHosting`: objects on a seed cluster; `MemoryHosting`: flags, for unit
 * tests). Every method is idempotent.
 */
export interface ControlPlaneHosting {
  /**
   * Keeps the shoot's secrets (opened from a command) where its components find them, replacing what was
   * kept: the local runtime in its plane's directory, files mode 0600.
   */
  installSecrets(technicalID: string, secrets: ShootSecrets): Promise<void>;
  /**
   * The control plane's components on this seed, each behind one deploy/destroy/wait contract
   * (`components.ts`); the runtime composes them into its flows (`control-plane-flow.ts`).
   */
  components(technicalID: string): ControlPlaneComponents;
  etcd(technicalID: string): Promise<EtcdView>;
  apiServer(technicalID: string): Promise<ApiServerView>;
  /**
   * Tells every sidecar of the shoot that its owner record changed (an owner-change notice): each checks
   * the record now instead of at its next poll. Best effort: a sidecar that does not answer still polls.
   */
  noticeOwnerChange(technicalID: string): Promise<OwnerNoticeDelivery>;
  /**
   * The shoot's API record names another seed's load balancer now: until `until`, this seed's load balancer
   * passes new connections for `apiDomain` on to `target` (`https://<host>:<port>`). False where the
   * hosting has no load balancer of its own, or it refuses the target (itself).
   */
  handOver?(input: { apiDomain: string; target: string; until: Date }): Promise<boolean>;
  /**
   * Where the components run as pods of a real kubelet: those pods as it reports them, which the heartbeat
   * carries for the weeder instead of the runtime's modelled ones. Absent where nothing runs as a pod.
   */
  pods?(technicalID: string): Promise<HostedPod[]>;
  /** The weeder's restart of a real pod: deleted (its controller makes a new one) only while it crash-loops. */
  restartPod?(technicalID: string, pod: string): Promise<boolean>;
  /**
   * The member this seed adds to the shoot's etcd cluster in a live walk (docs/design.md section 5): its
   * name and addresses, planned once for the plane's life here. Absent where a hosting cannot join a
   * running cluster.
   */
  liveMember?(technicalID: string): Promise<LiveMemberPlan>;
  /** Removes what is left on this machine (data dirs); the backups stay in the bucket. */
  remove(technicalID: string): Promise<void>;
  /** Stops every process of every control plane. */
  stopAll(): Promise<void>;
}

export type HostedPod = NonNullable<HostedControlPlane['pods']>[number];

export interface OwnerNoticeDelivery {
  /** The shoot's sidecars on this seed (one, or one per member of its cluster; none when it has no running etcd). */
  sidecars: number;
  /** How many took the notice. */
  notified: number;
}

export interface LiveMemberPlan {
  name: string;
  peerUrl: string;
  /** Where the walk reaches it until etcd advertises its own address. */
  clientUrl: string;
  /** It was started to join the cluster before (its plan kept here): an agent that restarted since starts it again. */
  joined: boolean;
  /** This seed's load balancer, where the shoot's kube-apiserver follows the walk (absent: none of its own). */
  loadBalancer?: string;
}

export interface EtcdSpec {
  shoot: SeedCommand['shoot'];
  /** The seed's backup bucket (snapshots go there; a restore reads the copies there). */
  bucket: string;
  /**
   * Restore from the bucket. With `ahead`: restore what the bucket holds now and keep etcd unserved
   * (no owner watchdog, no snapshots) until the restore without `ahead` catches it up; a hosting that
   * cannot (a cluster, a plane that already runs here) does nothing and says so (`ahead: false`).
   */
  restore?: { expectedLastRevision?: number; ahead?: boolean; acceptDigestMismatch?: boolean };
  /**
   * The members of the shoot's etcd with their zones (`etcdMembers` of core/ha): three for a `node` or
   * `zone` shoot, each with its own sidecar. Absent or one: a single member.
   */
  members?: readonly EtcdMemberPlacement[];
  /** The shoot's failure tolerance (GEP-20), which `members` follows: where a hosting places them by it. */
  failureTolerance?: 'node' | 'zone';
  /**
   * A live walk's destination: the single member (`liveMember`) joins the shoot's running cluster, every
   * member named (itself included), instead of starting a cluster of its own. Kept by the hosting for the
   * member's restarts (etcd ignores it once the member holds data).
   */
  join?: { name: string; members: readonly { name: string; peerUrl: string }[] };
  /**
   * A live walk's way out when the other seed was lost (docs/design.md section 5): the single member, which
   * runs, starts again as a cluster of its own with its data (`--force-new-cluster`), its lost peer removed.
   */
  forceNewCluster?: boolean;
}

export interface EtcdStarted {
  /** After a restore: the revision etcd reports. */
  restoredRevision?: number;
  /** After a restore ahead: whether etcd waits restored ahead (false: nothing was done). */
  ahead?: boolean;
  /** After a restore that caught up a restore ahead, or a restore ahead that refreshed one: the revision it had reached before. */
  aheadRevision?: number;
  /** After a restore: its fidelity check (a cluster: the first member's; every member checked its own). */
  fidelity?: Fidelity;
}

export interface EtcdView {
  running: boolean;
  /** Serving clients: the owner check said `owner` and etcd is unfenced and healthy. */
  available: boolean;
  /** Its sidecars run but none answered (late on a loaded machine): whether it serves is not known. */
  unanswered?: boolean;
  ownerCheck?: OwnerCheckResult;
  /** The public client URL (refused while fenced); of a cluster, a member that serves. */
  clientUrl?: string;
  /** A cluster's members, each as its sidecar reports it. */
  members?: EtcdMemberView[];
  /** The member that leads, as the members see it. */
  leader?: string;
  /** What its sidecars run with (of a cluster, each field's largest value); absent when a sidecar does not say. */
  settings?: SidecarSettings;
}

export interface EtcdMemberView {
  name: string;
  zone?: string;
  /** Its sidecar process runs. */
  running: boolean;
  /** Serving clients: owner, unfenced. */
  ready: boolean;
  /** etcd answers healthy: it has a leader (a quorum). */
  healthy: boolean;
  fenced: boolean;
  role: 'leader' | 'follower' | 'learner' | 'unknown';
  clientUrl: string;
}

export interface ApiServerView {
  running: boolean;
  /** The kube-apiserver probed from inside the seed (its internal address). */
  internalProbe: 'Success' | 'Failure' | 'Unknown';
  /** The load balancer's address, which the garden probes from outside. */
  externalUrl?: string;
}

/** etcd with its backup-restore sidecars: a deploy may restore, and a full snapshot is taken before hibernation. */
export interface EtcdComponent extends DeployWaiter<EtcdSpec, EtcdStarted> {
  readonly name: 'etcd';
  /** A full snapshot into the bucket, unless etcd does not serve as owner; a hosting that cannot reach its sidecars takes none. */
  snapshot(): Promise<void>;
}

/** Every component of one control plane on one seed. */
export interface ControlPlaneComponents {
  etcd: EtcdComponent;
  'kube-apiserver': DeployWaiter<ApiServerSpec>;
  controllers: Record<ControllerName, DeployWaiter<ControllerSpec>>;
}
