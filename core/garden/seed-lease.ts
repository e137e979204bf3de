import type { Condition } from '../model/common.js';
import type { HeartbeatInput, HostedControlPlane, Seed, SeedCapability } from '../model/seed.js';
import { mergeConditions } from './conditions.js';

/** Default lease: three heartbeat intervals of 10 s (docs/design.md section 11). */
export const DEFAULT_LEASE_DURATION_SECONDS = 30;

/**
 * A seed's health, kept apart from the Seed resource (Gardener keeps it in a Lease): the agent renews it
 * with every heartbeat, so an operator's update of the seed never races a heartbeat. It carries what the
 * agent last reported: its conditions and the control planes it hosts.
 */
export interface SeedLease {
  seed: string;
  /** The seed registration the agent heartbeats for. */
  holderIdentity: string;
  renewTime: string;
  /** How long the lease holds without a renewal; after it the seed's agent counts as gone. */
  leaseDurationSeconds: number;
  conditions: Condition[];
  controlPlanes: HostedControlPlane[];
  capabilities?: SeedCapability[];
  agentVersion?: string;
}

/** The lease a heartbeat renews; conditions keep their transition times while their status stays. */
export function renewedLease(options: {
  seed: Seed;
  heartbeat: HeartbeatInput;
  now: Date;
  defaultDurationSeconds?: number;
}): SeedLease {
  const { seed, heartbeat } = options;
  const at = options.now.toISOString();
  return {
    seed: seed.metadata.name,
    holderIdentity: seed.status.identity,
    renewTime: at,
    leaseDurationSeconds:
      heartbeat.leaseDurationSeconds ?? options.defaultDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS,
    conditions: mergeConditions(seed.status.conditions, heartbeat.conditions, at),
    controlPlanes: heartbeat.controlPlanes ?? [],
    ...(heartbeat.capabilities?.length ? { capabilities: [...new Set(heartbeat.capabilities)].sort() } : {}),
    ...(heartbeat.agentVersion ? { agentVersion: heartbeat.agentVersion } : {}),
  };
}

/** The fields of a seed's status that come from its lease, not from the stored resource. */
export const LEASE_STATUS_FIELDS = [
  'conditions',
  'lastHeartbeatTime',
  'leaseDurationSeconds',
  'controlPlanes',
  'capabilities',
] as const;

/** The seed as stored, without what its lease says (writes of the resource never carry it). */
export function withoutLease(seed: Seed): Seed {
  const status = { ...seed.status };
  for (const field of LEASE_STATUS_FIELDS) delete status[field];
  return { ...seed, status: { ...status, conditions: [] } };
}

/** The seed without its agent's report of the control planes it hosts: what a read of its health alone returns. */
export function withoutReport(seed: Seed): Seed {
  const { controlPlanes: _unread, ...status } = seed.status;
  return { ...seed, status };
}

/**
 * The seed as readers see it at `now`: its lease joined into the status, and, once the lease has expired,
 * every condition the agent reported is Unknown (GardenletReady with the reason): a seed whose agent went
 * silent is not ready, is skipped by the scheduler, and is ready again with the next heartbeat.
 */
export function seedWithLease(seed: Seed, lease: SeedLease | undefined, now: Date): Seed {
  if (!lease) return withoutLease(seed);
  const expiresAt = Date.parse(lease.renewTime) + lease.leaseDurationSeconds * 1_000;
  const expired = now.getTime() >= expiresAt;
  const conditions = expired
    ? lease.conditions.map((c) => expiredCondition(c, lease, new Date(expiresAt).toISOString()))
    : lease.conditions;
  if (expired && !conditions.some((c) => c.type === 'GardenletReady'))
    conditions.push(
      expiredCondition({ type: 'GardenletReady', status: 'Unknown' }, lease, new Date(expiresAt).toISOString()),
    );
  return {
    ...seed,
    status: {
      // Every field a lease holds comes from this one: an earlier lease's field it leaves out is not kept.
      ...withoutLease(seed).status,
      conditions,
      lastHeartbeatTime: lease.renewTime,
      leaseDurationSeconds: lease.leaseDurationSeconds,
      controlPlanes: lease.controlPlanes,
      ...(lease.capabilities ? { capabilities: lease.capabilities } : {}),
    },
  };
}

/** Whether the seed's agent has let its lease expire (or never heartbeated). */
export function leaseExpired(seed: Pick<Seed, 'status'>, now: Date): boolean {
  const renewed = seed.status.lastHeartbeatTime;
  if (!renewed) return true;
  return (
    now.getTime() >= Date.parse(renewed) + (seed.status.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS) * 1_000
  );
}

function expiredCondition(condition: Condition, lease: SeedLease, expiredAt: string): Condition {
  const message = `the seed agent's lease expired at ${expiredAt} (renewed ${lease.renewTime}, valid ${lease.leaseDurationSeconds} s): its agent stopped heartbeating`;
  return {
    ...condition,
    status: 'Unknown',
    reason: condition.type === 'GardenletReady' ? 'LeaseExpired' : 'AgentStoppedReporting',
    message,
    lastTransitionTime: condition.status === 'Unknown' ? (condition.lastTransitionTime ?? expiredAt) : expiredAt,
  };
}
