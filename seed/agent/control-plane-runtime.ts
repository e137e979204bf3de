import type { CommandOf, CommandResult, CommandType, SeedCommand } from '../../core/commands/index.js';
import {
  externalKey,
  memoryActuators,
  MemoryExtensionWorld,
  type ActuatorSet,
  type ExtensionResource,
} from '../../core/extensions/index.js';
import type { HostedControlPlane, SeedCapability } from '../../core/model/seed.js';
import type { OwnerCheckResult } from '../../core/ownership/index.js';
import type { BlobStore, SealedSecrets, ShootSecrets } from '../../core/shootstate/index.js';
import type { SnapshotStore } from '../../core/snapshots/index.js';
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
import { AgentCommandError, CatchUpError, messageOf, RestoreRefusedError } from './errors.js';
import { liveWalkRound, walkBackRound } from './live-walk-round.js';
import { deployKube, destroyAll, destroyKube, waitKubeCleanup } from './control-plane-flow.js';
import type { ScalableDependent } from '../../core/dwd/components.js';
import { etcdMembers } from '../../core/ha/members.js';
import type { ApiServerView, ControlPlaneHosting, EtcdSpec } from './hosting.js';
import type { PlaneRecord, PlaneStore } from './plane-store.js';
import {
  holdDown,
  newModel,
  observe,
  reconcileModel,
  reportModel,
  restartPod,
  scaleModel,
  type ControlPlaneModel,
  type Observation,
} from './model.js';
import type { SeedRuntime } from './runtime.js';

/**
 * How long a create, reconcile or wake waits for kube-apiserver to answer ready before it fails (retried by
 * the garden): a real one takes seconds cold, and several times that on a loaded two-core machine.
 */
const API_SERVER_READY_TIMEOUT_MS = 120_000;
/** How long a live walk waits for the destination's route to open once its kube-apiserver is ready (followWalk). */
const FOLLOW_ROUTE_TIMEOUT_MS = 10_000;
/** How long a restore waits for the Kubernetes control plane it stopped to be gone (a pod's graceful stop). */
const KUBE_CLEANUP_TIMEOUT_MS = 60_000;

/** A live walk's round without a command timeout: long enough for a learner to catch up and etcd's 5 s reconfiguration check. */
const LIVE_WALK_ROUND_SECONDS = 120;

export interface ControlPlaneRuntimeOptions {
  seed: string;
  hosting: ControlPlaneHosting;
  /** The state bucket named in a command, as a blob store. */
  blobStore: (bucket: string) => BlobStore;
  /** A backup bucket, as a snapshot store (the restore checks the copies before it starts a sidecar). */
  snapshotStore: (bucket: string) => SnapshotStore;
  /**
   * Opens the shoot's secrets a command carries, sealed for this seed (KMS, under this seed's context).
   * Without it commands' secrets are not opened, and the hosting starts its components without them.
   */
  openSecrets?: (sealed: SealedSecrets, shoot: SeedCommand['shoot']) => Promise<ShootSecrets>;
  /** The restore's owner check: it activates only on `owner`. Default: no check. */
  ownerCheck?: (shoot: SeedCommand['shoot']) => Promise<OwnerCheckResult>;
  /**
   * The zones a shoot's control plane runs in on this seed (`chooseZones` of core/ha), so that every etcd
   * member carries its zone. Default: none known.
   */
  zones?: (input: { technicalID: string; failureTolerance: 'node' | 'zone' | undefined }) => Promise<readonly string[]>;
  /** Default: the in-memory actuators of core/extensions on `world` (a local seed has no cloud). */
  actuators?: ActuatorSet;
  world?: MemoryExtensionWorld;
  now?: () => Date;
  /**
   * Where each plane's record is kept across agent restarts (`FilePlaneStore` next to the local runtime's
   * data); `recorded` and `adopt` read it. Default: none, the planes live as long as this object.
   */
  planeStore?: PlaneStore;
  /** Where what goes wrong without failing a command is told (the agent's log). */
  log?: (entry: Record<string, unknown>) => void;
}

interface Plane {
  /** The shoot the commands named: reported, so that the garden can tell a leftover. */
  shoot: { project: string; name: string };
  model: ControlPlaneModel;
  extensions: ExtensionResource[];
  /** The extensions were migrated away: nothing is active here any more. */
  migrated: boolean;
  backupBucket: string;
  /** The last observation, for restarts between heartbeats. */
  seen: Observation;
  /**
   * A restore began and has not finished: etcd's data dir may be no copy of anything yet, or etcd serves but
   * the components in front of it are still starting. Such a plane is never reported active.
   */
  restoring?: boolean;
  probeTime?: string;
  /** The shoot's API domain, as the last command named it (its kube-apiserver's name). */
  apiDomain?: string;
}

