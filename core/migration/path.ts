import type { Seed } from '../model/seed.js';
import type { MigrationGuards, MigrationMode, MigrationPath } from './record.js';

/** docs/design.md section 5: the source is reachable when its last heartbeat is younger than this many intervals. */
export const FRESH_HEARTBEAT_INTERVALS = 3;

export interface ChoosePathInput {
  mode: MigrationMode;
  /** Milliseconds since the source seed's last heartbeat; undefined when it never sent one. */
  sourceHeartbeatAge: number | undefined;
  /** The agents' heartbeat interval in milliseconds. */
  heartbeatInterval: number;
  /** Why mode auto may not walk this shoot live between its seeds (`liveWalkObstacle`); undefined: it may. */
  liveObstacle: string | undefined;
}

export interface PathDecision {
  path: MigrationPath;
  reason: string;
}

/**
 * `good`, `bad` and `live` are what the operator asked for. `auto` walks the shoot live while the source is
 * heard from (heartbeat younger than 3 intervals) and nothing stands in the walk's way, takes the good path
 * while it is heard from otherwise, and the bad path when it is not. A walk whose survey fails goes on as the
 * good path at no cost but the survey's round; a good path that turns out wrong costs one step timeout
 * before the switch, never a restart; a bad path with a healthy source costs nothing but the extension state
 * saved since the last reconcile.
 */
export function choosePath({
  mode,
  sourceHeartbeatAge,
  heartbeatInterval,
  liveObstacle,
}: ChoosePathInput): PathDecision {
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
  if (sourceHeartbeatAge < limit) {
    const fresh = `the source's last heartbeat is ${seconds(sourceHeartbeatAge)} old, younger than ${FRESH_HEARTBEAT_INTERVALS} intervals (${seconds(limit)})`;
    return liveObstacle === undefined
      ? { path: 'live', reason: `${fresh}, and both seeds walk etcd live` }
      : { path: 'good', reason: `${fresh}; not live: ${liveObstacle}` };
  }
  return {
    path: 'bad',
    reason: `the source's last heartbeat is ${seconds(sourceHeartbeatAge)} old, not younger than ${FRESH_HEARTBEAT_INTERVALS} intervals (${seconds(limit)})`,
  };
}

/** Why a shoot cannot walk live whatever its seeds (admission refuses `mode=live` for it); undefined: it can. */
export function shootLiveObstacle(
  guards: Pick<MigrationGuards, 'hibernated' | 'failureTolerance'>,
): string | undefined {
  if (guards.hibernated) return 'it is hibernated: no etcd runs to walk';
  if (guards.failureTolerance)
    return `its control plane is highly available (${guards.failureTolerance}): a walk of a three-member etcd is not offered yet`;
  return undefined;
}

/**
 * Why mode auto does not walk a shoot live between these seeds; undefined: it may. Both seeds' runtimes must
 * report `live-walk` (a seed whose hosting has no member of its own to join answers the survey with
 * LiveWalkUnsupported, and the good path would then start without its pre-copy).
 */
export function liveWalkObstacle(options: {
  guards: Pick<MigrationGuards, 'hibernated' | 'failureTolerance'>;
  source: Seed | undefined;
  destination: Seed | undefined;
}): string | undefined {
  const ofShoot = shootLiveObstacle(options.guards);
  if (ofShoot) return ofShoot;
  for (const [side, seed] of [
    ['source', options.source],
    ['destination', options.destination],
  ] as const)
    if (!seed?.status.capabilities?.includes('live-walk'))
      return `the ${side} seed ${seed?.metadata.name ?? '(not found)'} does not report live-walk`;
  return undefined;
}

/** choosePath for seeds as read now: the source's age from its last heartbeat (none: never heard from). */
export function choosePathForSeeds(options: {
  mode: MigrationMode;
  guards: Pick<MigrationGuards, 'hibernated' | 'failureTolerance'>;
  source: Seed | undefined;
  destination: Seed | undefined;
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
    liveObstacle: liveWalkObstacle(options),
  });
}
