import type { SidecarSettings } from '../../core/model/seed.js';
import type { OwnerLookup } from '../../core/ownership/index.js';
import { backupLagLimit, type SnapshotStore } from '../../core/snapshots/index.js';
import { CatchUpRefusedError, SidecarConfigError } from './errors.js';
import { EtcdSupervisor, type EtcdSupervisorOptions, type FenceTiming } from './etcd-supervisor.js';
import type { GateState } from './public-gate.js';
import type { RangedObjectReader } from './ranged-download.js';
import { restoreFromStore, type RestoreOptions, type RestoreResult } from './restorer.js';
import { catchUpRestore, type CatchUpResult } from './catch-up.js';
import { LeaseHold } from './leases.js';
import {
  DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS,
  Snapshotter,
  type Compression,
  type PreparedFinal,
} from './snapshotter.js';
import { WriteGuard, type WriteGuardStatus } from './write-guard.js';
import { withTimeout } from './timeout.js';
import { startStatusServer, type StatusServer } from './status-server.js';
import { OwnerWatchdogLoop, type WatchdogActuator } from './owner-watchdog-loop.js';
import { ClusterMember, type ClusterMemberStatus } from './cluster/member.js';
import { restoreMember } from './cluster/restore.js';
import type { ClusterSpec } from './cluster/spec.js';

export interface SidecarOptions {
  /** The etcd's folder in the bucket (`shoot--<project>--<name>`). */
  readonly technicalID: string;
  readonly etcd: EtcdSupervisorOptions;
  readonly store: SnapshotStore;
  readonly owner: {
    readonly lookup: OwnerLookup;
    /** `owner.<shoot>.<project>.<internal-domain>`. */
    readonly recordName: string;
    /** This seed's identity, the value the record holds while it owns the shoot. */
    readonly identity: string;
  };
  /** ms; defaults 5 s, 30 s, 1 s, and the check interval. */
  readonly ownerCheckInterval?: number;
  readonly unknownGrace?: number;
  readonly initialRetryDelay?: number;
  readonly checkTimeout?: number;
  /** ms; defaults 60 min and 20 s. */
  readonly fullSnapshotInterval?: number;
  readonly deltaSnapshotInterval?: number;
  /**
   * ms; the write guard's limit: while the oldest acknowledged write not yet in the store is older than
   * this, etcd refuses writes (docs/design.md section 4). Default one delta interval plus 30 s; it must
   * exceed the delta interval.
   */
  readonly backupLagLimit?: number;
  /** Default gzip. */
  readonly compression?: Compression;
  /** Restore the data dir from the store before serving (latest full + later deltas). */
  readonly restore?:
    | boolean
    | {
        readonly expectedLastRevision?: number;
        /** The full snapshot, already downloaded (cluster members of one machine share it). */
        readonly file?: string;
        /**
         * Serve even where the restored key space differs from the digest the source's snapshot names
         * (the operator's override of a migration that failed its fidelity check); the result says so.
         */
        readonly acceptDigestMismatch?: boolean;
        /**
         * Restore ahead (pre-copy, docs/design.md section 4): restore what the store holds now and stay in
         * standby, etcd on the private address, no owner watchdog, no snapshots, until `catchUp` (the
         * migration's restore, `POST /restore/catch-up`) replays what was copied since and serves as any
         * restored sidecar does. A single etcd only.
         */
        readonly ahead?: boolean;
      };
  /**
   * This etcd is one member of a cluster (a `node` or `zone` shoot): the sidecar snapshots only while its
   * member leads, fences with the cluster as a unit, and rejoins its member as a learner when it lost its
   * data. Absent: a single-member etcd.
   */
  readonly cluster?: ClusterSpec & {
    readonly leaderCheckInterval?: number;
    readonly handoverDelay?: number;
    readonly memberFenceTimeout?: number;
  };
  /** Readiness/status endpoint; default 127.0.0.1 and a free port. */
  readonly statusHost?: string;
  readonly statusPort?: number;
  /** Where snapshot files are staged. Default `<dataDir>.staging`. */
  readonly stagingDir?: string;
  readonly etcdctlBinary?: string;
  /** Parallel ranged downloads for a restore (see `s3Backup`). */
  readonly rangedReader?: RangedObjectReader;
  /** One structured line per event (start, checks, actions, snapshots, failures). */
  readonly log?: (entry: Record<string, unknown>) => void;
}