/** The commands that change what a plane's record holds (restart and notices change nothing kept). */
const RECORDED: ReadonlySet<CommandType> = new Set([
  'scale',
  'create-control-plane',
  'reconcile',
  'migrate',
  'delete-control-plane',
  'restore',
  'live-walk',
]);

/**
 * The generic seed runtime: per shoot a modelled control plane (replicas, pods) and its extension
 * resources (generic driver), and the processes its hosting runs (etcd with the sidecar, kube-apiserver).
 * One command at a time per shoot is the agent's guarantee; this class does not lock.
 */
export class ControlPlaneRuntime implements SeedRuntime {
  readonly world: MemoryExtensionWorld;
  private readonly actuators: ActuatorSet;
  private readonly planes = new Map<string, Plane>();
  private readonly now: () => Date;

  constructor(private readonly options: ControlPlaneRuntimeOptions) {
    this.world = options.world ?? new MemoryExtensionWorld();
    this.actuators = options.actuators ?? memoryActuators({ world: this.world, seed: options.seed });
    this.now = options.now ?? (() => new Date());
  }

  get hosting(): ControlPlaneHosting {
    return this.options.hosting;
  }

  /** The model of one control plane (live object: tests read it), or undefined. */
  model(technicalID: string): ControlPlaneModel | undefined {
    return this.planes.get(technicalID)?.model;
  }

  async execute<T extends CommandType>(command: CommandOf<T>, signal?: AbortSignal): Promise<CommandResult<T>> {
    return (await this.dispatch(command as SeedCommand, signal)) as CommandResult<T>;
  }

  async controlPlanes(): Promise<HostedControlPlane[]> {
    const out: HostedControlPlane[] = [];
    for (const [id, plane] of this.planes) {
      const { etcd, api } = await this.observe(plane);
      // A plane being restored runs no owner watchdog, and a hosting may not see what its sidecar saw (the
      // kubernetes hosting reads workloads, not sidecars): for a plane that does not serve, this seed's own
      // check tells the garden whether it is a leftover to release. Not for one stopped (hibernated): it
      // would cost an owner lookup a heartbeat for nothing.
      const ownerCheck =
        etcd.ownerCheck ??
        (plane.restoring || (etcd.running && !etcd.available)
          ? await this.options.ownerCheck?.({ ...plane.shoot, technicalID: id }).catch(() => undefined)
          : undefined);
      out.push({
        technicalID: id,
        shoot: plane.shoot,
        // Active only once the restore started everything: a destination whose etcd serves while its
        // kube-apiserver starts reports no load balancer yet, and the migration's switch must wait, not skip.
        active: !plane.migrated && !plane.restoring && etcd.available,
        ...(ownerCheck ? { ownerCheck } : {}),
        ...(api.running
          ? { internalProbe: api.internalProbe, internalProbeTime: plane.probeTime ?? this.now().toISOString() }
          : {}),
        ...(api.externalUrl ? { externalUrl: api.externalUrl } : {}),
        ...(etcd.clientUrl && etcd.available ? { etcdClientUrl: etcd.clientUrl } : {}),
        etcdReady: etcd.available,
        ...(etcd.members ? { etcdMembers: etcd.members.map(({ clientUrl: _url, running: _running, ...m }) => m) } : {}),
        ...(etcd.leader ? { etcdLeader: etcd.leader } : {}),
        ...(etcd.settings ? { sidecarSettings: etcd.settings } : {}),
        ...reportModel(plane.model),
        // Where a kubelet runs the pods, the weeder acts on those, not on the model's.
        ...(this.options.hosting.pods ? { pods: (await this.options.hosting.pods(id)).slice(0, 200) } : {}),
      });
    }
    return out;
  }

  capabilities(): SeedCapability[] {
    return this.options.hosting.liveMember ? ['live-walk'] : [];
  }

  async stop(): Promise<void> {
    await this.options.hosting.stopAll();
  }

  /** The control planes a previous agent left recorded here, to adopt one by one (`adopt`). */
  async recorded(): Promise<string[]> {
    const records = (await this.options.planeStore?.list()) ?? [];
    return records.map((r) => r.shoot.technicalID).filter((id) => !this.planes.has(id));
  }

