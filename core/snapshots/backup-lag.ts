import { ValidationError } from '../errors.js';

/**
 * How far a sidecar's backup may fall behind its etcd before it stops acknowledging writes (the write
 * guard), and what that makes of the loss each scenario of docs/design.md section 6 can have. Pure: the
 * sidecar's `WriteGuard` feeds it times and acts on its decisions; the scenario tests assert its bounds.
 *
 * The *backup lag* is the age of the oldest write etcd acknowledged that is not yet in the store: the
 * time since the sidecar's watch delivered the first event that no uploaded snapshot holds, 0 when every
 * event is uploaded. Healthy, it stays below one delta interval plus the upload of a delta.
 */

/** What the default limit adds to the delta interval: failed or slow uploads tolerated before writes are refused. */
export const DEFAULT_BACKUP_LAG_TOLERANCE_MS = 30_000;

/** A backup lag limit that cannot work (no longer than one delta interval: it would refuse writes between any two deltas). */
export class BackupLagLimitError extends ValidationError {
  constructor(message: string) {
    super(message, { code: 'InvalidBackupLagLimit', field: 'backupLagLimit' });
  }
}

/**
 * The limit in ms: the given one, else one delta interval plus 30 s. It must exceed the delta interval,
 * since a healthy sidecar's lag reaches the interval plus the upload before every delta.
 */
export function backupLagLimit(input: {
  readonly deltaSnapshotInterval: number;
  readonly backupLagLimit?: number | undefined;
}): number {
  const interval = input.deltaSnapshotInterval;
  if (!(Number.isFinite(interval) && interval > 0))
    throw new BackupLagLimitError(`deltaSnapshotInterval must be a positive number of ms, got ${interval}`);
  const limit = input.backupLagLimit ?? interval + DEFAULT_BACKUP_LAG_TOLERANCE_MS;
  if (!(Number.isFinite(limit) && limit > interval)) {
    throw new BackupLagLimitError(
      `backupLagLimit (${limit} ms) must be longer than deltaSnapshotInterval (${interval} ms): a healthy sidecar's lag reaches one interval plus an upload`,
    );
  }
  return limit;
}

/** The backup lag at `now`: 0 when nothing is waiting for an upload. */
export function backupLag(now: number, oldestPendingAt: number | undefined): number {
  return oldestPendingAt === undefined ? 0 : Math.max(0, now - oldestPendingAt);
}

export interface WriteGuardInput {
  readonly now: number;
  /** When the oldest event not in the store arrived; undefined when every event is uploaded. */
  readonly oldestPendingAt: number | undefined;
  readonly limit: number;
  /** Whether etcd refuses writes now (the guard raised its alarm, or found it raised). */
  readonly stalled: boolean;
}

export interface WriteGuardDecision {
  /** Whether etcd must refuse writes from now on. */
  readonly stall: boolean;
  /** The change to make: raise the alarm, clear it, or nothing. */
  readonly change: 'stall' | 'resume' | undefined;
  readonly lagMs: number;
}

/**
 * Refuse writes exactly while the lag is beyond the limit. There is no hysteresis and no latch: the
 * guard resumes by itself as soon as an upload brought the lag back within the limit, so an S3 outage
 * makes etcd read-only for as long as it lasts beyond the limit, never longer, and it is no fence (a
 * fence is the owner watchdog's alone).
 */
export function decideWriteGuard(input: WriteGuardInput): WriteGuardDecision {
  const lagMs = backupLag(input.now, input.oldestPendingAt);
  const stall = lagMs > input.limit;
  return { stall, change: stall === input.stalled ? undefined : stall ? 'stall' : 'resume', lagMs };
}

/** The scenarios of docs/design.md section 6; `S4` is the source that never reconnects. */
export type Scenario = 'S1' | 'S2' | 'S3' | 'S4' | 'S4-reconnected';

export type ScenarioLoss =
  | { readonly kind: 'none' }
  /**
   * Only writes the source acknowledged after its last uploaded delta (revision-exact: every write at or
   * below the store's last revision survives), and those span at most `spanMs`: the source's last
   * acknowledgement is at most `spanMs` after the first lost one.
   */
  | { readonly kind: 'after-last-uploaded-delta'; readonly spanMs: number };

/**
 * The loss a scenario can have. S1, S2 and S4 with the source reconnecting before the copy's wait ends
 * lose nothing (the final snapshot is taken after the fence). S3 (the source dies) and S4 (it never
 * reconnects) lose what the source acknowledged after its last uploaded delta; the write guard keeps
 * that within the backup lag limit, plus its reaction: from the limit passing until etcd refuses writes
 * (the watch's delivery of the write to the sidecar, the sidecar's timer, one raft write for the alarm). A source that dies while its
 * uploads are healthy loses less: one delta interval plus the upload in flight, which the limit exceeds.
 */
export function scenarioLoss(
  scenario: Scenario,
  timings: { readonly backupLagLimit: number; readonly guardReaction: number },
): ScenarioLoss {
  for (const [name, v] of Object.entries(timings)) {
    if (!(Number.isFinite(v) && v >= 0))
      throw new BackupLagLimitError(`${name} must be a non-negative number of ms, got ${v}`);
  }
  if (scenario === 'S3' || scenario === 'S4')
    return { kind: 'after-last-uploaded-delta', spanMs: timings.backupLagLimit + timings.guardReaction };
  return { kind: 'none' };
}
