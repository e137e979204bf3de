import { describe, expect, it } from 'vitest';
import type { OwnerLookupOutcome } from '../../../core/ownership/index.js';
import { OwnerWatchdogLoop, type WatchdogActuator } from '../../../seed/backup-restore/index.js';

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
  it('serves as owner, then on not-owner stops the snapshotter, drops readiness, fences, then takes the final snapshot', async () => {
    // Prepare
    let clock = 0;
    const { calls, actuator } = recordingActuator(() => loop);
    const loop: OwnerWatchdogLoop = new OwnerWatchdogLoop({ lookup: scripted([owner, other, owner]), recordName: 'r', identity: 'me', actuator, now: () => clock });

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
    const loop: OwnerWatchdogLoop = new OwnerWatchdogLoop({ lookup: scripted([owner, failed, failed, failed, owner]), recordName: 'r', identity: 'me', actuator, unknownGrace: 3_000, now: () => clock });
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
    const loop: OwnerWatchdogLoop = new OwnerWatchdogLoop({ lookup: scripted([owner, other, other]), recordName: 'r', identity: 'me', actuator, now: () => 0 });
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
    const loop: OwnerWatchdogLoop = new OwnerWatchdogLoop({ lookup: hanging, recordName: 'r', identity: 'me', actuator, checkTimeout: 20 });
    await loop.checkNow();
    expect(loop.status().lastCheck?.result).toBe('unknown');
    expect(loop.status().state.mode).toBe('fenced');
  });
});