export interface SidecarStatus {
  readonly technicalID: string;
  readonly identity: string;
  readonly recordName: string;
  readonly ready: boolean;
  readonly owner: {
    readonly mode: string;
    readonly fencedBecause: string | null;
    readonly lastResult: string | null;
    readonly reason: string | null;
    readonly lastCheckAt: string | null;
    readonly unknownForMs: number | null;
    readonly finalSnapshot: string;
    readonly checks: number;
    /** Owner-change notices received. */
    readonly notices: number;
  };
  readonly etcd: {
    readonly fenced: boolean;
    readonly running: boolean;
    readonly endpoint: string | null;
    readonly pid: number | null;
    readonly lastFence: FenceTiming | null;
    /** The kube-apiserver's address to a single member: `holding` until etcd serves, `open` read-only in standby. */
    readonly apiServerGate: GateState;
  };
  readonly snapshots: ReturnType<Snapshotter['status']>;
  readonly writeGuard: WriteGuardStatus;
  readonly restore: RestoreResult | CatchUpResult | null;
  /** Restored ahead and waiting for the catch-up: etcd is private and nothing else runs. */
  readonly standby: boolean;
  /** Only for a member of a cluster. */
  readonly cluster?: ClusterMemberStatus & { readonly healthy: boolean };
  /** What it runs with: the agent reports it, and the garden bounds a migration's wait for the final snapshot by it. */
  readonly settings: SidecarSettings;
}

/**
 * The backup-restore sidecar of one shoot etcd: supervises etcd, snapshots it to the seed's bucket,
 * runs the owner watchdog and serves readiness. It starts fenced (etcd on the private address only) and
 * serves once the first check says this seed owns the shoot.
 */
export class BackupRestoreSidecar {
  readonly supervisor: EtcdSupervisor;
  readonly snapshotter: Snapshotter;
  readonly watchdog: OwnerWatchdogLoop;
  readonly writeGuard: WriteGuard;
  /** The cluster side, for a member of a cluster. */
  readonly member: ClusterMember | undefined;
  private server: StatusServer | undefined;
  private restoreResult: RestoreResult | CatchUpResult | null = null;
  private standby = false;
  /** A catch-up or refresh failed: etcd holds no state a replay can build on, the next one restores from scratch. */
  private aheadLost = false;
  /** Keeps the leases of a restored etcd alive until it serves (a restore, a standby, a catch-up). */
  private readonly leaseHold: LeaseHold;
  private catchingUp: Promise<CatchUpResult> | undefined;
  private refreshing: Promise<CatchUpResult> | undefined;
  private lastFence: FenceTiming | null = null;
  /** The final delta the last fence read while etcd refused writes, until it is uploaded or the sidecar unfences. */
  private preparedFinal: PreparedFinal | undefined;
  private stopped = false;