  /**
   * Takes a recorded control plane back after an agent restart: the plane as it was recorded, and its
   * processes started from the data on this machine (unless hibernated, migrated away, or its restore
   * never finished). Nothing is
   * restored and nothing bypasses the fence: each sidecar starts fenced and serves only once its own
   * owner check says `owner`; one that finds another owner fences, takes its final snapshot, and is
   * then a leftover the garden releases. Returns false when there is no record (or the plane is known).
   */
  async adopt(technicalID: string): Promise<boolean> {
    if (this.planes.has(technicalID)) return false;
    const record = ((await this.options.planeStore?.list()) ?? []).find((r) => r.shoot.technicalID === technicalID);
    if (record === undefined) return false;
    const { shoot, backupBucket, hibernated, failureTolerance } = record;
    const plane = this.fresh(shoot, backupBucket, hibernated, failureTolerance);
    // What the dependency watchdog held down stays down: an agent restart is no reason to scale it up.
    if (record.remembered) holdDown(plane.model, record.remembered);
    reconcileModel(plane.model, { hibernated, ...(failureTolerance ? { failureTolerance } : {}) });
    plane.migrated = record.migrated;
    plane.extensions = record.extensions;
    if (record.apiDomain) plane.apiDomain = record.apiDomain;
    // A restore that did not finish left no copy of anything in the data dir: etcd must never serve it.
    // The plane stays known (not ready) for the migration's retried restore.
    if (record.restoring) plane.restoring = true;
    else if (!plane.migrated) await this.converge(shoot, plane);
    return true;
  }

  private async dispatch(command: SeedCommand, signal?: AbortSignal): Promise<CommandResult<CommandType>> {
    if (!RECORDED.has(command.type)) return this.perform(command, signal);
    try {
      return await this.perform(command, signal);
    } finally {
      // Whatever the command changed, also when it failed half-way (a plane built, extensions changed).
      await this.persist(command.shoot.technicalID);
    }
  }

  private async persist(technicalID: string): Promise<void> {
    const store = this.options.planeStore;
    if (!store) return;
    const plane = this.planes.get(technicalID);
    if (plane === undefined) return store.remove(technicalID);
    const record: PlaneRecord = {
      shoot: { technicalID, ...plane.shoot },
      backupBucket: plane.backupBucket,
      hibernated: plane.model.hibernated,
      ...(plane.model.failureTolerance ? { failureTolerance: plane.model.failureTolerance } : {}),
      migrated: plane.migrated,
      ...(plane.restoring ? { restoring: true } : {}),
      ...(plane.apiDomain ? { apiDomain: plane.apiDomain } : {}),
      ...(plane.model.hold.scaledDown ? { remembered: plane.model.hold.rememberedReplicas } : {}),
      extensions: plane.extensions,
    };
    await store.save(record);
  }

  private async perform(command: SeedCommand, signal?: AbortSignal): Promise<CommandResult<CommandType>> {
    const id = command.shoot.technicalID;
    switch (command.type) {
      case 'create-control-plane':
      case 'reconcile':
        return this.reconcile(command, signal);
      case 'migrate': {
        const plane = this.existing(command);
        const step = await migrateShootExtensions({
          command,
          current: plane.extensions,
          actuators: this.actuators,
          blobStore: this.options.blobStore,
          seed: this.options.seed,
          now: this.now,
          ...(signal ? { signal } : {}),
        });
        plane.extensions = step.resources;
        if (step.error) throw step.error;
        plane.migrated = true;
        return step.result!;
      }
      case 'delete-control-plane': {
        const plane = this.planes.get(id);
        if (plane === undefined) return { deleted: false, extensionsDropped: 0 };
        await assertNotOwner({
          command,
          seed: this.options.seed,
          ...(this.options.ownerCheck ? { ownerCheck: this.options.ownerCheck } : {}),
        });
        if (!command.keepExternalResources) {
          // The shoot's deletion: the extensions delete what they manage before the control plane goes.
          const step = await deleteShootExtensions({
            current: plane.extensions,
            actuators: this.actuators,
            now: this.now,
            ...(signal ? { signal } : {}),
          });
          plane.extensions = step.resources;
          if (step.error) throw step.error;
        }
        await this.removePlane(id);
        // Migrated resources are dropped without deleting what they manage; only their seed-local objects go.
        for (const e of plane.extensions) this.world.removeSeedObject(this.options.seed, externalKey(e));
        return { deleted: true, extensionsDropped: plane.extensions.length };
      }
      case 'restore':
        return this.restore(command, signal);
      case 'scale': {
        const plane = this.existing(command);
        const { previousReplicas } = scaleModel(plane.model, command.component, command.replicas);
        // A real kube-controller-manager stops (or starts) with its replicas; a hibernated plane runs none.
        if (!plane.model.hibernated && !plane.migrated)
          await this.scaleComponent(id, command.component, command.replicas, plane);
        return { component: command.component, previousReplicas, replicas: command.replicas };
      }
      case 'check-owner':
        // Not `existing`: a notice for a plane that is gone (or never came) has nothing to tell, which is no failure.
        return this.options.hosting.noticeOwnerChange(id);
      case 'hand-over': {
        // Not `existing` either: on the good path the plane here was deleted before the record switched.
        const { apiDomain, target, until } = command;
        return {
          handedOver: (await this.options.hosting.handOver?.({ apiDomain, target, until: new Date(until) })) ?? false,
        };
      }
      case 'live-walk':
        return this.liveWalk(command, signal);
      case 'restart': {
        const plane = this.existing(command);
        if (this.options.hosting.restartPod)
          return { pod: command.pod, restarted: await this.options.hosting.restartPod(id, command.pod) };
        const { etcd, api } = await this.observe(plane);
        const seen = { etcdAvailable: etcd.available, apiServerAvailable: api.internalProbe === 'Success' };
        return { pod: command.pod, restarted: restartPod(plane.model, command.pod, seen).restarted };
      }
    }
  }

