import type { Seed } from '../model/seed.js';
import type { MigrationMode, MigrationPath } from './record.js';

/** docs/design.md section 5: the source is reachable when its last heartbeat is younger than this many intervals. */
export const FRESH_HEARTBEAT_INTERVALS = 3;

export interface ChoosePathInput {
  mode: MigrationMode;
  /** Milliseconds since the source seed's last heartbeat; undefined when it never sent one. */
  sourceHeartbeatAge: number | undefined;
  /** The agents' heartbeat interval in milliseconds. */
  heartbeatInterval: number;
}

export interface PathDecision {
  path: MigrationPath;
  reason: string;
}

/**
 * `good`, `bad` and `live` are what the operator asked for. `auto` takes the good path while the source is
 * heard from (heartbeat younger than 3 intervals), else the bad path. A good path that turns out wrong
 * costs one step timeout before the switch, never a restart; a bad path with a healthy source costs
 * nothing but the extension state saved since the last reconcile.
 */
export function choosePath({ mode, sourceHeartbeatAge, heartbeatInterval }: ChoosePathInput): PathDecision {
  if (mode === 'good') return { path: 'good', reason: 'mode good requested' };
  if (mode === 'bad') return { path: 'bad', reason: 'mode bad requested' };
  // Requested, the walk is tried even with a stale heartbeat: its first round only reads the source's etcd,
  // and where that does not answer the migration goes on as on the good path.
  if (mode === 'live') return { path: 'live', reason: 'mode live requested' };
  if (!(heartbeatInterval > 0)) throw new RangeError(`heartbeatInterval must be positive, got ${heartbeatInterval}`);
  const limit = FRESH_HEARTBEAT_INTERVALS * heartbeatInterval;
  if (sourceHeartbeatAge === undefined || Number.isNaN(sourceHeartbeatAge))
    return { path: 'bad', reason: 'the source seed never sent a heartbeat' };
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  if (sourceHeartbeatAge < limit)
    return {
      path: 'good',
      reason: `the source's last heartbeat is ${seconds(sourceHeartbeatAge)} old, younger than ${FRESH_HEARTBEAT_INTERVALS} intervals (${seconds(limit)})`,
    };
  return {
    path: 'bad',
    reason: `the source's last heartbeat is ${seconds(sourceHeartbeatAge)} old, not younger than ${FRESH_HEARTBEAT_INTERVALS} intervals (${seconds(limit)})`,
  };
}

/** choosePath for a source seed as read now: its age from the seed's last heartbeat (none: never heard from). */
export function choosePathForSource(options: {
  mode: MigrationMode;
  source: Seed | undefined;
  now: Date;
  heartbeatInterval: number;
}): PathDecision {
  const heartbeat = options.source?.status.lastHeartbeatTime
    ? Date.parse(options.source.status.lastHeartbeatTime)
    : undefined;
  return choosePath({
    mode: options.mode,
    sourceHeartbeatAge: heartbeat === undefined ? undefined : options.now.getTime() - heartbeat,
    heartbeatInterval: options.heartbeatInterval,
  });
}
