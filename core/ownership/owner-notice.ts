import type { OwnerCheckResult } from './check.js';
import type { WatchdogMode } from './owner-watchdog.js';

/**
 * Owner-change notices (docs/design.md section 4, "Owner-change notices"): right after the orchestrator
 * changes an owner record it tells the source seed, whose agent asks the shoot's sidecars to check now.
 * A notice carries no result and decides nothing: it only moves the sidecar's next owner check forward,
 * and that check runs the same lookup and the same `decideOwnerWatchdog` as a poll. Polling stays the
 * authority and the worst case (the fence bound counts no notice), so a lost, late or repeated notice
 * changes nothing but when a check happens.
 *
 * Two rules bound what notices cost:
 * - spacing: checks brought forward by notices are at least `minSpacing` apart, so a flood of notices
 *   cannot turn into a flood of lookups (the Route 53 API in API mode has an account-wide rate limit);
 * - follow-ups: a notice can arrive before the change is visible to this seed (Route 53 propagates to
 *   its name servers within about a minute, a resolver may still hold the old answer for the record's
 *   TTL). While the noticed check still finds this seed the owner, the next checks come sooner than the
 *   poll: `firstFollowUp`, doubling, until that reaches the check interval and the poll takes over.
 */
export interface OwnerNoticeOptions {
  /** ms between two checks that notices brought forward. Default 250 ms. */
  readonly minSpacing?: number;
  /** ms to the first follow-up check after a noticed check that still found this seed the owner. Default 250 ms. */
  readonly firstFollowUp?: number;
}

export const DEFAULT_NOTICE_MIN_SPACING_MS = 250;
export const DEFAULT_NOTICE_FIRST_FOLLOW_UP_MS = 250;

/**
 * When the next check runs once a notice arrived: now, or as soon as the spacing since the last noticed
 * check allows, but never later than the check already scheduled. All times in ms of one monotonic clock.
 */
export function noticedCheckAt(input: {
  now: number;
  scheduledAt: number;
  lastNoticedCheckAt: number | undefined;
  minSpacing?: number;
}): number {
  const spacing = nonNegative(input.minSpacing ?? DEFAULT_NOTICE_MIN_SPACING_MS, 'minSpacing');
  const earliest =
    input.lastNoticedCheckAt === undefined ? input.now : Math.max(input.now, input.lastNoticedCheckAt + spacing);
  return Math.min(input.scheduledAt, earliest);
}

export interface FollowUpInput {
  /** What the watchdog's decision after this check asked for (`WatchdogDecision.nextCheckIn`). */
  readonly nextCheckIn: number;
  /** The watchdog's mode and the check's result after the decision. */
  readonly mode: WatchdogMode;
  readonly result: OwnerCheckResult;
  /** Follow-ups already run since the notice (0 for the noticed check itself). */
  readonly followUps: number;
  readonly ownerCheckInterval: number;
  readonly firstFollowUp?: number;
}

export interface FollowUp {
  /** When to check next: never later than the decision asked. */
  readonly nextCheckIn: number;
  /** The follow-ups counted after this one; undefined when the notice's window is over. */
  readonly followUps: number | undefined;
}

/**
 * After a check that a notice brought forward (or one of its follow-ups): when to check next. Only a
 * seed that still serves as owner follows up: every other outcome already has the watchdog's own
 * schedule (a lost seed is fenced for good, an `unknown` streak retries with backoff).
 */
export function followUpAfterNoticedCheck(input: FollowUpInput): FollowUp {
  const first = nonNegative(input.firstFollowUp ?? DEFAULT_NOTICE_FIRST_FOLLOW_UP_MS, 'firstFollowUp');
  if (input.mode !== 'serving' || input.result !== 'owner')
    return { nextCheckIn: input.nextCheckIn, followUps: undefined };
  const delay = first * 2 ** Math.min(input.followUps, 30);
  if (delay >= input.ownerCheckInterval || delay >= input.nextCheckIn)
    return { nextCheckIn: input.nextCheckIn, followUps: undefined };
  return { nextCheckIn: delay, followUps: input.followUps + 1 };
}

function nonNegative(value: number, field: string): number {
  if (!(Number.isFinite(value) && value >= 0))
    throw new RangeError(`${field} must be a non-negative number of ms, got ${value}`);
  return value;
}
