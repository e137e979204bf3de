import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EtcdNotRunningError } from './errors.js';
import { clearAlarms, clusterIdOf, raiseAlarm, refusedAsLearner } from './etcd-gateway.js';
import {
  etcdHealthy,
  EtcdProcess,
  peerScheme,
  type EtcdClusterLaunch,
  type EtcdLaunch,
  type EtcdPeerTls,
} from './etcd-process.js';
import { PublicGate, type GateState } from './public-gate.js';
import { ReplayTarget } from './replay.js';

/**
 * Where etcd serves. `public` is the address every client of the shoot uses; `private` is a different
 * port on loopback that only the sidecar knows, so a fenced etcd can still be snapshotted (and restored
 * into) while no client can write to it. A single member always listens on the private address and is
 * served on the public one through the sidecar's `PublicGate`; a cluster member listens on one or the
 * other.
 */
export type EtcdAddress = 'public' | 'private';

export interface EtcdSupervisorOptions {
  readonly dataDir: string;
  /** Public client port (what the kube-apiserver talks to). */
  readonly clientPort: number;
  /** The sidecar's own client port while fenced; must differ from the public one. */
  readonly privatePort: number;
  /** Peer port of the single member; fixed for the data dir's life. */
  readonly peerPort: number;
  /**
   * A single member's address for the shoot's kube-apiserver (its `--etcd-servers`): a second gate (see
   * `PublicGate`) that holds connections from the start, opens and closes with the public one, and in
   * standby opens while etcd refuses every write (`openApiServerReadOnly`). Absent: none.
   */
  readonly apiServerPort?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Peer traffic as mutual TLS with the shoot's etcd peer CA: the peer URL is https. Absent: plain. */
  readonly peerTls?: EtcdPeerTls;
  /** Default `etcd`. */
  readonly binary?: string;
  /** Member name, default `etcd`. A restore must use the same one. */
  readonly name?: string;
  /**
   * The cluster this member belongs to; absent: a single-member cluster. A member waits for its peers:
   * a start is done once its client port listens, not once it is healthy.
   */
  readonly cluster?: EtcdClusterLaunch;
  /**
   * A single member that joins a running cluster (a live walk's destination, docs/design.md section 5):
   * how a start without member data joins it (`existing`, every member named). It keeps its gates, and
   * once it holds data (or the cluster shrank to it) it is a single member like any other.
   */
  readonly join?: EtcdClusterLaunch;
  /**
   * A single member whose cluster lost the other voters for good (a live walk's way out, docs/design.md
   * section 5): its first start makes it a cluster of its own that keeps its data (`--force-new-cluster`),
   * once; its later starts find that cluster in its data.
   */
  readonly forceNewCluster?: boolean;
  /** Default 50 ms / 250 ms for a single member (it elects itself quickly after each restart), etcd's 100 ms / 1 s for a cluster. */
  readonly heartbeatInterval?: number;
  readonly electionTimeout?: number;
  readonly quotaBackendBytes?: number;
  readonly extraArgs?: readonly string[];
  readonly logFile?: string;
  /** Default 30 s. */
  readonly startTimeoutMs?: number;
  /** SIGTERM, then SIGKILL after this. Default 10 s. */
  readonly stopTimeoutMs?: number;
  /** How long raising or clearing the fence's alarm may take. Default 1 s. */
  readonly alarmTimeoutMs?: number;
  /** Runs before every start of etcd (a cluster member that lost its data rejoins as a learner here). */
  readonly beforeStart?: () => Promise<void>;
  /** Restart etcd on the same address when it exits on its own. Default true. */
  readonly restartOnExit?: boolean;
  readonly onEvent?: (event: SupervisorEvent) => void;
}

export type SupervisorEvent =
  | { readonly type: 'started'; readonly address: EtcdAddress; readonly ms: number }
  | { readonly type: 'stopped'; readonly address: EtcdAddress }
  | {
      readonly type: 'exited-unexpectedly';
      readonly address: EtcdAddress;
      readonly code: number | null;
      readonly signal: string | null;
    }
  /** It applied its own removal from the cluster (a live walk's source member): it stays down. */
  | { readonly type: 'removed'; readonly address: EtcdAddress }
  | { readonly type: 'restart-failed'; readonly address: EtcdAddress; readonly error: unknown }
  | { readonly type: 'write-fence-failed'; readonly error: unknown };

