import type { Seed } from '../model/seed.js';
import { DEFAULT_LEASE_DURATION_SECONDS } from './seed-lease.js';

/**
 * A seed lease the monitor saw expire, remembered so that the loss is announced once: the loss is named
 * by the lease's last renewal, so the next heartbeat ends it and a later expiry is a new loss.
 */
export interface LostLease {
  seed: string;
  lastRenewTime: string;
  expiredAt: string;
  /** False between remembering the loss and publishing SeedLeaseLost: a round that crashed in between publishes it again. */
  announced: boolean;
  rememberedAt: string;
}

/** How long a remembered loss may stay unannounced before another round takes it for a crashed one and announces it. */
export const UNANNOUNCED_GRACE_MS = 30_000;

/** A lease that has expired at the monitor's now (the seed's agent stopped heartbeating). */
export interface ExpiredLease {
  seed: string;
  lastRenewTime: string;
  expiredAt: string;
  leaseDurationSeconds: number;
}

export interface LeaseMonitorDecision {
  /** Every seed whose lease has expired now: what the early bad-path switch looks at each round. */
  expired: ExpiredLease[];
  /** Losses to remember and announce (new ones, and remembered ones not announced yet). */
  announce: ExpiredLease[];
  /** Remembered losses that are over (renewed since, or the seed is gone): forget them. */
  forget: string[];
}

/**
 * One round of the lease monitor, pure: given the seeds as read (lease joined in), what the monitor
 * remembers and now, which losses to announce and which to forget. A seed that never heartbeated has no
 * lease to lose. The monitor never announces a recovery: the heartbeat that renews the lease does.
 */
export function decideLeases(input: {
  seeds: readonly Pick<Seed, 'metadata' | 'status'>[];
  remembered: readonly LostLease[];
  now: Date;
}): LeaseMonitorDecision {
  const remembered = new Map(input.remembered.map((l) => [l.seed, l]));
  const expired: ExpiredLease[] = [];
  const announce: ExpiredLease[] = [];
  const current = new Set<string>();
  for (const seed of input.seeds) {
    const lease = expiredLease(seed, input.now);
    if (!lease) continue;
    expired.push(lease);
    current.add(lease.seed);
    const known = remembered.get(lease.seed);
    if (known?.lastRenewTime !== lease.lastRenewTime) announce.push(lease);
    else if (!known.announced && input.now.getTime() - Date.parse(known.rememberedAt) >= UNANNOUNCED_GRACE_MS)
      announce.push(lease);
  }
  const forget = [...remembered.keys()].filter((seed) => !current.has(seed));
  return { expired, announce, forget };
}

/** The seed's lease if it has expired at `now`; undefined while it holds or when the agent never heartbeated. */
export function expiredLease(seed: Pick<Seed, 'metadata' | 'status'>, now: Date): ExpiredLease | undefined {
  const renewed = seed.status.lastHeartbeatTime;
  if (!renewed) return undefined;
  const duration = seed.status.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS;
  const expiresAt = Date.parse(renewed) + duration * 1_000;
  if (Number.isNaN(expiresAt) || now.getTime() < expiresAt) return undefined;
  return {
    seed: seed.metadata.name,
    lastRenewTime: renewed,
    expiredAt: new Date(expiresAt).toISOString(),
    leaseDurationSeconds: duration,
  };
}

/**
 * Where the monitor remembers lost leases (one item per seed). `remember` is conditional: it succeeds only
 * when no loss with this renewal is remembered yet, so two overlapping rounds cannot both announce it.
 */
export interface LostLeaseStore {
  list(): Promise<LostLease[]>;
  /** False when this loss (same seed, same last renewal) is remembered already. */
  remember(loss: LostLease): Promise<boolean>;
  markAnnounced(seed: string, lastRenewTime: string): Promise<void>;
  forget(seed: string): Promise<void>;
}

/** In memory, for tests and the local runtime; the same rules as the DynamoDB conditions. */
export class MemoryLostLeaseStore implements LostLeaseStore {
  private readonly items = new Map<string, LostLease>();

  async list(): Promise<LostLease[]> {
    return [...this.items.values()].map((l) => ({ ...l }));
  }

  async remember(loss: LostLease): Promise<boolean> {
    if (this.items.get(loss.seed)?.lastRenewTime === loss.lastRenewTime) return false;
    this.items.set(loss.seed, { ...loss });
    return true;
  }

  async markAnnounced(seed: string, lastRenewTime: string): Promise<void> {
    const item = this.items.get(seed);
    if (item?.lastRenewTime === lastRenewTime) item.announced = true;
  }

  async forget(seed: string): Promise<void> {
    this.items.delete(seed);
  }
}
