import type { Snapshotter } from '../snapshotter.js';

export interface SnapshotLeadershipOptions {
  readonly snapshotter: Snapshotter;
  /** Whether this member leads now, asked afresh (etcd's status of the member). */
  readonly isLeaderNow: () => Promise<boolean>;
  /**
   * How long a member that became leader waits before it lists the store and continues the snapshots:
   * longer than a deposed leader may still believe it leads (check-quorum steps it down within two
   * election timeouts) plus one upload, so that nothing of the old leader's lands after the new one read
   * where the store ends.
   */
  readonly handoverDelay: number;
  readonly now?: () => number;
  readonly onEvent?: (event: {
    readonly type: 'leading' | 'stepped-down' | 'snapshotter-started' | 'snapshotter-start-failed';
    readonly error?: unknown;
  }) => void;
}

/**
 * Which sidecar of a cluster snapshots: the etcd leader's, as in etcd-backup-restore. The member's role is
 * fed in (`update`, every leader check) and asked again before every upload (`guard`). While the owner
 * watchdog has snapshots switched off (`disable`: fenced or lost) nothing is taken whatever the role.
 */
export class SnapshotLeadership {
  private enabled = false;
  private leadingSince: number | undefined;
  private starting: Promise<void> | undefined;

  constructor(private readonly options: SnapshotLeadershipOptions) {}

  get leading(): boolean {
    return this.leadingSince !== undefined;
  }

  /** The owner watchdog serves: the leader's sidecar may snapshot. */
  enable(): void {
    this.enabled = true;
  }

  /** Fenced or lost: no snapshots from this sidecar, and its baseline is forgotten (another may snapshot meanwhile). */
  disable(): void {
    this.enabled = false;
    this.stepDown();
  }

  /** One leader check's result. */
  update(isLeader: boolean): void {
    const now = this.options.now?.() ?? performance.now();
    if (!isLeader || !this.enabled) {
      this.stepDown();
      return;
    }
    if (this.leadingSince === undefined) {
      this.leadingSince = now;
      this.options.onEvent?.({ type: 'leading' });
    }
    if (
      now - this.leadingSince >= this.options.handoverDelay &&
      !this.options.snapshotter.running &&
      this.starting === undefined
    ) {
      this.starting = this.options.snapshotter
        .start()
        .then(
          () => this.options.onEvent?.({ type: 'snapshotter-started' }),
          (error: unknown) => this.options.onEvent?.({ type: 'snapshotter-start-failed', error }),
        )
        .finally(() => (this.starting = undefined));
    }
  }

  /** Before each upload: still enabled, still leading, and etcd says so now. */
  async guard(): Promise<boolean> {
    if (!this.enabled || this.leadingSince === undefined) return false;
    const leader = await this.options.isLeaderNow().catch(() => false);
    if (!leader) this.stepDown();
    return leader;
  }

  private stepDown(): void {
    if (this.leadingSince === undefined && !this.options.snapshotter.running) return;
    const was = this.leadingSince !== undefined;
    this.leadingSince = undefined;
    this.options.snapshotter.stop({ forget: true });
    if (was) this.options.onEvent?.({ type: 'stepped-down' });
  }
}