/** What a fence took (performance.now() times). */
export interface FenceTiming {
  /** The fence began: the alarm asked for, or SIGTERM sent. */
  readonly signalledAt: number;
  /** From here on writes are refused: the alarm applied, or etcd gone. */
  readonly refusingAt: number;
  /** etcd gone from the public address: reads refused too. */
  readonly stoppedAt: number;
  /** What refused writes first: etcd's `CORRUPT` alarm, or etcd stopping. */
  readonly by: 'alarm' | 'stop';
  /** Healthy again on the private address (undefined while it starts there; a single member never left it). */
  readonly privateReadyAt?: number;
}

/** A fence whose etcd is gone from the public address and starts again on the private one behind the caller. */
export interface QuickFence {
  readonly timing: FenceTiming;
  /** performance.now() once etcd is healthy on the private address. */
  readonly privateReady: Promise<number>;
}

/**
 * Supervises one etcd member and restarts it when it dies. A single member runs on the private address
 * for good: serving is opening its `PublicGate`, fencing closing it, and etcd restarts only to change
 * its request limits (`REPLAY_LIMIT_ARGS` while a replay needs them, etcd's defaults before it serves).
 * A cluster member is moved between the addresses (SIGTERM, wait for the exit, start again on the same
 * data dir). Operations run one at a time, in call order.
 */
export class EtcdSupervisor {
  readonly host: string;
  readonly name: string;
  private readonly options: EtcdSupervisorOptions;
  /** `address`: where the process listens; `replayLimits`: whether it takes transactions of any size. */
  private current: { process: EtcdProcess; address: EtcdAddress; replayLimits: boolean } | undefined;
  /** A single member's public address; a cluster member has none (it listens on the public address itself). */
  private readonly gate: PublicGate | undefined;
  /** A single member's address for its kube-apiserver (`apiServerPort`). */
  private readonly apiServerGate: PublicGate | undefined;
  /** Where etcd should be; undefined: stopped on purpose. */
  private wanted: EtcdAddress | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private restartTimer: NodeJS.Timeout | undefined;
  private cluster: EtcdClusterLaunch | undefined;
  /** Until the first start of a `forceNewCluster` member succeeded. */
  private forcing: boolean;

  constructor(options: EtcdSupervisorOptions) {
    this.options = options;
    if (options.forceNewCluster && options.cluster !== undefined)
      throw new RangeError('only a single member is forced into a cluster of its own');
    this.forcing = options.forceNewCluster === true;
    this.cluster = options.cluster;
    this.host = options.host ?? '127.0.0.1';
    this.name = options.name ?? 'etcd';
    const ports = [
      options.clientPort,
      options.privatePort,
      options.peerPort,
      ...(options.apiServerPort ? [options.apiServerPort] : []),
    ];
    if (new Set(ports).size !== ports.length)
      throw new RangeError(`client, private, peer and kube-apiserver ports must differ, got ${ports.join(', ')}`);
    this.gate =
      options.cluster === undefined
        ? new PublicGate({ host: this.host, port: options.clientPort, targetPort: options.privatePort })
        : undefined;
    this.apiServerGate =
      options.cluster === undefined && options.apiServerPort !== undefined
        ? new PublicGate({ host: this.host, port: options.apiServerPort, targetPort: options.privatePort })
        : undefined;
  }

  /** The kube-apiserver's address to this etcd (a single member's second gate), or undefined. */
  get apiServerUrl(): string | undefined {
    return this.options.apiServerPort === undefined ? undefined : `http://${this.host}:${this.options.apiServerPort}`;
  }

  /** Where the kube-apiserver's gate stands: `closed` where there is none. */
  get apiServerGateState(): GateState {
    return this.apiServerGate?.state ?? 'closed';
  }

  /**
   * The kube-apiserver's gate holds: its connections are cut and new ones wait, unanswered, until the gate
   * opens (etcd serves) or closes (a fence). The state of a single member that starts, and of a standby
   * while its data changes under it (a catch-up or refresh replays).
   */
  holdApiServer(): Promise<void> {
    return this.serialize(async () => {
      await this.apiServerGate?.hold();
    });
  }

  /**
   * A standby (restored ahead, not serving) lets its kube-apiserver read it, and nothing write: etcd's
   * `CORRUPT` alarm first (every write refused, the kube-apiserver's own included), then its gate opens.
   * The kube-apiserver fills its caches from the data restored ahead, so that serving later costs it a
   * reconnect and the replayed events, not a cold start. The public address stays closed.
   */
  openApiServerReadOnly(): Promise<void> {
    return this.serialize(async () => {
      if (this.apiServerGate === undefined) return;
      if (this.address !== 'private')
        throw new EtcdNotRunningError(
          `etcd in ${this.options.dataDir} is not on its private address: only a standby opens read-only`,
        );
      await raiseAlarm(this.clientUrl('private'), 'CORRUPT', this.options.alarmTimeoutMs ?? 1_000);
      await this.apiServerGate.open();
    });
  }