  private constructor(private readonly options: SidecarOptions) {
    validateSidecarOptions(options);
    if (options.cluster && typeof options.restore === 'object' && options.restore.ahead) {
      throw new SidecarConfigError(
        'a cluster member is not restored ahead: its members restore together, once the shoot is theirs',
        'restore',
      );
    }
    const log = options.log ?? (() => undefined);
    const stagingDir = options.stagingDir ?? `${options.etcd.dataDir}.staging`;
    const cluster = options.cluster;
    this.leaseHold = new LeaseHold(() => this.supervisor.clientUrl('private'));
    this.supervisor = new EtcdSupervisor({
      ...options.etcd,
      ...(cluster
        ? {
            name: cluster.self,
            cluster: {
              state: cluster.state,
              token: cluster.token,
              initialCluster: cluster.members.map((m) => ({ name: m.name, peerUrl: m.peerUrl })),
            },
            beforeStart: () => this.member!.beforeStart(),
          }
        : {}),
      onEvent: (e) => {
        log({ event: `etcd-${e.type}`, ...e, ...('error' in e ? { error: String(e.error) } : {}) });
        options.etcd.onEvent?.(e);
      },
    });
    this.snapshotter = new Snapshotter({
      store: options.store,
      technicalID: options.technicalID,
      endpoint: () => this.supervisor.clientUrl('public'),
      stagingDir,
      ...pick(options, ['fullSnapshotInterval', 'deltaSnapshotInterval', 'compression', 'etcdctlBinary']),
      ...(cluster ? { baseline: 'store' as const, uploadGuard: () => this.member!.leadership.guard() } : {}),
      onEvent: (e) =>
        log(
          e.type === 'snapshot'
            ? { event: 'snapshot', ...e.snapshot }
            : { ...e, event: e.type, ...('error' in e ? { error: String(e.error) } : {}) },
        ),
    });
    this.writeGuard = new WriteGuard({
      limit: backupLagLimit({
        deltaSnapshotInterval: options.deltaSnapshotInterval ?? DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS,
        backupLagLimit: options.backupLagLimit,
      }),
      snapshotter: this.snapshotter,
      endpoint: () => this.supervisor.clientUrl('public'),
      onEvent: (e) =>
        log(
          e.type === 'write-guard-failed'
            ? { event: e.type, action: e.action, error: String(e.error) }
            : { ...e, event: e.type },
        ),
    });
    if (cluster) {
      this.member = new ClusterMember({
        spec: cluster,
        supervisor: this.supervisor,
        snapshotter: this.snapshotter,
        store: options.store,
        technicalID: options.technicalID,
        identity: options.owner.identity,
        ...pick(cluster, ['leaderCheckInterval', 'handoverDelay', 'memberFenceTimeout']),
        onMarker: (marker) => {
          if (this.watchdog.status().state.mode === 'lost') return;
          void this.watchdog.observe({
            result: 'not-owner',
            reason: `member ${marker.by} of this cluster saw seed ${marker.identity} lose the shoot (${marker.reason})`,
          });
        },
        log,
      });
    }
    this.watchdog = new OwnerWatchdogLoop({
      lookup: options.owner.lookup,
      recordName: options.owner.recordName,
      identity: options.owner.identity,
      clusterId: () => this.supervisor.clusterId(1_000),
      ...pick(options, ['ownerCheckInterval', 'unknownGrace', 'initialRetryDelay', 'checkTimeout']),
      actuator: this.member
        ? this.clusterActuator(this.member, log)
        : {
            stopSnapshotter: () => this.snapshotter.stop(),
            startSnapshotter: () => this.snapshotter.start(),
            fence: () => this.fenceSingle(log),
            unfence: async () => {
              this.preparedFinal = undefined;
              await this.supervisor.unfence();
            },
            takeFinalSnapshot: async () => {
              const prepared = this.preparedFinal;
              if (prepared !== undefined && this.supervisor.address !== 'public') {
                // Read while etcd refused every write, uploaded now that it is gone: nothing can have been written since.
                const taken = await this.snapshotter.takePreparedFinal(prepared);
                this.preparedFinal = undefined;
                if (taken !== undefined) return;
              }
              // Fence again first (a no-op when fenced): a final snapshot is only ever taken from an etcd no client can write to.
              await this.supervisor.fence();
              await this.snapshotter.takeFinal({ endpoint: this.supervisor.clientUrl('private') });
            },
            servingPublicly: () => this.supervisor.address === 'public',
          },
      onEvent: (e) => {
        if (e.type === 'check')
          log({
            event: 'owner-check',
            result: e.check.result,
            reason: e.check.reason,
            mode: e.mode,
            actions: e.actions,
            trigger: e.trigger,
          });
        else if (e.type === 'notice') log({ event: 'owner-notice', checkInMs: e.checkInMs });
        else if (e.type === 'action') log({ event: 'watchdog-action', action: e.action, ms: e.ms });
        else log({ event: 'watchdog-action-failed', action: e.action, error: String(e.error) });
      },
    });
  }

