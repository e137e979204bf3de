import { afterEach, describe, expect, it } from 'vitest';
import type { OwnerLookupOutcome } from '../../../core/ownership/index.js';
import { OwnerWatchdogLoop, type WatchdogActuator } from '../../../seed/backup-restore/index.js';
import { untilWith } from '../../../harness/until.js';

/** An actuator that records what the loop asks for, with the readiness the loop reported at that moment. */
function recordingActuator(loop: () => OwnerWatchdogLoop, options: { failFinal?: number } = {}) {
  const calls: string[] = [];
  let publicly = false;
  let finalFailures = options.failFinal ?? 0;
  const actuator: WatchdogActuator = {
    stopSnapshotter: () => void calls.push('stop-snapshotter'),
    startSnapshotter: async () => void calls.push('start-snapshotter'),
    fence: async () => {
      calls.push(`fence (readiness ${loop().readiness})`);
      publicly = false;
    },
    unfence: async () => {
      calls.push('unfence');
      publicly = true;
    },
    takeFinalSnapshot: async () => {
      calls.push('final');
      if (finalFailures-- > 0) throw new Error('store down');
    },
    servingPublicly: () => publicly,
  };
  return { calls, actuator };
}

function scripted(outcomes: OwnerLookupOutcome[]) {
  return { lookup: async () => outcomes.shift() ?? { kind: 'failed' as const, failure: 'other' as const } };
}

const owner: OwnerLookupOutcome = { kind: 'found', values: ['me'] };
const other: OwnerLookupOutcome = { kind: 'found', values: ['them'] };
const failed: OwnerLookupOutcome = { kind: 'failed', failure: 'timeout' };

describe('OwnerWatchdogLoop', () => {
  it('under a live walk serves only as a member of the walking cluster, and asks for the cluster only then', async () => {
    const live: OwnerLookupOutcome = { kind: 'found', values: ['me+them@c0ffee'] };
    const asked: string[] = [];
    const loopOf = (cluster: string | undefined, outcomes: OwnerLookupOutcome[]) => {
      const { calls, actuator } = recordingActuator(() => loop);
      const loop: OwnerWatchdogLoop = new OwnerWatchdogLoop({
        lookup: scripted(outcomes),
        recordName: 'r',
        identity: 'me',
        clusterId: async () => {
          asked.push(String(cluster));
          return cluster;
        },
        actuator,
        now: () => 0,
      });
      return { loop, calls };
    };
    const member = loopOf('c0ffee', [owner, live]);
    await member.loop.checkNow();
    expect(asked).toEqual([]);
    await member.loop.checkNow();
    expect(asked).toEqual(['c0ffee']);
    expect(member.loop.readiness).toBe(200);
    expect(member.calls.filter((c) => c.startsWith('fence'))).toEqual([]);

    // A standby restored ahead on the destination is another cluster: it never serves.
    const standby = loopOf('beef', [live]);
    await standby.loop.checkNow();
    expect(standby.loop.readiness).toBe(503);
    expect(standby.loop.status().lastCheck).toMatchObject({ result: 'not-owner' });
  });

  it('serves as owner, then on not-owner stops the snapshotter, drops readiness, fences, then takes the final snapshot', async () => {
    // Prepare
    let clock = 0;
    const { calls, actuator } = recordingActuator(() => loop);
    const loop: OwnerWatchdogLoop = new OwnerWatchdogLoop({
      lookup: scripted([owner, other, owner]),
      recordName: 'r',
      identity: 'me',
      actuator,
      now: () => clock,
    });

    // Act / Assess
    await loop.checkNow();
    expect(loop.readiness).toBe(200);
    calls.length = 0;
    clock += 5_000;
    await loop.checkNow();
    expect(calls).toEqual(['stop-snapshotter', 'fence (readiness 503)', 'final', 'stop-snapshotter']);
    expect(loop.status().state).toMatchObject({ mode: 'lost', finalSnapshot: 'taken' });

    // The record naming this seed again changes nothing: it stays fenced.
    calls.length = 0;
    await loop.checkNow();
    expect(calls).toEqual(['stop-snapshotter']);
    expect(loop.readiness).toBe(503);
  });

  it('keeps serving through an unknown streak shorter than the grace, fences after it, and unfences when the owner answers', async () => {
    let clock = 0;
    const { calls, actuator } = recordingActuator(() => loop);
    const loop: OwnerWatchdogLoop = new OwnerWatchdogLoop({
      lookup: scripted([owner, failed, failed, failed, owner]),
      recordName: 'r',
      identity: 'me',
      actuator,
      unknownGrace: 3_000,
      now: () => clock,
    });
    await loop.checkNow();
    calls.length = 0;

    clock = 1_000;
    await loop.checkNow();
    clock = 3_500;
    await loop.checkNow();
    expect(loop.readiness).toBe(200);
    expect(calls.filter((c) => c.startsWith('fence'))).toEqual([]);

    clock = 4_100;
    await loop.checkNow();
    expect(loop.readiness).toBe(503);
    expect(calls).toContain('fence (readiness 503)');
    expect(calls).not.toContain('final');

    calls.length = 0;
    clock = 5_000;
    await loop.checkNow();
    expect(calls.slice(0, 2)).toEqual(['unfence', 'start-snapshotter']);
    expect(loop.readiness).toBe(200);
  });

  it('retries a final snapshot that failed at the next check', async () => {
    const { calls, actuator } = recordingActuator(() => loop, { failFinal: 1 });
    const loop: OwnerWatchdogLoop = new OwnerWatchdogLoop({
      lookup: scripted([owner, other, other]),
      recordName: 'r',
      identity: 'me',
      actuator,
      now: () => 0,
    });
    await loop.checkNow();
    await loop.checkNow();
    expect(loop.status().state.finalSnapshot).toBe('none');
    await loop.checkNow();
    expect(calls.filter((c) => c === 'final')).toHaveLength(2);
    expect(loop.status().state.finalSnapshot).toBe('taken');
  });

  it('treats a lookup that hangs as unknown, never as not-owner', async () => {
    const { actuator } = recordingActuator(() => loop);
    const hanging = { lookup: () => new Promise<OwnerLookupOutcome>(() => undefined) };
    const loop: OwnerWatchdogLoop = new OwnerWatchdogLoop({
      lookup: hanging,
      recordName: 'r',
      identity: 'me',
      actuator,
      checkTimeout: 20,
    });
    await loop.checkNow();
    expect(loop.status().lastCheck?.result).toBe('unknown');
    expect(loop.status().state.mode).toBe('fenced');
  });
});