  get dataDir(): string {
    return this.options.dataDir;
  }

  /** Whether the data dir holds an etcd member (its write-ahead log); etcd then ignores the initial-cluster flags. */
  hasMemberData(): boolean {
    return existsSync(join(this.options.dataDir, 'member', 'wal'));
  }

  /** How the next start joins the cluster (a member re-added as a learner joins the `existing` one). */
  setCluster(cluster: EtcdClusterLaunch): void {
    if (this.cluster === undefined) throw new RangeError('a single-member etcd has no cluster to join');
    this.cluster = cluster;
  }

  get clusterLaunch(): EtcdClusterLaunch | undefined {
    return this.cluster;
  }

  /** Whether etcd answers healthy now (a cluster member: it has a leader and can serve). */
  async healthy(timeoutMs = 1_000): Promise<boolean> {
    const address = this.address;
    if (address === undefined) return false;
    return etcdHealthy(this.clientUrl(address), timeoutMs).catch(() => false);
  }

  get peerUrl(): string {
    return `${peerScheme(this.options.peerTls)}://${this.host}:${this.options.peerPort}`;
  }

  clientUrl(address: EtcdAddress): string {
    return `http://${this.host}:${address === 'public' ? this.options.clientPort : this.options.privatePort}`;
  }

  /** The cluster ID (hex) etcd reports where it serves now; undefined while it is stopped or does not answer. */
  async clusterId(timeoutMs: number): Promise<string | undefined> {
    const address = this.address;
    if (address === undefined) return undefined;
    const url = address === 'public' && this.gate ? this.clientUrl('private') : this.clientUrl(address);
    return clusterIdOf(url, timeoutMs).catch(() => undefined);
  }

  /** Where etcd serves now, or undefined when it is stopped. */
  get address(): EtcdAddress | undefined {
    if (!this.current?.process.running) return undefined;
    if (this.gate) return this.gate.isOpen ? 'public' : 'private';
    return this.current.address;
  }

  /** Whether the running etcd takes transactions of any size (`REPLAY_LIMIT_ARGS`); false when stopped. */
  get replayLimits(): boolean {
    return this.current?.process.running === true && this.current.replayLimits;
  }

  get pid(): number | undefined {
    return this.current?.process.running ? this.current.process.pid : undefined;
  }

  /** The client URL etcd serves on now; throws when it is stopped. */
  endpoint(): string {
    const address = this.address;
    if (address === undefined) throw new EtcdNotRunningError(`etcd in ${this.options.dataDir} is not running`);
    return this.clientUrl(address);
  }

  /**
   * Makes etcd serve on `address` (a no-op when it already does) and waits until it is healthy there.
   * Serving on the public address, a single member runs with etcd's default request limits.
   */
  ensure(address: EtcdAddress): Promise<void> {
    return this.serialize(async () => {
      this.wanted = address;
      if (this.gate) return this.bringUp(address);
      if (this.address === address) return;
      await this.stopCurrent();
      await this.startOn(address);
    });
  }

  /**
   * A single member that runs with `REPLAY_LIMIT_ARGS` (a replay needed them) restarts with etcd's
   * defaults on the private address, so that serving later restarts nothing; a no-op otherwise.
   */
  lowerLimits(): Promise<void> {
    return this.setReplayLimits(false);
  }

  /**
   * Where a replay writes: the private address. A single member that runs with etcd's defaults restarts
   * with `REPLAY_LIMIT_ARGS` when a revision needs them (never while it serves); a cluster member on the
   * private address has them already.
   */
  replayTarget(): ReplayTarget {
    const endpoint = this.clientUrl('private');
    if (this.gate === undefined) return new ReplayTarget({ endpoint });
    return new ReplayTarget({ endpoint, raiseLimits: () => this.setReplayLimits(true) });
  }

  /** A single member restarts on the private address with or without `REPLAY_LIMIT_ARGS`; raised only while it does not serve. */
  private setReplayLimits(replayLimits: boolean): Promise<void> {
    return this.serialize(async () => {
      if (this.gate === undefined || this.replayLimits === replayLimits) return;
      if (this.address !== 'private')
        throw new EtcdNotRunningError(
          `etcd in ${this.options.dataDir} is not on its private address: its request limits do not change while it serves`,
        );
      await this.stopCurrent();
      await this.startOn('private', { replayLimits });
    });
  }