  /**
   * Starts the status endpoint, restores when asked (then takes a full snapshot at once, so the store
   * never holds an old full snapshot followed by deltas with a revision gap), starts etcd on the private
   * address, and the owner watchdog with its first check at once.
   */
  static async start(options: SidecarOptions): Promise<BackupRestoreSidecar> {
    const sidecar = new BackupRestoreSidecar(options);
    try {
      await sidecar.boot();
      return sidecar;
    } catch (error) {
      await sidecar.stop();
      throw error;
    }
  }

  private async boot(): Promise<void> {
    const o = this.options;
    // Its kube-apiserver's connections wait from the start, so that they complete the moment etcd serves.
    await this.supervisor.holdApiServer();
    this.writeGuard.start();
    this.server = await startStatusServer({
      source: {
        readiness: () => this.readiness(),
        status: async () => {
          await this.refresh();
          return this.status();
        },
        triggerSnapshot: (kind) => (kind === 'full' ? this.snapshotter.takeFull() : this.snapshotter.takeDelta()),
        noticeOwnerChange: () => (this.stopped || this.standby ? undefined : this.watchdog.notice()),
        catchUp: (expectedLastRevision, options) => this.catchUp(expectedLastRevision, options),
        refreshAhead: () => this.refreshAhead(),
      },
      ...(o.statusHost === undefined ? {} : { host: o.statusHost }),
      ...(o.statusPort === undefined ? {} : { port: o.statusPort }),
    });
    if (o.restore && this.member && o.cluster) {
      const coordinator = o.cluster.members[0]?.name === o.cluster.self;
      this.restoreResult = await restoreMember({
        store: o.store,
        technicalID: o.technicalID,
        supervisor: this.supervisor,
        stagingDir: o.stagingDir ?? `${o.etcd.dataDir}.staging`,
        cluster: {
          token: o.cluster.token,
          initialCluster: o.cluster.members.map((m) => ({ name: m.name, peerUrl: m.peerUrl })),
        },
        coordinator,
        ...(typeof o.restore === 'object' && o.restore.expectedLastRevision !== undefined
          ? { expectedLastRevision: o.restore.expectedLastRevision }
          : {}),
        ...(typeof o.restore === 'object' && o.restore.file !== undefined ? { file: o.restore.file } : {}),
        ...(typeof o.restore === 'object' && o.restore.acceptDigestMismatch ? { acceptDigestMismatch: true } : {}),
        ...(o.etcdctlBinary ? { etcdctlBinary: o.etcdctlBinary } : {}),
        ...(o.rangedReader ? { rangedReader: o.rangedReader } : {}),
      });
      this.member.markStarted();
      o.log?.({ event: 'restored', coordinator, ...this.restoreResult });
      this.snapshotter.assumeDigest(this.restoreResult.fidelity);
      // One full snapshot of the restored cluster, so that its history in this bucket starts from its own.
      if (coordinator)
        await this.snapshotter.takeFull({ endpoint: this.supervisor.clientUrl('private'), unguarded: true });
    } else if (o.restore) {
      const restore = typeof o.restore === 'object' ? o.restore : {};
      this.restoreResult = await restoreFromStore({
        ...this.restoreOptions(restore.expectedLastRevision),
        ...(restore.acceptDigestMismatch ? { acceptDigestMismatch: true } : {}),
      });
      if (restore.ahead) {
        // Any restart waits here, not in the migration's downtime: serving then only opens the gate.
        await this.supervisor.lowerLimits();
        this.standby = true;
        await this.supervisor.openApiServerReadOnly();
        o.log?.({ event: 'restored-ahead', ...this.restoreResult });
        return;
      }
      o.log?.({ event: 'restored', ...this.restoreResult });
      await this.snapshotter.beginAfterRestore({
        endpoint: this.supervisor.clientUrl('private'),
        revision: this.restoreResult.revision,
        digest: this.restoreResult.fidelity,
      });
      await this.leaseHold.stop();
    } else {
      // A cluster member that provably may serve starts on its public address: moving the members one after
      // the other would cost a restart each, and members restarting together lose their quorum for a while.
      const serving =
        this.member !== undefined &&
        (await this.member.mayStartServing({
          lookup: o.owner.lookup,
          recordName: o.owner.recordName,
          identity: o.owner.identity,
          timeoutMs: o.checkTimeout ?? o.ownerCheckInterval ?? 5_000,
        }));
      await this.supervisor.ensure(serving ? 'public' : 'private');
      this.member?.start();
      this.watchdog.start({ serving });
      return;
    }
    this.member?.start();
    this.watchdog.start();
  }

