import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  followUpAfterNoticedCheck,
  noticedCheckAt,
  type OwnerCheckResult,
  type WatchdogMode,
} from '../../../core/ownership/index.js';

const time = fc.integer({ min: 0, max: 10_000_000 });
const results = fc.constantFrom<OwnerCheckResult>('owner', 'not-owner', 'unknown');
const modes = fc.constantFrom<WatchdogMode>('serving', 'fenced', 'lost');

describe('noticedCheckAt: a notice only brings the next check forward', () => {
  it.each([
    ['no notice before: at once', { now: 1_000, scheduledAt: 9_000, lastNoticedCheckAt: undefined }, 1_000],
    ['a noticed check long ago: at once', { now: 1_000, scheduledAt: 9_000, lastNoticedCheckAt: 0 }, 1_000],
    [
      'a noticed check 100 ms ago: once the spacing allows',
      { now: 1_000, scheduledAt: 9_000, lastNoticedCheckAt: 900 },
      1_150,
    ],
    ['the poll comes sooner anyway: the poll', { now: 1_000, scheduledAt: 1_050, lastNoticedCheckAt: 900 }, 1_050],
    ['a check that is overdue stays overdue', { now: 1_000, scheduledAt: 800, lastNoticedCheckAt: undefined }, 800],
  ])('%s', (_, input, expected) => {
    expect(noticedCheckAt(input)).toBe(expected);
  });

  it('is never later than the check already scheduled, never earlier than now (unless that check is overdue), and keeps the spacing', () => {
    fc.assert(
      fc.property(
        time,
        time,
        fc.option(time, { nil: undefined }),
        fc.integer({ min: 0, max: 5_000 }),
        (now, scheduledAt, lastNoticedCheckAt, minSpacing) => {
          const at = noticedCheckAt({ now, scheduledAt, lastNoticedCheckAt, minSpacing });
          expect(at).toBeLessThanOrEqual(scheduledAt);
          expect(at).toBeGreaterThanOrEqual(Math.min(now, scheduledAt));
          // Brought forward, it keeps its distance to the last noticed check.
          if (at < scheduledAt && lastNoticedCheckAt !== undefined)
            expect(at).toBeGreaterThanOrEqual(lastNoticedCheckAt + minSpacing);
        },
      ),
    );
  });

  it('refuses a spacing that is not a duration', () => {
    expect(() => noticedCheckAt({ now: 0, scheduledAt: 0, lastNoticedCheckAt: undefined, minSpacing: -1 })).toThrow(
      RangeError,
    );
  });
});

describe('followUpAfterNoticedCheck', () => {
  it('follows up while this seed still serves as owner: 250 ms, doubling, until the poll is as soon', () => {
    const delays: number[] = [];
    let followUps: number | undefined = 0;
    while (followUps !== undefined) {
      const next = followUpAfterNoticedCheck({
        nextCheckIn: 5_000,
        mode: 'serving',
        result: 'owner',
        followUps,
        ownerCheckInterval: 5_000,
      });
      delays.push(next.nextCheckIn);
      followUps = next.followUps;
    }
    expect(delays).toEqual([250, 500, 1_000, 2_000, 4_000, 5_000]);
  });

  it.each<[WatchdogMode, OwnerCheckResult]>([
    ['lost', 'not-owner'],
    ['fenced', 'unknown'],
    ['serving', 'unknown'],
  ])('leaves the schedule to the watchdog once it is %s after %s', (mode, result) => {
    expect(
      followUpAfterNoticedCheck({ nextCheckIn: 1_000, mode, result, followUps: 0, ownerCheckInterval: 5_000 }),
    ).toEqual({ nextCheckIn: 1_000, followUps: undefined });
  });

  it('never checks later than the watchdog asked, and ends within log2(interval / first) follow-ups', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 1, max: 60_000 }),
        modes,
        results,
        fc.integer({ min: 1, max: 5_000 }),
        (interval, nextCheckIn, mode, result, first) => {
          let followUps: number | undefined = 0;
          let rounds = 0;
          while (followUps !== undefined) {
            const next = followUpAfterNoticedCheck({
              nextCheckIn,
              mode,
              result,
              followUps,
              ownerCheckInterval: interval,
              firstFollowUp: first,
            });
            expect(next.nextCheckIn).toBeLessThanOrEqual(nextCheckIn);
            followUps = next.followUps;
            rounds += 1;
          }
          expect(rounds).toBeLessThanOrEqual(Math.max(0, Math.ceil(Math.log2(interval / first))) + 2);
        },
      ),
    );
  });
});
