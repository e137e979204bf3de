import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EtcdNotRunningError } from './errors.js';
import { clearAlarms, raiseAlarm } from './etcd-gateway.js';
import { etcdHealthy, EtcdProcess, type EtcdClusterLaunch, type EtcdLaunch } from './etcd-process.js';

/**
 * Where etcd listens for clients. `public` is the address every client of the shoot uses; `private` is
 * a different port on loopback that only the sidecar knows, so a fenced etcd can still be snapshotted
 * (and restored into) while no client can write to it.
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
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default `etcd`. */
  readonly binary?: string;
  /** Member name, default `etcd`. A restore must use the same one. */
  readonly name?: string;
  /**
   * The cluster this member belongs to; absent: a single-member cluster. A member waits for its peers:
   * a start is done once its client port listens, not once it is healthy.
   */
  readonly cluster?: EtcdClusterLaunch;
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
  | { readonly type: 'exited-unexpectedly'; readonly address: EtcdAddress; readonly code: number | null; readonly signal: string | null }
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
  /** Healthy again on the private address (undefined while it starts there). */
  readonly privateReadyAt?: number;
}

/** A fence whose etcd is gone from the public address and starts again on the private one behind the caller. */
export interface QuickFence {
  readonly timing: FenceTiming;
  /** performance.now() once etcd is healthy on the private address. */
  readonly privateReady: Promise<number>;
}

/**
 * Supervises one etcd member: starts it on the public or private client address, moves it between them
 * (SIGTERM, wait for the exit, start again on the same data dir), restarts it when it dies. Operations
 * run one at a time, in call order.
 */
export class EtcdSupervisor {
  readonly host: string;
  readonly name: string;
  private readonly options: EtcdSupervisorOptions;
  private current: { process: EtcdProcess; address: EtcdAddress } | undefined;
  /** Where etcd should be; undefined: stopped on purpose. */
  private wanted: EtcdAddress | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private restartTimer: NodeJS.Timeout | undefined;
  private cluster: EtcdClusterLaunch | undefined;

  constructor(options: EtcdSupervisorOptions) {
    this.options = options;
    this.cluster = options.cluster;
    this.host = options.host ?? '127.0.0.1';
    this.name = options.name ?? 'etcd';
    const ports = [options.clientPort, options.privatePort, options.peerPort];
    if (new Set(ports).size !== ports.length) throw new RangeError(`client, private and peer ports must differ, got ${ports.join(', ')}`);
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
    return `http://${this.host}:${this.options.peerPort}`;
  }

  clientUrl(address: EtcdAddress): string {
    return `http://${this.host}:${address === 'public' ? this.options.clientPort : this.options.privatePort}`;
  }