  private async reconcile(
    command: CommandOf<'create-control-plane'> | CommandOf<'reconcile'>,
    signal?: AbortSignal,
  ): Promise<CommandResult<'reconcile'>> {
    const id = command.shoot.technicalID;
    const spec = command.controlPlane;
    // Hosting a plane is not owning it: a command queued before a move reaches the old seed late, and a
    // wake-up run there would start a plane the garden is about to release. Only a record that names another
    // seed refuses; a lookup that fails (a DNS blip) does not.
    await assertNotOwnedElsewhere({
      command,
      seed: this.options.seed,
      ...(this.options.ownerCheck ? { ownerCheck: this.options.ownerCheck } : {}),
    });
    const plane =
      this.planes.get(id) ?? this.fresh(command.shoot, spec.backup.bucket, spec.hibernated, spec.failureTolerance);
    plane.backupBucket = spec.backup.bucket;
    const step = await reconcileExtensions({
      technicalID: id,
      spec,
      current: plane.extensions,
      actuators: this.actuators,
      now: this.now,
      ...(signal ? { signal } : {}),
    });
    plane.extensions = step.resources;
    if (step.error) throw step.error;
    if (command.apiDomain) plane.apiDomain = command.apiDomain;
    await this.installSecrets(command);
    reconcileModel(plane.model, {
      hibernated: spec.hibernated,
      ...(spec.failureTolerance ? { failureTolerance: spec.failureTolerance } : {}),
    });
    await this.converge(command.shoot, plane);
    if (!plane.model.hibernated && plane.model.replicas['kube-apiserver'] > 0) await this.apiServerReady(id, signal);
    const etcd = await this.options.hosting.etcd(id);
    // The garden points the API record at the load balancer once it exists, as Gardener's DNSRecord follows
    // the kube-apiserver's Service; a hibernated plane has none, so hibernation leaves the record alone.
    const api = await this.options.hosting.apiServer(id);
    return {
      extensions: step.result ?? [],
      etcdReady: etcd.available,
      ...(api.running && api.externalUrl ? { externalUrl: api.externalUrl } : {}),
    };
  }

  private async restore(command: CommandOf<'restore'>, signal?: AbortSignal): Promise<CommandResult<'restore'>> {
    if (command.etcd?.ahead) return this.restoreAhead({ ...command, etcd: command.etcd });
    const id = command.shoot.technicalID;
    await assertOwner({
      command,
      seed: this.options.seed,
      ...(this.options.ownerCheck ? { ownerCheck: this.options.ownerCheck } : {}),
    });
    const bucket = restoreBucket(command, this.planes.get(id)?.backupBucket);
    // Checked before anything exists here: copies that do not restore leave no control plane behind.
    const summary = command.etcd
      ? await checkRestorable({
          command: { ...command, etcd: command.etcd },
          snapshotStore: this.options.snapshotStore,
        })
      : undefined;
    const plane =
      this.planes.get(id) ??
      this.fresh(command.shoot, bucket, command.hibernated, command.controlPlane?.failureTolerance);
    plane.migrated = false;
    const result: CommandResult<'restore'> = {};
    if (command.etcd && summary) {
      const expected = command.etcd.expectedLastRevision;
      plane.backupBucket = command.etcd.bucket;
      reconcileModel(plane.model, {
        hibernated: command.hibernated,
        ...(command.controlPlane?.failureTolerance ? { failureTolerance: command.controlPlane.failureTolerance } : {}),
      });
      if (command.apiDomain) plane.apiDomain = command.apiDomain;
      if (!command.hibernated) {
        await this.installSecrets(command);
        // Restoring replaces whatever etcd ran here: the copies in the bucket are the truth now. A standby's
        // kube-apiserver stays: it read etcd restored ahead from the same copies, which a catch-up (or a restore
        // from scratch) only moves forward, and it waits while etcd changes (its sidecar holds its address).
        if (!plane.restoring) await this.stopKube(id);
        plane.restoring = true;
        await this.persist(id);
        const started = await this.startEtcd(
          {
            shoot: command.shoot,
            bucket: command.etcd.bucket,
            restore: {
              ...(expected === undefined ? {} : { expectedLastRevision: expected }),
              ...(command.etcd.acceptDigestMismatch ? { acceptDigestMismatch: true } : {}),
            },
          },
          plane,
        );
        summary.restoredRevision = started.restoredRevision ?? summary.restoredRevision;
        if (started.aheadRevision !== undefined) summary.aheadRevision = started.aheadRevision;
        if (started.fidelity !== undefined) summary.fidelity = started.fidelity;
        await this.converge(command.shoot, plane);
        delete plane.restoring;
        // Answered once kube-apiserver is ready, as a create is: the step after the restore switches the
        // API record only to a destination that reports it so, and waits no longer than this here.
        if (plane.model.replicas['kube-apiserver'] > 0) await this.apiServerReady(id, signal);
      }
      result.etcd = summary;
    }
    if (command.extensions) {
      const step = await restoreShootExtensions({
        extensions: command.extensions,
        current: plane.extensions,
        actuators: this.actuators,
        blobStore: this.options.blobStore,
        now: this.now,
        ...(signal ? { signal } : {}),
      });
      plane.extensions = step.resources;
      if (step.error) throw step.error;
      result.extensions = step.result ?? [];
    }
    return result;
  }