  /**
   * Catches a restore ahead up with what the store holds now (the copy after the fence) and then goes on
   * as a restored sidecar: begins its history in the store, starts the owner watchdog, and serves once
   * the owner record names this seed, exactly as after a restore at start. A repeat (the agent retrying)
   * answers the same result; a sidecar that did not restore ahead refuses (`CatchUpRefusedError`).
   */
  catchUp(expectedLastRevision?: number, options: { acceptDigestMismatch?: boolean } = {}): Promise<CatchUpResult> {
    if (this.catchingUp) return this.catchingUp;
    const o = this.options;
    const refusal = () => {
      const why = this.notStandby();
      return why === undefined ? undefined : new CatchUpRefusedError(`${o.technicalID}: ${why}; restore it instead`);
    };
    const refused = refusal();
    if (refused) return Promise.reject(refused);
    const run = (async () => {
      // A refresh still replaying (its migration step gave up on it) finishes first: both write to etcd.
      await this.refreshing?.catch(() => undefined);
      const refusedSince = refusal();
      if (refusedSince) throw refusedSince;
      const result = await this.replayAhead({
        ...this.restoreOptions(expectedLastRevision),
        ...(options.acceptDigestMismatch ? { acceptDigestMismatch: true } : {}),
      });
      o.log?.({ event: 'caught-up', ...result });
      await this.snapshotter.beginAfterRestore({
        endpoint: this.supervisor.clientUrl('private'),
        revision: result.revision,
        digest: result.fidelity,
      });
      await this.leaseHold.stop();
      this.standby = false;
      this.watchdog.start();
      return result;
    })();
    // A failed catch-up leaves the standby as it was: the agent's retry (or a restore from scratch) decides.
    this.catchingUp = run;
    run.then(
      () => undefined,
      () => {
        if (this.catchingUp === run) this.catchingUp = undefined;
      },
    );
    return run;
  }

  /**
   * Refreshes a restore ahead with what the store holds now (a second pre-copy copied it there) and stays
   * in standby: the catch-up after the fence then replays only what was written since this refresh, not
   * since the restore ahead, which takes longer the larger etcd is. Replays the deltas past etcd's revision,
   * or restores ahead again where `planCatchUp` says the data needs it (a newer full snapshot). A refresh
   * while one runs answers that one; refused (`CatchUpRefusedError`) once the catch-up began or where
   * etcd was not restored ahead. A failed refresh leaves etcd where it got to: the catch-up goes on from
   * whatever revision it holds.
   */
  refreshAhead(): Promise<CatchUpResult> {
    if (this.refreshing) return this.refreshing;
    const o = this.options;
    const why = this.catchingUp && !this.stopped ? 'the catch-up began' : this.notStandby();
    if (why !== undefined)
      return Promise.reject(new CatchUpRefusedError(`${o.technicalID}: ${why}; nothing to refresh`));
    const run = (async () => {
      const result = await this.replayAhead(this.restoreOptions(undefined));
      await this.supervisor.lowerLimits();
      await this.supervisor.openApiServerReadOnly();
      o.log?.({ event: 'refreshed-ahead', ...result });
      return result;
    })();
    this.refreshing = run;
    const done = () => {
      if (this.refreshing === run) this.refreshing = undefined;
    };
    run.then(done, done);
    return run;
  }

