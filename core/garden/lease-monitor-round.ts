import type { Seed } from '../model/seed.js';
import type { EventSink } from './context.js';
import { decideLeases, type ExpiredLease, type LostLeaseStore } from './lease-monitor.js';

export interface LeaseMonitorRoundOptions {
  seeds: readonly Seed[];
  store: LostLeaseStore;
  events: EventSink;
  now: Date;
}

export interface LeaseMonitorRoundResult {
  /** Seeds whose lease has expired at this round. */
  expired: ExpiredLease[];
  /** Seeds whose loss this round announced (SeedLeaseLost published). */
  announced: string[];
  /** Seeds whose remembered loss is over (renewed since, or deleted). */
  forgotten: string[];
}

/**
 * One round of the lease monitor: decide (pure), remember each new loss with a conditional write, then
 * publish `SeedLeaseLost` and mark it announced, so that each loss is announced once (a round that
 * crashed between the two is made good by a later one). Recoveries are the heartbeat's to announce.
 */
export async function runLeaseMonitorRound(options: LeaseMonitorRoundOptions): Promise<LeaseMonitorRoundResult> {
  const remembered = await options.store.list();
  const decision = decideLeases({ seeds: options.seeds, remembered, now: options.now });
  const announced: string[] = [];
  for (const lease of decision.announce) {
    const known = remembered.find((l) => l.seed === lease.seed && l.lastRenewTime === lease.lastRenewTime);
    if (!known) {
      const taken = await options.store.remember({
        seed: lease.seed,
        lastRenewTime: lease.lastRenewTime,
        expiredAt: lease.expiredAt,
        announced: false,
        rememberedAt: options.now.toISOString(),
      });
      // Another round remembered this loss first; it announces it.
      if (!taken) continue;
    }
    await options.events.publish('SeedLeaseLost', {
      seed: lease.seed,
      lastRenewTime: lease.lastRenewTime,
      expiredAt: lease.expiredAt,
      leaseDurationSeconds: lease.leaseDurationSeconds,
    });
    await options.store.markAnnounced(lease.seed, lease.lastRenewTime);
    announced.push(lease.seed);
  }
  for (const seed of decision.forget) await options.store.forget(seed);
  return { expired: decision.expired, announced, forgotten: decision.forget };
}