  /**
   * A round of a live walk on its destination (docs/design.md section 5, "The live path"): this seed's member
   * joins the shoot's etcd cluster and the walk goes as far as the owner record lets it. The plane is
   * `restoring` until the owner record names this seed alone: till then it is never reported active, and an
   * agent restart starts nothing of it. Then its components start on the member, as after a restore.
   */
  private async liveWalk(command: CommandOf<'live-walk'>, signal?: AbortSignal): Promise<CommandResult<'live-walk'>> {
    if (command.lost === 'destination') return this.walkBack(command);
    const id = command.shoot.technicalID;
    const { hosting } = this.options;
    // The survey begins a walk, and nothing here may be of it yet: a plane still restoring is what an earlier
    // attempt left (a member the cluster removed when it walked back, a standby of another cluster).
    if (command.spec === undefined && this.planes.get(id)?.restoring) await this.removePlane(id);
    const existing = this.planes.get(id);
    if (hosting.liveMember === undefined || existing?.model.failureTolerance)
      throw new AgentCommandError(
        'LiveWalkUnsupported',
        `seed ${this.options.seed} cannot join the etcd of ${id} in a live walk: ${hosting.liveMember ? 'a cluster of several members' : 'its runtime has no member of its own to join'}`,
      );
    const plane = existing ?? this.fresh(command.shoot, command.backup.bucket, false);
    plane.backupBucket = command.backup.bucket;
    plane.migrated = false;
    if (command.apiDomain) plane.apiDomain = command.apiDomain;
    if (existing === undefined) plane.restoring = true;
    await this.persist(id);
    await this.installSecrets(command);
    const self = await hosting.liveMember(id);
    // A member that joined before runs again (an agent restart mid-walk left it stopped: a restoring plane is
    // not started on adoption), so that the walk finds it where it got to. Only a member that joined: any
    // other start would be a cluster of its own.
    if (self.joined) await this.startEtcd({ shoot: command.shoot, bucket: plane.backupBucket }, plane);
    const result = await liveWalkRound({
      command,
      self,
      start: async (join) =>
        void (await this.startEtcd({ shoot: command.shoot, bucket: plane.backupBucket, join }, plane)),
      follow: () => this.followWalk(command, plane, signal),
      force: () => this.forceNewCluster(command.shoot, plane),
      // Its member only learnt: nothing of it is kept, and the bad path's restore starts the plane afresh.
      wipe: () => this.removePlane(id),
      timeoutMs: liveRoundTimeoutMs(command),
    });
    if (plane.restoring && (result.next === 'retire-source' || result.next === 'done')) {
      // The owner record names this seed alone: the member serves, and the plane is this seed's as after a restore.
      reconcileModel(plane.model, { hibernated: false });
      await this.converge(command.shoot, plane);
      delete plane.restoring;
      if (plane.model.replicas['kube-apiserver'] > 0) await this.apiServerReady(id, signal);
    }
    return result;
  }