  /**
   * The catch-up's or the refresh's replay onto what etcd holds: from the last restore's result, or from
   * scratch where an earlier one failed (etcd was left in no state a replay can build on).
   */
  private async replayAhead(options: RestoreOptions): Promise<CatchUpResult> {
    try {
      const result = await catchUpRestore({ ...options, ahead: this.aheadLost ? undefined : this.restoreResult! });
      this.restoreResult = result;
      this.aheadLost = false;
      return result;
    } catch (error) {
      this.aheadLost = true;
      throw error;
    }
  }

  /** Why etcd cannot be caught up or refreshed here (it waits restored ahead in a sidecar that runs), or undefined. */
  private notStandby(): string | undefined {
    if (this.stopped) return 'the sidecar stops';
    return this.standby ? undefined : 'etcd was not restored ahead here';
  }

  /** What a restore of this sidecar's single etcd from its store needs, at start or in a catch-up. */
  private restoreOptions(expectedLastRevision: number | undefined): RestoreOptions {
    const o = this.options;
    return {
      store: o.store,
      technicalID: o.technicalID,
      supervisor: this.supervisor,
      stagingDir: o.stagingDir ?? `${o.etcd.dataDir}.staging`,
      ...(expectedLastRevision === undefined ? {} : { expectedLastRevision }),
      ...(o.etcdctlBinary ? { etcdctlBinary: o.etcdctlBinary } : {}),
      ...(o.rangedReader ? { rangedReader: o.rangedReader } : {}),
      leaseHold: this.leaseHold,
    };
  }

  get statusUrl(): string {
    if (this.server === undefined) throw new Error('the sidecar has not started');
    return this.server.url;
  }

  /** The public client URL (what clients use; refused while fenced). */
  get clientUrl(): string {
    return this.supervisor.clientUrl('public');
  }

  readiness(): 200 | 503 {
    return this.stopped ? 503 : this.watchdog.readiness;
  }

  status(): SidecarStatus {
    const w = this.watchdog.status();
    const address = this.supervisor.address;
    return {
      technicalID: this.options.technicalID,
      identity: this.options.owner.identity,
      recordName: this.options.owner.recordName,
      ready: this.readiness() === 200,
      owner: {
        mode: w.state.mode,
        fencedBecause: w.state.fencedBecause ?? null,
        lastResult: w.state.lastResult ?? null,
        reason: w.lastCheck?.reason ?? null,
        lastCheckAt: w.lastCheckAt === null ? null : new Date(w.lastCheckAt).toISOString(),
        unknownForMs: w.state.unknownSince === undefined ? null : Math.round(performance.now() - w.state.unknownSince),
        finalSnapshot: w.state.finalSnapshot,
        checks: w.checks,
        notices: w.notices,
      },
      // The private address is the sidecar's alone: it is not published.
      etcd: {
        fenced: address !== 'public',
        running: address !== undefined,
        endpoint: address === 'public' ? this.clientUrl : null,
        pid: this.supervisor.pid ?? null,
        lastFence: this.lastFence,
        apiServerGate: this.supervisor.apiServerGateState,
      },
      snapshots: this.snapshotter.status(),
      writeGuard: this.writeGuard.status(),
      restore: this.restoreResult,
      standby: this.standby,
      ...(this.member ? { cluster: { ...this.member.status(), healthy: this.clusterHealthy } } : {}),
      settings: this.settings(),
    };
  }

