import { decideWriteGuard } from '../../core/snapshots/index.js';
import { alarms, clearNoSpace, memberStatus, raiseNoSpace } from './etcd-gateway.js';

/** What the guard needs of the snapshotter. */
export interface GuardedSnapshotter {
  readonly running: boolean;
  readonly oldestPendingAt: number | undefined;
  retryDelta(): void;
}

/** How the guard makes etcd refuse writes and take them again (etcd's `NOSPACE` alarm by default). */
export interface WriteSwitch {
  /** Whether etcd refuses writes now. */
  refusing(endpoint: string): Promise<boolean>;
  refuse(endpoint: string): Promise<void>;
  accept(endpoint: string): Promise<void>;
}

/** etcd's `NOSPACE` alarm; the member's ID is read when the guard syncs, so that a stall costs one raft write. */
export function noSpaceAlarm(): WriteSwitch {
  const members = new Map<string, string>();
  return {
    refusing: async (endpoint) => {
      members.set(endpoint, (await memberStatus(endpoint, 1_000)).memberId);
      return (await alarms(endpoint, 1_000)).some((a) => a.alarm === 'NOSPACE');
    },
    refuse: (endpoint) => raiseNoSpace(endpoint, 1_000, members.get(endpoint)),
    accept: async (endpoint) => void (await clearNoSpace(endpoint, 1_000)),
  };
}

export interface WriteGuardOptions {
  /** The backup lag limit (ms), `backupLagLimit` of core/snapshots. */
  readonly limit: number;
  readonly snapshotter: GuardedSnapshotter;
  /** etcd's public client URL: the switch acts on the cluster the shoot's clients use. */
  readonly endpoint: () => string;
  /** How often the guard decides (ms); part of its reaction. Default 100. */
  readonly tick?: number;
  /** How often a stalled guard asks for another delta (ms); default 1 s. */
  readonly retryInterval?: number;
  readonly writes?: WriteSwitch;
  /** Epoch ms; the snapshotter's arrival times use the same clock. */
  readonly now?: () => number;
  readonly onEvent?: (event: WriteGuardEvent) => void;
}

export type WriteGuardEvent =
  | { readonly type: 'write-stall'; readonly lagMs: number; readonly limitMs: number; readonly reactionMs: number }
  | { readonly type: 'write-resume'; readonly stalledMs: number | null }
  | { readonly type: 'write-guard-failed'; readonly action: 'sync' | 'stall' | 'resume'; readonly error: unknown };

export interface WriteGuardStatus {
  readonly limitMs: number;
  /** Whether etcd refuses writes because the backup lags (as far as the guard knows). */
  readonly stalled: boolean;
  readonly stalledSince: string | null;
  readonly stalls: number;
  /** From the limit passing to etcd refusing writes, at the last stall (ms). */
  readonly lastReactionMs: number | null;
  readonly lastError: string | null;
}

/**
 * The write guard: while the backup lags more than its limit (an S3 outage, a cut seed), etcd refuses
 * writes, so that what a dying or isolated source can lose stays within the limit (docs/design.md
 * section 4, "The write guard"). It is no fence: reads, watches and readiness go on, nothing restarts,
 * and writes resume by themselves as soon as an upload brings the lag back within the limit. It acts only
 * while its snapshotter runs (a fenced sidecar's etcd takes no client writes anyway; of a cluster, the
 * snapshotting leader's guard acts for all members, since the alarm goes through raft); whenever its
 * snapshotter starts, it first reads whether etcd refuses writes (an alarm left by an earlier stall, by
 * another member, or carried in the snapshot this etcd was restored from).
 */
export class WriteGuard {
  private readonly options: WriteGuardOptions;
  private readonly writes: WriteSwitch;
  private timer: NodeJS.Timeout | undefined;
  /** One-shot at the moment the lag will pass the limit, so that the tick's period is no part of the reaction. */
  private deadline: NodeJS.Timeout | undefined;
  private busy = false;
  private again = false;
  private synced = false;
  private stalled = false;
  private stalledSince: number | undefined;
  private stalls = 0;
  private lastReaction: number | undefined;
  private lastRetryAt = 0;
  private lastError: string | null = null;