  /**
   * A round of a live walk whose destination was lost, on the source (docs/design.md section 5, "Ways
   * out"): the shoot stays here, its cluster rid of the destination's members or this seed's member forced
   * into a cluster of its own; the plane serves on as before the walk.
   */
  private async walkBack(command: CommandOf<'live-walk'>): Promise<CommandResult<'live-walk'>> {
    const id = command.shoot.technicalID;
    const plane = this.planes.get(id);
    if (plane === undefined || plane.restoring)
      throw new AgentCommandError(
        'ControlPlaneNotFound',
        `seed ${this.options.seed} serves no control plane ${id} to walk back to`,
      );
    const { spec } = command;
    if (spec === undefined)
      throw new AgentCommandError('InvalidCommand', "a walk back needs the survey's answer (spec)");
    const { etcd } = await this.observe(plane);
    if (etcd.clientUrl === undefined)
      throw new AgentCommandError('RuntimeUnavailable', `the etcd of ${id} does not run on seed ${this.options.seed}`);
    return walkBackRound({
      command: { ...command, spec },
      clientUrl: etcd.clientUrl,
      force: () => this.forceNewCluster(command.shoot, plane),
      timeoutMs: liveRoundTimeoutMs(command),
    });
  }

  /** Starts this seed's member again as a cluster of its own, keeping its data (a walk's way out `force`). */
  private async forceNewCluster(shoot: CommandOf<'live-walk'>['shoot'], plane: Plane): Promise<void> {
    await this.startEtcd({ shoot, bucket: plane.backupBucket, forceNewCluster: true }, plane);
  }