  /** The ownership timings, the lookup's staleness and the backup settings this sidecar runs with (ms). */
  settings(): SidecarSettings {
    const t = this.watchdog.timings;
    return {
      ownerCheckInterval: t.ownerCheckInterval,
      checkTimeout: t.checkTimeout,
      unknownGrace: t.unknownGrace,
      dnsCacheTTL: this.options.owner.lookup.staleness ?? 0,
      deltaSnapshotInterval: this.options.deltaSnapshotInterval ?? DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS,
      backupLagLimit: this.writeGuard.status().limitMs,
    };
  }

  /** Whether the member answered healthy at the last status refresh (a leader and a quorum). */
  private clusterHealthy = false;

  /** Refreshes what `status()` reports of etcd's own health; the status endpoint calls it before answering. */
  async refresh(): Promise<void> {
    if (this.member) this.clusterHealthy = await this.supervisor.healthy(500);
  }

  /**
   * The owner watchdog's actions for a member of a cluster: snapshots are the leader's sidecar's
   * (`leadership`), a fence in lost mode is acknowledged to the cluster, an unfence is refused while the
   * cluster's fence marker stands, and the final snapshot is the cluster's (see `ClusterFence`).
   */
  private clusterActuator(member: ClusterMember, log: (entry: Record<string, unknown>) => void): WatchdogActuator {
    const lost = () => this.watchdog.status().state.mode === 'lost';
    const reason = () => this.watchdog.status().lastCheck?.reason ?? 'not-owner';
    return {
      stopSnapshotter: () => member.leadership.disable(),
      startSnapshotter: async () => member.leadership.enable(),
      fence: async () => {
        await member.letPeersFenceFirst(LEADER_FENCE_WAIT_MS);
        const timing = await this.supervisor.fence();
        if (timing !== undefined) {
          this.lastFence = timing;
          log({
            event: 'fenced',
            by: timing.by,
            refusingAfterMs: round(timing.refusingAt - timing.signalledAt),
            stoppedAfterMs: round(timing.stoppedAt - timing.signalledAt),
            privateReadyAfterMs: round(timing.privateReadyAt! - timing.signalledAt),
          });
        }
        // Best effort here; the final snapshot's action acknowledges again until it is committed.
        if (lost())
          await member.fence
            .acknowledge(reason())
            .catch((error: unknown) => log({ event: 'fence-acknowledge-failed', error: String(error) }));
      },
      unfence: async () => {
        await member.fence.assertMayServe();
        await this.supervisor.unfence();
      },
      takeFinalSnapshot: async () => {
        const outcome = await member.fence.final(reason());
        log({ event: 'final-snapshot-of-cluster', ...outcome });
      },
      servingPublicly: () => this.supervisor.address === 'public',
    };
  }

  /**
   * A single member's fence (`EtcdSupervisor.fenceQuickly`): writes refused at once by etcd's alarm; when
   * ownership is lost (a final snapshot follows) the final delta is read meanwhile, within
   * `FINAL_PREPARE_TIMEOUT_MS`, so that the final snapshot waits for neither etcd's stop nor its start on
   * the private address. An `unknown` fence reads nothing: its final snapshot, if ever, comes once
   * `not-owner` is proven, from the private address.
   */
  private async fenceSingle(log: (entry: Record<string, unknown>) => void): Promise<void> {
    const lost = this.watchdog.status().state.mode === 'lost';
    let prepared: PreparedFinal | undefined;
    const fenced = await this.supervisor.fenceQuickly(async (endpoint) => {
      if (!lost) return;
      prepared = await withTimeout(this.snapshotter.prepareFinal({ endpoint }), FINAL_PREPARE_TIMEOUT_MS).catch(
        (error: unknown) => {
          log({ event: 'final-prepare-failed', error: String(error) });
          return undefined;
        },
      );
    });
    if (fenced === undefined) return;
    const { timing } = fenced;
    this.preparedFinal = prepared;
    this.lastFence = timing;
    log({
      event: 'fenced',
      by: timing.by,
      refusingAfterMs: round(timing.refusingAt - timing.signalledAt),
      stoppedAfterMs: round(timing.stoppedAt - timing.signalledAt),
      finalPrepared: prepared !== undefined,
    });
    void fenced.privateReady.then(
      (at) => {
        if (this.lastFence === timing) this.lastFence = { ...timing, privateReadyAt: at };
        log({ event: 'fenced-private-ready', privateReadyAfterMs: round(at - timing.signalledAt) });
      },
      (error: unknown) => log({ event: 'fenced-private-failed', error: String(error) }),
    );
  }