  /**
   * Fence: etcd stops serving on the public address and serves only on the private one. A single member:
   * its gate closes, and its kube-apiserver's (every client connection cut); a cluster member: SIGTERM (writes are refused once it
   * has exited) and a start on the private address. Already fenced: nothing happens and the timing is undefined.
   */
  fence(): Promise<FenceTiming | undefined> {
    return this.serialize(async () => {
      this.wanted = 'private';
      if (this.address === 'private') {
        await this.apiServerGate?.close();
        return undefined;
      }
      const signalledAt = performance.now();
      if (this.gate) {
        await Promise.all([this.gate.close(), this.apiServerGate?.close()]);
        const stoppedAt = performance.now();
        await this.bringUp('private');
        return { signalledAt, refusingAt: stoppedAt, stoppedAt, by: 'stop', privateReadyAt: performance.now() };
      }
      const refusingAt = (await this.stopCurrent()) ?? signalledAt;
      await this.startOn('private');
      return { signalledAt, refusingAt, stoppedAt: refusingAt, by: 'stop', privateReadyAt: performance.now() };
    });
  }

  /**
   * The fence of a single member that loses ownership: etcd's `CORRUPT` alarm makes it refuse every
   * write at once (through raft, so whatever it acknowledged is applied before), `whileRefusing` reads
   * what the final snapshot needs, and the gate closes (reads are refused too) before this resolves; etcd
   * goes on running on the private address, still carrying the alarm. Where the alarm cannot be raised
   * (etcd does not answer) the gate closes without it and `whileRefusing` is not called; where etcd is
   * not running it starts on the private address behind the caller (`privateReady`). A cluster member
   * stops (as `fence`) and starts again on the private address behind the caller. Already fenced: undefined.
   */
  fenceQuickly(whileRefusing: (endpoint: string) => Promise<void>): Promise<QuickFence | undefined> {
    return this.serialize(async () => {
      this.wanted = 'private';
      const address = this.address;
      if (address === 'private') {
        // Its kube-apiserver too: a gate that held (a start, a catch-up) closes on the fence.
        await this.apiServerGate?.close();
        return undefined;
      }
      const signalledAt = performance.now();
      let refusingAt: number | undefined;
      if (address === 'public' && this.gate) {
        try {
          await raiseAlarm(this.clientUrl('private'), 'CORRUPT', this.options.alarmTimeoutMs ?? 1_000);
          refusingAt = performance.now();
        } catch (error) {
          this.options.onEvent?.({ type: 'write-fence-failed', error });
        }
        if (refusingAt !== undefined) await whileRefusing(this.clientUrl('private'));
      }
      let stoppedAt: number;
      if (this.gate) {
        await Promise.all([this.gate.close(), this.apiServerGate?.close()]);
        stoppedAt = performance.now();
      } else {
        stoppedAt = (await this.stopCurrent()) ?? performance.now();
      }
      const timing: FenceTiming = {
        signalledAt,
        refusingAt: refusingAt ?? stoppedAt,
        stoppedAt,
        by: refusingAt === undefined ? 'stop' : 'alarm',
      };
      // Queued behind this operation: whatever is asked of the supervisor next waits for it.
      const privateReady = this.serialize(async () => {
        if (this.wanted === 'private' && this.current === undefined) await this.startOn('private');
        return performance.now();
      });
      privateReady.catch(() => undefined);
      return { timing, privateReady };
    });
  }

  /** Unfence: back on the public address. */
  unfence(): Promise<void> {
    return this.ensure('public');
  }

  /** Stops etcd for good (until the next `ensure`). */
  stop(): Promise<void> {
    return this.serialize(async () => {
      this.wanted = undefined;
      await Promise.all([this.gate?.close(), this.apiServerGate?.close()]);
      await this.stopCurrent();
    });
  }