  constructor(options: WriteGuardOptions) {
    this.options = options;
    this.writes = options.writes ?? noSpaceAlarm();
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.check(), this.options.tick ?? 100);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    clearTimeout(this.deadline);
    this.deadline = undefined;
  }

  status(): WriteGuardStatus {
    return {
      limitMs: this.options.limit,
      stalled: this.stalled,
      stalledSince: this.stalledSince === undefined ? null : new Date(this.stalledSince).toISOString(),
      stalls: this.stalls,
      lastReactionMs: this.lastReaction === undefined ? null : Math.round(this.lastReaction),
      lastError: this.lastError,
    };
  }

  /** One decision (the timer's; tests call it directly). Decisions never overlap. */
  async check(): Promise<void> {
    if (this.busy) {
      // Decided again right after the one in progress: a deadline must not wait for the next tick.
      this.again = true;
      return;
    }
    this.busy = true;
    try {
      await this.decide();
    } finally {
      this.busy = false;
    }
    if (this.again) {
      this.again = false;
      await this.check();
    }
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  private async decide(): Promise<void> {
    const s = this.options.snapshotter;
    if (!s.running) {
      this.synced = false;
      return;
    }
    const endpoint = this.options.endpoint();
    if (!this.synced) {
      const found = await this.attempt('sync', () => this.writes.refusing(endpoint));
      if (found === undefined) return;
      this.stalled = found.value;
      if (found.value) this.stalledSince ??= this.now();
      this.synced = true;
    }
    const oldestPendingAt = s.oldestPendingAt;
    const d = decideWriteGuard({ now: this.now(), oldestPendingAt, limit: this.options.limit, stalled: this.stalled });
    if (d.change === 'stall') {
      if ((await this.attempt('stall', () => this.writes.refuse(endpoint))) === undefined) return;
      const at = this.now();
      this.stalled = true;
      this.stalledSince = at;
      this.stalls += 1;
      this.lastReaction = oldestPendingAt === undefined ? 0 : at - (oldestPendingAt + this.options.limit);
      this.options.onEvent?.({
        type: 'write-stall',
        lagMs: d.lagMs,
        limitMs: this.options.limit,
        reactionMs: Math.round(this.lastReaction),
      });
    } else if (d.change === 'resume') {
      if ((await this.attempt('resume', () => this.writes.accept(endpoint))) === undefined) return;
      const stalledMs = this.stalledSince === undefined ? null : Math.round(this.now() - this.stalledSince);
      this.stalled = false;
      this.stalledSince = undefined;
      this.options.onEvent?.({ type: 'write-resume', stalledMs });
    }
    if (!this.stalled && oldestPendingAt !== undefined && this.timer !== undefined) {
      clearTimeout(this.deadline);
      this.deadline = setTimeout(
        () => void this.check(),
        Math.max(0, oldestPendingAt + this.options.limit + 1 - this.now()),
      );
    }
    if (this.stalled && this.now() - this.lastRetryAt >= (this.options.retryInterval ?? 1_000)) {
      this.lastRetryAt = this.now();
      s.retryDelta();
    }
  }

  /** The action's result, or undefined when it failed (reported; the next tick tries again). */
  private async attempt<T>(
    action: 'sync' | 'stall' | 'resume',
    fn: () => Promise<T>,
  ): Promise<{ value: T } | undefined> {
    try {
      const value = await fn();
      this.lastError = null;
      return { value };
    } catch (error) {
      const message = `${action}: ${error instanceof Error ? error.message : String(error)}`;
      // Reported once per kind of failure, not at every tick while etcd does not answer.
      if (message !== this.lastError) this.options.onEvent?.({ type: 'write-guard-failed', action, error });
      this.lastError = message;
      return undefined;
    }
  }
}