  /** Stops the watchdog, the snapshotter (after the snapshot in flight), etcd and the endpoint. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.writeGuard.stop();
    await this.watchdog.stop();
    await this.member?.stop();
    this.snapshotter.stop();
    await this.snapshotter.idle();
    await this.leaseHold.stop();
    await this.supervisor.stop();
    await this.server?.close();
  }
}

/** Rejects intervals that cannot work before anything starts. */
export function validateSidecarOptions(
  options: Pick<
    SidecarOptions,
    | 'technicalID'
    | 'ownerCheckInterval'
    | 'unknownGrace'
    | 'fullSnapshotInterval'
    | 'deltaSnapshotInterval'
    | 'checkTimeout'
    | 'backupLagLimit'
  > & {
    readonly owner: Pick<SidecarOptions['owner'], 'recordName' | 'identity'>;
  },
): void {
  if (options.technicalID.length === 0) throw new SidecarConfigError('technicalID must not be empty', 'technicalID');
  if (options.owner.identity.length === 0) throw new SidecarConfigError('identity must not be empty', 'identity');
  if (options.owner.recordName.length === 0)
    throw new SidecarConfigError('owner record name must not be empty', 'recordName');
  for (const field of [
    'ownerCheckInterval',
    'fullSnapshotInterval',
    'deltaSnapshotInterval',
    'checkTimeout',
  ] as const) {
    const v = options[field];
    if (v !== undefined && !(Number.isFinite(v) && v > 0))
      throw new SidecarConfigError(`${field} must be a positive number of ms, got ${v}`, field);
  }
  if (options.unknownGrace !== undefined && !(Number.isFinite(options.unknownGrace) && options.unknownGrace >= 0)) {
    throw new SidecarConfigError(
      `unknownGrace must be a non-negative number of ms, got ${options.unknownGrace}`,
      'unknownGrace',
    );
  }
  const full = options.fullSnapshotInterval;
  const delta = options.deltaSnapshotInterval;
  if (full !== undefined && delta !== undefined && delta > full) {
    throw new SidecarConfigError(
      `deltaSnapshotInterval (${delta} ms) longer than fullSnapshotInterval (${full} ms) makes deltas pointless`,
      'deltaSnapshotInterval',
    );
  }
  try {
    backupLagLimit({
      deltaSnapshotInterval: delta ?? DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS,
      backupLagLimit: options.backupLagLimit,
    });
  } catch (cause) {
    throw new SidecarConfigError(cause instanceof Error ? cause.message : String(cause), 'backupLagLimit', { cause });
  }
}

/** How long a leader's fence waits for the other members to fence first (`ClusterMember.letPeersFenceFirst`); within the fence time of the ownership timings. */
const LEADER_FENCE_WAIT_MS = 1_500;

/**
 * How long a fence that lost ownership reads the final delta before etcd stops anyway (then the final
 * snapshot is read from the private address); within the fence time of the ownership timings. While it
 * reads, etcd refuses writes but still answers reads, as the owner it was until the record changed.
 */
const FINAL_PREPARE_TIMEOUT_MS = 1_000;

function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (source[k] !== undefined) out[k] = source[k];
  return out;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