  /** Where etcd runs now, or undefined when it is stopped. */
  get address(): EtcdAddress | undefined {
    return this.current?.process.running ? this.current.address : undefined;
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

  /** Makes etcd run on `address` (a no-op when it already does) and waits until it is healthy there. */
  ensure(address: EtcdAddress): Promise<void> {
    return this.serialize(async () => {
      this.wanted = address;
      if (this.address === address) return;
      await this.stopCurrent();
      await this.startOn(address);
    });
  }

  /**
   * Fence: SIGTERM etcd (writes are refused once it has exited) and bring it back on the private address
   * only. Already fenced: nothing happens and the timing is undefined.
   */
  fence(): Promise<FenceTiming | undefined> {
    return this.serialize(async () => {
      this.wanted = 'private';
      if (this.address === 'private') return undefined;
      const signalledAt = performance.now();
      const refusingAt = (await this.stopCurrent()) ?? signalledAt;
      await this.startOn('private');
      return { signalledAt, refusingAt, stoppedAt: refusingAt, by: 'stop', privateReadyAt: performance.now() };
    });
  }

  /**
   * The fence of a single member that loses ownership, without etcd's restart in the way of the final
   * snapshot: etcd's `CORRUPT` alarm makes it refuse every write at once (through raft, so whatever it
   * acknowledged is applied before), `whileRefusing` reads what the final snapshot needs from the public
   * address, and etcd stops (reads are refused too) before this resolves; it starts again on the private
   * address behind the caller (`privateReady`), still carrying the alarm. Where the alarm cannot be raised
   * (etcd does not answer, a cluster member), etcd stops without it and `whileRefusing` is not called.
   * Already fenced: undefined.
   */
  fenceQuickly(whileRefusing: (endpoint: string) => Promise<void>): Promise<QuickFence | undefined> {
    return this.serialize(async () => {
      this.wanted = 'private';
      const address = this.address;
      if (address === 'private') return undefined;
      const signalledAt = performance.now();
      let refusingAt: number | undefined;
      if (address === 'public' && this.cluster === undefined) {
        try {
          await raiseAlarm(this.clientUrl('public'), 'CORRUPT', this.options.alarmTimeoutMs ?? 1_000);
          refusingAt = performance.now();
        } catch (error) {
          this.options.onEvent?.({ type: 'write-fence-failed', error });
        }
        if (refusingAt !== undefined) await whileRefusing(this.clientUrl('public'));
      }
      const stoppedAt = (await this.stopCurrent()) ?? performance.now();
      const timing: FenceTiming = { signalledAt, refusingAt: refusingAt ?? stoppedAt, stoppedAt, by: refusingAt === undefined ? 'stop' : 'alarm' };
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
      await this.stopCurrent();
    });
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async startOn(address: EtcdAddress): Promise<void> {
    clearTimeout(this.restartTimer);
    const started = performance.now();
    await this.options.beforeStart?.();
    const process = await EtcdProcess.start(this.launch(address), { timeoutMs: this.options.startTimeoutMs ?? 30_000, readiness: this.cluster === undefined ? 'healthy' : 'listening' });
    if (address === 'public' && this.cluster === undefined) {
      // A single member serves only without the fence's alarm (left by `fenceQuickly` in its database).
      try {
        await clearAlarms(this.clientUrl('public'), ['CORRUPT'], this.options.alarmTimeoutMs ?? 1_000);
      } catch (error) {
        await process.stop({ timeoutMs: this.options.stopTimeoutMs ?? 10_000 });
        throw error;
      }
    }
    this.current = { process, address };
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

  private exitedOnItsOwn(process: EtcdProcess, address: EtcdAddress, code: number | null, signal: NodeJS.Signals | null): void {
    // A stop we asked for clears `current` first; anything else is a crash.
    if (this.current?.process !== process) return;
    this.current = undefined;
    this.options.onEvent?.({ type: 'exited-unexpectedly', address, code, signal });
    if (this.options.restartOnExit === false) return;
    this.scheduleRestart(address, 500);
  }

  private scheduleRestart(address: EtcdAddress, delay: number): void {
    this.restartTimer = setTimeout(() => {
      void this.serialize(async () => {
        // Only if nobody moved or stopped it meanwhile.
        if (this.wanted !== address || this.current !== undefined) return;
        await this.startOn(address);
      }).catch((error: unknown) => {
        this.options.onEvent?.({ type: 'restart-failed', address, error });
        // A cluster member keeps trying, as a kubelet restarts a crash-looping container: its peers may come back.
        if (this.cluster !== undefined && this.wanted === address && this.current === undefined) this.scheduleRestart(address, Math.min(delay * 2, 5_000));
      });
    }, delay);
  }

  private launch(address: EtcdAddress): EtcdLaunch {
    const o = this.options;
    return {
      binary: o.binary ?? 'etcd',
      name: this.name,
      dataDir: o.dataDir,
      clientUrl: this.clientUrl(address),
      peerUrl: this.peerUrl,
      heartbeatInterval: o.heartbeatInterval ?? (this.cluster === undefined ? 50 : 100),
      electionTimeout: o.electionTimeout ?? (this.cluster === undefined ? 250 : 1_000),
      // The private address is where restores replay and no client of the shoot reaches.
      replayLimits: address === 'private',
      extraArgs: o.extraArgs ?? [],
      ...(this.cluster === undefined ? {} : { cluster: this.cluster }),
      ...(o.quotaBackendBytes === undefined ? {} : { quotaBackendBytes: o.quotaBackendBytes }),
      ...(o.logFile === undefined ? {} : { logFile: o.logFile }),
    };
  }
}