  /**
   * A single member serves on `address`: etcd runs on the private address (started, or restarted with
   * etcd's defaults to serve), the fence's alarm is cleared before the gate opens, and the gate is open
   * exactly while it serves publicly.
   */
  private async bringUp(address: EtcdAddress): Promise<void> {
    const gate = this.gate!;
    if (this.address === address) return;
    if (address === 'private') {
      await gate.close();
      if (this.current === undefined) await this.startOn('private');
      return;
    }
    if (this.current?.replayLimits) await this.stopCurrent();
    if (this.current === undefined) await this.startOn('private');
    // A single member serves only without the fence's alarm (left by `fenceQuickly` in its database). A member
    // that joins a cluster as a learner can neither read nor clear alarms, and serves nothing until promoted:
    // the alarms are its voters' (a live walk's source serves, so it raised none).
    await clearAlarms(this.clientUrl('private'), ['CORRUPT'], this.options.alarmTimeoutMs ?? 1_000).catch(
      (error: unknown) => {
        if (!refusedAsLearner(error)) throw error;
      },
    );
    await gate.open();
    await this.apiServerGate?.open();
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Starts the etcd process listening on `address` (a single member: always the private one). It takes
   * transactions of any size where no client of the shoot reaches it: a cluster member on the private
   * address, a single member only when a replay asks (`replayTarget`).
   */
  private async startOn(address: EtcdAddress, opts: { replayLimits?: boolean } = {}): Promise<void> {
    clearTimeout(this.restartTimer);
    const started = performance.now();
    await this.options.beforeStart?.();
    const replayLimits = this.gate ? opts.replayLimits === true : address === 'private';
    const process = await EtcdProcess.start(this.launch(address, replayLimits), {
      timeoutMs: this.options.startTimeoutMs ?? 30_000,
      // A member joining a cluster is healthy only once it caught up, which is the walk's to wait for.
      readiness: this.launchCluster() === undefined ? 'healthy' : 'listening',
    });
    this.current = { process, address, replayLimits };
    this.forcing = false;
    this.options.onEvent?.({ type: 'started', address, ms: Math.round(performance.now() - started) });
    void process.exited.then(({ code, signal }) => this.exitedOnItsOwn(process, address, code, signal));
  }

  /** Returns when the process exited, or undefined when none was running. */
  private async stopCurrent(): Promise<number | undefined> {
    clearTimeout(this.restartTimer);
    const current = this.current;
    if (current === undefined) return undefined;
    this.current = undefined;
    const at = await current.process.stop({ timeoutMs: this.options.stopTimeoutMs ?? 10_000 });
    this.options.onEvent?.({ type: 'stopped', address: current.address });
    return at;
  }

  private exitedOnItsOwn(
    process: EtcdProcess,
    address: EtcdAddress,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): void {
    // A stop we asked for clears `current` first; anything else is a crash.
    if (this.current?.process !== process) return;
    this.current = undefined;
    // etcd exits 0 without a signal only once it applied its own removal from the cluster ("the member has
    // been permanently removed"): started again on the same data, it exits at once, the same way. It stays
    // down until whoever removed it retires it, rather than restart every few hundred milliseconds.
    if (code === 0 && signal === null) {
      this.options.onEvent?.({ type: 'removed', address });
      return;
    }
    // A single member's gate stays as it was: it serves again once etcd is back.
    const served: EtcdAddress = this.gate?.isOpen ? 'public' : address;
    this.options.onEvent?.({ type: 'exited-unexpectedly', address: served, code, signal });
    if (this.options.restartOnExit === false) return;
    this.scheduleRestart(served, 500);
  }

  private scheduleRestart(address: EtcdAddress, delay: number): void {
    this.restartTimer = setTimeout(() => {
      void this.serialize(async () => {
        // Only if nobody moved or stopped it meanwhile.
        if (this.wanted !== address || this.current !== undefined) return;
        if (this.gate) await this.bringUp(this.wanted);
        else await this.startOn(address);
      }).catch((error: unknown) => {
        this.options.onEvent?.({ type: 'restart-failed', address, error });
        // A cluster member keeps trying, as a kubelet restarts a crash-looping container: its peers may come back.
        if (this.cluster !== undefined && this.wanted === address && this.current === undefined)
          this.scheduleRestart(address, Math.min(delay * 2, 5_000));
      });
    }, delay);
  }

  private launchCluster(): EtcdClusterLaunch | undefined {
    if (this.cluster !== undefined) return this.cluster;
    return this.options.join !== undefined && !this.hasMemberData() ? this.options.join : undefined;
  }

  private launch(address: EtcdAddress, replayLimits: boolean): EtcdLaunch {
    const o = this.options;
    return {
      binary: o.binary ?? 'etcd',
      name: this.name,
      dataDir: o.dataDir,
      clientUrl: this.clientUrl(address),
      peerUrl: this.peerUrl,
      heartbeatInterval: o.heartbeatInterval ?? (this.cluster === undefined ? 50 : 100),
      electionTimeout: o.electionTimeout ?? (this.cluster === undefined ? 250 : 1_000),
      replayLimits,
      extraArgs: [...(o.extraArgs ?? []), ...(this.forcing ? ['--force-new-cluster'] : [])],
      ...(this.launchCluster() === undefined ? {} : { cluster: this.launchCluster() }),
      ...(o.peerTls === undefined ? {} : { peerTls: o.peerTls }),
      ...(o.quotaBackendBytes === undefined ? {} : { quotaBackendBytes: o.quotaBackendBytes }),
      ...(o.logFile === undefined ? {} : { logFile: o.logFile }),
    };
  }
}
