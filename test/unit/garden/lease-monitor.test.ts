import { describe, expect, it } from 'vitest';
import {
  decideLeases,
  MemoryLostLeaseStore,
  UNANNOUNCED_GRACE_MS,
  type LostLeaseStore,
} from '../../../core/garden/lease-monitor.js';
import { runLeaseMonitorRound } from '../../../core/garden/lease-monitor-round.js';
import type { Seed } from '../../../core/model/seed.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(T0 + ms);

/** A seed as read with its lease joined in: renewed `renewedAt` ms after T0 (undefined: never heartbeated), valid 6 s. */
function seed(name: string, renewedAt: number | undefined): Seed {
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Seed',
    metadata: { name, resourceVersion: '1', uid: name, creationTimestamp: at(0).toISOString() },
    spec: {
      provider: { type: 'local', region: 'local-1', zones: ['a'] },
      networks: { pods: '10.1.0.0/16', services: '10.2.0.0/16' },
    },
    status: {
      identity: `${name}-1`,
      conditions: [],
      shoots: 0,
      labels: {},
      ...(renewedAt === undefined ? {} : { lastHeartbeatTime: at(renewedAt).toISOString(), leaseDurationSeconds: 6 }),
    },
  } as Seed;
}

function monitor(store: LostLeaseStore = new MemoryLostLeaseStore()) {
  const events: { type: string; detail: Record<string, unknown> }[] = [];
  const round = (seeds: Seed[], now: number) =>
    runLeaseMonitorRound({
      seeds,
      store,
      now: at(now),
      events: { publish: async (type, detail) => void events.push({ type, detail }) },
    });
  return { round, events, store };
}

describe('decideLeases', () => {
  it('finds a lease expired once its duration has passed since the last renewal, not before; never a lease never held', () => {
    const seeds = [seed('a', 0), seed('b', 1_000), seed('c', undefined)];
    expect(decideLeases({ seeds, remembered: [], now: at(5_999) }).expired).toEqual([]);
    const d = decideLeases({ seeds, remembered: [], now: at(6_000) });
    expect(d.expired).toEqual([
      { seed: 'a', lastRenewTime: at(0).toISOString(), expiredAt: at(6_000).toISOString(), leaseDurationSeconds: 6 },
    ]);
    expect(d.announce.map((l) => l.seed)).toEqual(['a']);
  });

  it('forgets a remembered loss once the lease is renewed or the seed is gone', () => {
    const remembered = [
      {
        seed: 'a',
        lastRenewTime: at(0).toISOString(),
        expiredAt: at(6_000).toISOString(),
        announced: true,
        rememberedAt: at(6_000).toISOString(),
      },
      {
        seed: 'gone',
        lastRenewTime: at(0).toISOString(),
        expiredAt: at(6_000).toISOString(),
        announced: true,
        rememberedAt: at(6_000).toISOString(),
      },
    ];
    const d = decideLeases({ seeds: [seed('a', 8_000)], remembered, now: at(9_000) });
    expect(d).toEqual({ expired: [], announce: [], forget: ['a', 'gone'] });
  });
});

describe('runLeaseMonitorRound', () => {
  it('announces a loss once, however many rounds see it, with when the lease ran out', async () => {
    const m = monitor();
    const seeds = [seed('a', 0), seed('b', 0)];
    for (let t = 4_000; t <= 30_000; t += 5_000)
      await m.round(
        [seeds[0]!, { ...seeds[1]!, status: { ...seeds[1]!.status, lastHeartbeatTime: at(t).toISOString() } }],
        t,
      );
    expect(m.events).toEqual([
      {
        type: 'SeedLeaseLost',
        detail: {
          seed: 'a',
          lastRenewTime: at(0).toISOString(),
          expiredAt: at(6_000).toISOString(),
          leaseDurationSeconds: 6,
        },
      },
    ]);
  });

  it('announces a second loss after the agent came back and went silent again', async () => {
    const m = monitor();
    await m.round([seed('a', 0)], 7_000);
    const back = await m.round([seed('a', 10_000)], 11_000);
    expect(back.forgotten).toEqual(['a']);
    await m.round([seed('a', 10_000)], 17_000);
    expect(m.events.map((e) => e.detail.lastRenewTime)).toEqual([at(0).toISOString(), at(10_000).toISOString()]);
  });

  it('lets only one of two overlapping rounds announce a loss', async () => {
    const store = new MemoryLostLeaseStore();
    const a = monitor(store);
    const b = monitor(store);
    await Promise.all([a.round([seed('a', 0)], 7_000), b.round([seed('a', 0)], 7_000)]);
    expect([...a.events, ...b.events]).toHaveLength(1);
  });

  it('announces a loss whose round crashed before publishing, once the grace has passed', async () => {
    const store = new MemoryLostLeaseStore();
    const crashing = {
      list: () => store.list(),
      remember: (l: Parameters<LostLeaseStore['remember']>[0]) => store.remember(l),
      markAnnounced: () => store.markAnnounced('', ''),
      forget: (s: string) => store.forget(s),
    };
    const failing = runLeaseMonitorRound({
      seeds: [seed('a', 0)],
      store: crashing,
      now: at(7_000),
      events: {
        publish: async () => {
          throw new Error('bus unavailable');
        },
      },
    });
    await expect(failing).rejects.toThrow('bus unavailable');
    const m = monitor(store);
    await m.round([seed('a', 0)], 7_000 + UNANNOUNCED_GRACE_MS - 1);
    expect(m.events).toEqual([]);
    await m.round([seed('a', 0)], 7_000 + UNANNOUNCED_GRACE_MS);
    await m.round([seed('a', 0)], 7_000 + UNANNOUNCED_GRACE_MS + 5_000);
    expect(m.events.map((e) => e.detail.seed)).toEqual(['a']);
  });
});