  /**
   * The shoot's kube-apiserver follows the walk: it starts alone on this seed's member once that votes, and
   * the walk goes on once it is ready and reachable, so that a client the source's load balancer hands over
   * (the garden sent the hand-over at own-live) finds it serving the moment the source's member leaves:
   * ready alone is not enough, since this seed's load balancer opens the route only once the member's
   * sidecar says it serves as this seed's, which can come seconds after kube-apiserver answers.
   * Its controllers start when the owner record names this seed. Best effort: where it does not start,
   * finish-live starts it; where the route does not open within `FOLLOW_ROUTE_TIMEOUT_MS`, the walk goes on.
   * True when this call started it.
   */
  private async followWalk(command: CommandOf<'live-walk'>, plane: Plane, signal?: AbortSignal): Promise<boolean> {
    const id = command.shoot.technicalID;
    if (!plane.restoring || (await this.options.hosting.apiServer(id)).running) return false;
    if (!(await this.startStandbyApiServer(command, plane))) return false;
    try {
      await this.apiServerReady(id, signal);
      await this.options.hosting.components(id)['kube-apiserver'].wait({
        timeoutMs: FOLLOW_ROUTE_TIMEOUT_MS,
        reachable: true,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      this.options.log?.({ event: 'following-api-server-not-ready', shoot: id, error: messageOf(error) });
    }
    return true;
  }

  /**
   * A restore ahead (pre-copy, docs/design.md section 4): etcd restored from what the bucket holds now
   * and kept unserved until this migration's restore catches it up. It never serves, so it needs no
   * owner check and may run while the source still serves. The plane stays marked `restoring` until the
   * restore succeeds: an agent restart never starts it, and the heartbeat reports this seed's own owner
   * check for it, so that a migration that failed leaves no standby behind (the leftover rule). Only for
   * a single etcd that does not run here: otherwise `ahead: false`, and the restore does all of it. A
   * second restore ahead (the migration's refresh round) brings the standby up to what the bucket holds now.
   */
  private async restoreAhead(
    command: CommandOf<'restore'> & { etcd: NonNullable<CommandOf<'restore'>['etcd']> },
  ): Promise<CommandResult<'restore'>> {
    const id = command.shoot.technicalID;
    const existing = this.planes.get(id);
    if (command.hibernated || command.controlPlane?.failureTolerance || (existing !== undefined && !existing.restoring))
      return notRestoredAhead();
    const summary = await checkRestorable({ command, snapshotStore: this.options.snapshotStore });
    const plane = existing ?? this.fresh(command.shoot, command.etcd.bucket, false);
    plane.backupBucket = command.etcd.bucket;
    plane.migrated = false;
    plane.restoring = true;
    await this.persist(id);
    // Before etcd starts: its peer URLs take TLS from the shoot's etcd peer CA, and the restore only
    // catches this etcd up, so one started without it would keep plain peers (and no live walk joins them).
    await this.installSecrets(command);
    const started = await this.startEtcd(
      { shoot: command.shoot, bucket: command.etcd.bucket, restore: { ahead: true } },
      plane,
    );
    if (started.ahead) await this.startStandbyApiServer(command, plane);
    return {
      etcd: {
        restoredRevision: started.restoredRevision ?? summary.restoredRevision,
        snapshots: summary.snapshots,
        final: false,
        ahead: started.ahead ?? false,
        // A refresh of etcd already restored ahead here (the second pre-copy round) says where it came from.
        ...(started.aheadRevision === undefined ? {} : { aheadRevision: started.aheadRevision }),
      },
    };
  }

  /**
   * kube-apiserver alone on the standby (its controllers would only fail their writes): it reads etcd
   * restored ahead, unreachable from outside (the load balancer admits none while etcd does not serve), so
   * that the restore only has it reconnect instead of starting cold (docs/design.md section 4); or on a live
   * walk's member before the plane is this seed's. Best effort: where it does not start (false), the
   * restore or finish-live starts it as it would without.
   */
  private async startStandbyApiServer(command: CommandOf<'restore' | 'live-walk'>, plane: Plane): Promise<boolean> {
    const id = command.shoot.technicalID;
    // Not hibernated (a hibernated shoot is neither restored ahead nor walked): its kube-apiserver will run.
    if (!command.secrets) return false;
    try {
      await this.installSecrets(command);
      if (command.apiDomain) plane.apiDomain = command.apiDomain;
      await deployKube(this.options.hosting.components(id), {
        ...(plane.apiDomain ? { apiDomain: plane.apiDomain } : {}),
        standby: true,
      });
      return true;
    } catch (error) {
      this.options.log?.({ event: 'standby-api-server-failed', shoot: id, error: messageOf(error) });
      return false;
    }
  }

  /**
   * The secrets a command carries, opened and handed to the hosting before anything starts: a seed that
   * cannot open them (KMS refuses or fails) answers ShootStateUnavailable, which the garden retries.
   */
  private async installSecrets(
    command: CommandOf<'create-control-plane' | 'reconcile' | 'restore' | 'live-walk'>,
  ): Promise<void> {
    if (!command.secrets || !this.options.openSecrets) return;
    let secrets: ShootSecrets;
    try {
      secrets = await this.options.openSecrets(command.secrets, command.shoot);
    } catch (cause) {
      throw new AgentCommandError(
        'ShootStateUnavailable',
        `the secrets of ${command.shoot.technicalID} do not open on seed ${this.options.seed}: ${messageOf(cause)}`,
        undefined,
        { cause },
      );
    }
    await this.options.hosting.installSecrets(command.shoot.technicalID, secrets);
  }

  /** Starts or stops the processes to match the model: etcd unless hibernated, kube-apiserver while it has replicas. */
  private async converge(shoot: SeedCommand['shoot'], plane: Plane): Promise<void> {
    const id = shoot.technicalID;
    const components = this.options.hosting.components(id);
    if (plane.model.hibernated) {
      // Hibernation backs etcd up fully before it stops (Gardener does the same), so that the backups alone restore it.
      await destroyKube(components);
      try {
        await components.etcd.snapshot();
      } catch (cause) {
        throw new AgentCommandError(
          'RuntimeUnavailable',
          `the full snapshot before hibernating ${id} failed: ${messageOf(cause)}`,
          undefined,
          { cause },
        );
      }
      await components.etcd.destroy();
      return;
    }
    await this.startEtcd({ shoot, bucket: plane.backupBucket }, plane);
    if (plane.model.replicas['kube-apiserver'] > 0) await this.startComponents(id, plane);
    else await destroyKube(components);
  }

  private async startComponents(id: string, plane: Plane): Promise<void> {
    try {
      await deployKube(this.options.hosting.components(id), {
        ...(plane.apiDomain ? { apiDomain: plane.apiDomain } : {}),
        replicas: plane.model.replicas,
        remembered: plane.model.hold.rememberedReplicas,
        ...(plane.model.failureTolerance ? { failureTolerance: plane.model.failureTolerance } : {}),
      });
    } catch (cause) {
      if (cause instanceof AgentCommandError) throw cause;
      throw new AgentCommandError(
        'RuntimeUnavailable',
        `the Kubernetes control plane of ${id} did not start: ${messageOf(cause)}`,
        undefined,
        { cause },
      );
    }
  }

  private async apiServerReady(id: string, signal?: AbortSignal): Promise<void> {
    try {
      await this.options.hosting.components(id)['kube-apiserver'].wait({
        timeoutMs: API_SERVER_READY_TIMEOUT_MS,
        ...(signal ? { signal } : {}),
      });
    } catch (cause) {
      throw new AgentCommandError('RuntimeUnavailable', messageOf(cause), undefined, { cause });
    }
  }

  /** Starts (or restores) etcd with the members the plane's failure tolerance asks for, each in its zone. */
  private async startEtcd(spec: Omit<EtcdSpec, 'members'>, plane: Plane) {
    try {
      const failureTolerance = plane.model.failureTolerance;
      const zones = (await this.options.zones?.({ technicalID: spec.shoot.technicalID, failureTolerance })) ?? [];
      return await this.options.hosting.components(spec.shoot.technicalID).etcd.deploy({
        ...spec,
        members: etcdMembers({ tolerance: failureTolerance, zones }),
        ...(failureTolerance ? { failureTolerance } : {}),
      });
    } catch (cause) {
      if (cause instanceof AgentCommandError) throw cause;
      // The snapshots themselves do not restore (a revision or the key-space digest): another attempt
      // restores the same ones. Nothing serves: the sidecar exited, or waits in standby.
      const refused =
        cause instanceof RestoreRefusedError || (cause instanceof CatchUpError && cause.refused !== undefined)
          ? cause
          : undefined;
      if (refused !== undefined)
        throw new AgentCommandError(
          'EtcdRestoreFailed',
          `etcd of ${spec.shoot.technicalID} does not restore: ${messageOf(cause)}`,
          { reason: refused.refused, ...refused.details },
          { cause },
        );
      throw new AgentCommandError(
        'RuntimeUnavailable',
        `etcd of ${spec.shoot.technicalID} did not start${spec.restore ? ' restored' : ''}: ${messageOf(cause)}`,
        undefined,
        { cause },
      );
    }
  }

  /** Stops the plane's processes and removes what it has on this machine (its backups stay); recorded after the command. */
  private async removePlane(id: string): Promise<void> {
    await this.stopProcesses(id);
    await this.options.hosting.remove(id);
    this.planes.delete(id);
  }

  private async stopProcesses(id: string): Promise<void> {
    await destroyAll(this.options.hosting.components(id));
  }

  /**
   * The Kubernetes control plane stops and is gone before a restore replaces the etcd it read: none of its
   * writes may land in what the restore brings back.
   */
  private async stopKube(id: string): Promise<void> {
    const components = this.options.hosting.components(id);
    await destroyKube(components);
    try {
      await waitKubeCleanup(components, { timeoutMs: KUBE_CLEANUP_TIMEOUT_MS });
    } catch (cause) {
      throw new AgentCommandError('RuntimeUnavailable', messageOf(cause), undefined, { cause });
    }
  }

  /** The dependency watchdog's scale: one controller to `replicas`, the hold's memory kept with it. */
  private async scaleComponent(
    id: string,
    component: ScalableDependent,
    replicas: number,
    plane: Plane,
  ): Promise<void> {
    const remembered = plane.model.hold.rememberedReplicas[component];
    await this.options.hosting.components(id).controllers[component].deploy({
      replicas,
      ...(remembered === undefined ? {} : { remembered }),
      ...(plane.model.failureTolerance ? { failureTolerance: plane.model.failureTolerance } : {}),
    });
  }

  private async observe(plane: Plane) {
    const id = plane.model.technicalID;
    const etcd = await this.options.hosting.etcd(id);
    // A standby's kube-apiserver reads etcd restored ahead and serves no one; a live walk's follows the walk
    // before the plane is this seed's. Reported is only the load balancer it serves behind (the migration
    // hands the source's connections over to it ahead), never its probe: the dependency watchdog's it is not yet.
    const observed = await this.options.hosting.apiServer(id);
    const api: ApiServerView = plane.restoring
      ? {
          running: false,
          internalProbe: 'Failure',
          ...(observed.externalUrl ? { externalUrl: observed.externalUrl } : {}),
        }
      : observed;
    plane.probeTime = this.now().toISOString();
    plane.seen = { etcdAvailable: etcd.available, apiServerAvailable: api.internalProbe === 'Success' };
    // A hibernated, migrated or still restoring plane has no pods that could crash-loop.
    if (!plane.model.hibernated && !plane.migrated && !plane.restoring) observe(plane.model, plane.seen);
    return { etcd, api };
  }

  private fresh(
    shoot: SeedCommand['shoot'],
    backupBucket: string,
    hibernated: boolean,
    failureTolerance?: 'node' | 'zone',
  ): Plane {
    const technicalID = shoot.technicalID;
    const plane: Plane = {
      shoot: { project: shoot.project, name: shoot.name },
      model: newModel({ technicalID, hibernated, ...(failureTolerance ? { failureTolerance } : {}) }),
      extensions: [],
      migrated: false,
      backupBucket,
      seen: { etcdAvailable: false, apiServerAvailable: false },
    };
    this.planes.set(technicalID, plane);
    return plane;
  }

  private existing(command: SeedCommand): Plane {
    const plane = this.planes.get(command.shoot.technicalID);
    if (plane) return plane;
    throw new AgentCommandError(
      'ControlPlaneNotFound',
      `seed ${this.options.seed} hosts no control plane for ${command.shoot.technicalID}`,
    );
  }
}

/**
 * How long a live walk's round may take: the garden's task gives up once the command's timeout passed since
 * it was sent, so the round ends before, and the step's retry (the same round again) resumes where it stands.
 */
function liveRoundTimeoutMs(command: CommandOf<'live-walk'>): number {
  return Math.max(
    10_000,
    Date.parse(command.issuedAt) + (command.timeoutSeconds ?? LIVE_WALK_ROUND_SECONDS) * 1_000 - 5_000 - Date.now(),
  );
}