describe('OwnerWatchdogLoop: owner-change notices', () => {
  const loops: OwnerWatchdogLoop[] = [];
  afterEach(async () => {
    await Promise.all(loops.splice(0).map((l) => l.stop()));
  });

  /** A lookup whose answer the test sets, recording each call and whether it asked for a fresh answer. */
  function switchable(initial: OwnerLookupOutcome) {
    let answer = initial;
    const calls: { fresh: boolean; at: number }[] = [];
    return {
      calls,
      set: (next: OwnerLookupOutcome) => (answer = next),
      lookup: async (_name: string, options?: { fresh?: boolean }) => {
        calls.push({ fresh: options?.fresh === true, at: performance.now() });
        return answer;
      },
    };
  }

  async function serving(
    lookup: ReturnType<typeof switchable>,
    extra: { events?: { type: string; trigger?: string }[] } = {},
  ) {
    const { calls, actuator } = recordingActuator(() => loop);
    const loop: OwnerWatchdogLoop = new OwnerWatchdogLoop({
      lookup,
      recordName: 'r',
      identity: 'me',
      actuator,
      ownerCheckInterval: 10_000,
      onEvent: (e) => extra.events?.push({ type: e.type, ...(e.type === 'check' ? { trigger: e.trigger } : {}) }),
    });
    loops.push(loop);
    loop.start();
    await until('ready', () => loop.readiness === 200);
    calls.length = 0;
    lookup.calls.length = 0;
    if (extra.events) extra.events.length = 0;
    return { loop, calls };
  }

  it('checks at once on a notice, afresh, and decides exactly as a poll would: fence first, then the final snapshot', async () => {
    // Prepare: serving, the next poll 10 s away; the record moves to another seed.
    const lookup = switchable(owner);
    const events: { type: string; trigger?: string }[] = [];
    const { loop, calls } = await serving(lookup, { events });
    lookup.set(other);

    // Act
    const noticedAt = performance.now();
    expect(loop.notice()?.checkInMs).toBeLessThan(5);
    await until('the final snapshot', () => loop.status().state.finalSnapshot === 'taken');

    // Assess: one fresh lookup, the decision of a poll, and the poll's 10 s schedule left to the poll.
    expect(performance.now() - noticedAt).toBeLessThan(500);
    expect(lookup.calls).toEqual([expect.objectContaining({ fresh: true })]);
    expect(calls).toEqual(['stop-snapshotter', 'fence (readiness 503)', 'final', 'stop-snapshotter']);
    expect(loop.status().state).toMatchObject({ mode: 'lost', fencedBecause: 'not-owner' });
    expect(events.filter((e) => e.type === 'check').at(-1)?.trigger).toBe('notice');
    await new Promise((r) => setTimeout(r, 300));
    expect(lookup.calls).toHaveLength(1);
  });

  it('decides nothing by itself: a notice while the record still names this seed keeps it serving, follows up sooner than the poll, then leaves it to the poll', async () => {
    const lookup = switchable(owner);
    const events: { type: string; trigger?: string }[] = [];
    const { loop, calls } = await serving(lookup, { events });

    loop.notice();
    // The noticed check and its follow-ups at 250, 500, 1000 ms (then 2 s, 4 s, and the 10 s poll).
    await new Promise((r) => setTimeout(r, 2_000));

    expect(loop.readiness).toBe(200);
    expect(calls.filter((c) => c !== 'start-snapshotter')).toEqual([]);
    expect(events.filter((e) => e.type === 'check').map((e) => e.trigger)).toEqual([
      'notice',
      'follow-up',
      'follow-up',
      'follow-up',
    ]);
    expect(lookup.calls.every((c) => c.fresh)).toBe(true);
    const gaps = lookup.calls.slice(1).map((c, i) => c.at - lookup.calls[i]!.at);
    expect(gaps.map((g) => Math.round(g / 250) * 250)).toEqual([250, 500, 1_000]);
  });

  it('sees a change that becomes visible only after the notice, at a follow-up', async () => {
    const lookup = switchable(owner);
    const { loop } = await serving(lookup);
    loop.notice();
    await new Promise((r) => setTimeout(r, 400));
    lookup.set({ kind: 'absent', reason: 'nxdomain' });
    await until('the lost mode', () => loop.status().state.mode === 'lost');
    expect(loop.status().lastCheck?.result).toBe('not-owner');
  });

  it('turns a flood of notices into checks at least 250 ms apart', async () => {
    const lookup = switchable(owner);
    const { loop } = await serving(lookup);
    const started = performance.now();
    while (performance.now() - started < 1_000) {
      loop.notice();
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(lookup.calls.length).toBeGreaterThanOrEqual(3);
    expect(lookup.calls.length).toBeLessThanOrEqual(5);
    const gaps = lookup.calls.slice(1).map((c, i) => c.at - lookup.calls[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(240);
  });

  it('checks again after a check that was already running when the notice came', async () => {
    let release: (() => void) | undefined;
    const lookup = switchable(owner);
    const slow = {
      lookup: async (name: string, options?: { fresh?: boolean }) => {
        const answer = await lookup.lookup(name, options);
        if (lookup.calls.length === 2) await new Promise<void>((r) => (release = r));
        return answer;
      },
    };
    const { actuator } = recordingActuator(() => loop);
    const loop: OwnerWatchdogLoop = new OwnerWatchdogLoop({
      lookup: slow,
      recordName: 'r',
      identity: 'me',
      actuator,
      ownerCheckInterval: 10_000,
    });
    loops.push(loop);
    loop.start();
    await until('ready', () => loop.readiness === 200);
    // The second lookup (a poll, brought forward by checkNow) hangs, having read the record before the change.
    const running = loop.checkNow();
    await until('the check to be held', () => release !== undefined);
    lookup.set(other);
    loop.notice();
    release!();
    await running;
    await until('the lost mode', () => loop.status().state.mode === 'lost');
    expect(lookup.calls).toHaveLength(3);
  });

  it('ignores a notice while the watchdog does not run', () => {
    const { actuator } = recordingActuator(() => loop);
    const loop: OwnerWatchdogLoop = new OwnerWatchdogLoop({
      lookup: scripted([]),
      recordName: 'r',
      identity: 'me',
      actuator,
    });
    expect(loop.notice()).toBeUndefined();
    expect(loop.status().checks).toBe(0);
  });
});

const until = untilWith({ timeoutMs: 4_000, intervalMs: 5 });
