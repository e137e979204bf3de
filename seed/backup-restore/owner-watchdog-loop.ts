import {
  checkOwner,
  needsCluster,
  decideOwnerWatchdog,
  followUpAfterNoticedCheck,
  initialWatchdogState,
  noticedCheckAt,
  type OwnerNoticeOptions,
  recordFinalSnapshot,
  type OwnerCheck,
  type OwnerLookup,
  type OwnerLookupOutcome,
  type WatchdogAction,
  ownershipTimings,
  type OwnershipTimings,
  type WatchdogState,
} from '../../core/ownership/index.js';
import { withTimeout } from './timeout.js';

/** What the watchdog's actions do to the world; the sidecar wires them to etcd and the snapshotter. */
export interface WatchdogActuator {
  stopSnapshotter(): void | Promise<void>;
  startSnapshotter(): Promise<void>;
  /** Must not return before no client can write any more. */
  fence(): Promise<void>;
  unfence(): Promise<void>;
  takeFinalSnapshot(): Promise<void>;
  /** Whether etcd serves clients on the public address right now (readiness needs both decision and fact). */
  servingPublicly(): boolean;
}

/** The timings are the ownership timings (`checkTimeout`: a lookup that takes longer is `unknown`). */
export interface OwnerWatchdogLoopOptions extends Partial<
  Pick<OwnershipTimings, 'ownerCheckInterval' | 'unknownGrace' | 'initialRetryDelay' | 'checkTimeout'>
> {
  readonly lookup: OwnerLookup;
  readonly recordName: string;
  readonly identity: string;
  /** This member's etcd cluster ID (hex), asked only when the record holds a live walk's value. */
  readonly clusterId?: () => Promise<string | undefined>;
  readonly actuator: WatchdogActuator;
  /** Monotonic ms. Default performance.now. */
  readonly now?: () => number;
  /** How owner-change notices bring checks forward (spacing, follow-ups); see core/ownership/owner-notice.ts. */
  readonly notices?: OwnerNoticeOptions;
  readonly onEvent?: (event: WatchdogLoopEvent) => void;
}

/** What started a check: the poll, an owner-change notice, a follow-up of one, or a peer's observation. */
export type CheckTrigger = 'poll' | 'notice' | 'follow-up' | 'observation';

export type WatchdogLoopEvent =
  | {
      readonly type: 'check';
      readonly check: OwnerCheck;
      readonly mode: WatchdogState['mode'];
      readonly actions: readonly WatchdogAction['type'][];
      readonly trigger: CheckTrigger;
    }
  | { readonly type: 'notice'; readonly checkInMs: number }
  | { readonly type: 'action'; readonly action: WatchdogAction['type']; readonly ms: number }
  | { readonly type: 'action-failed'; readonly action: WatchdogAction['type']; readonly error: unknown };

export interface WatchdogLoopStatus {
  readonly state: WatchdogState;
  readonly readiness: 200 | 503;
  readonly lastCheck: OwnerCheck | null;
  /** Epoch ms of the last completed check. */
  readonly lastCheckAt: number | null;
  readonly checks: number;
  /** Owner-change notices received. */
  readonly notices: number;
}

/**
 * Runs the owner watchdog: every `ownerCheckInterval` (sooner while an `unknown` streak is retried) looks
 * up the owner record, feeds `decideOwnerWatchdog` and executes its actions in order. The rules live in
 * the core; this loop only executes. Readiness drops to 503 before the first action of a decision that
 * takes etcd down, and rises to 200 only once etcd serves publicly again.
 */
export class OwnerWatchdogLoop {
  private readonly options: OwnerWatchdogLoopOptions;
  /** The ownership timings it runs with, defaults filled in. */
  readonly timings: OwnershipTimings;
  private state: WatchdogState;
  private readinessValue: 200 | 503 = 503;
  private lastCheck: OwnerCheck | null = null;
  private lastCheckAt: number | null = null;
  private checks = 0;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private current: Promise<void> | undefined;
  /** Monotonic ms of the check the timer will run. */
  private nextCheckAt: number | undefined;
  /** A notice arrived that no check started since has answered. */
  private noticePending = false;
  private nextIsNoticed = false;
  private lastNoticedCheckAt: number | undefined;
  /** Follow-ups run since the last noticed check; undefined outside a notice's window. */
  private followUps: number | undefined;
  private notices = 0;

  constructor(options: OwnerWatchdogLoopOptions) {
    this.options = options;
    this.timings = ownershipTimings(options);
    this.state = initialWatchdogState();
  }

  status(): WatchdogLoopStatus {
    return {
      state: this.state,
      readiness: this.readiness,
      lastCheck: this.lastCheck,
      lastCheckAt: this.lastCheckAt,
      checks: this.checks,
      notices: this.notices,
    };
  }

  get readiness(): 200 | 503 {
    return this.readinessValue === 200 && this.options.actuator.servingPublicly() ? 200 : 503;
  }

  /**
   * Starts checking, the first check at once. `serving`: etcd was started on its public address because a
   * check just before said this seed owns the shoot; the watchdog adopts that instead of unfencing again.
   */
  start(options: { serving?: boolean } = {}): void {
    if (this.running) return;
    this.running = true;
    if (options.serving && this.checks === 0) {
      this.state = initialWatchdogState({ serving: true });
      this.readinessValue = 200;
    }
    this.schedule(0);
  }

  /** Stops scheduling; waits for a check in progress. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.current;
  }

  /** Runs one check now (tests, and an operator's "check now"); later checks are rescheduled from it. */
  async checkNow(): Promise<void> {
    clearTimeout(this.timer);
    await this.current;
    await this.runOnce();
  }

  /**
   * An owner-change notice: the orchestrator says it changed the owner record. It decides nothing; it
   * only brings the next check forward (`noticedCheckAt`), and that check looks the record up afresh and
   * feeds the same decision as a poll. A check already running may have read the record before the
   * change, so another one follows it. Returns in how many ms the next check runs; undefined when the
   * watchdog does not run.
   */
  notice(): { checkInMs: number } | undefined {
    if (!this.running) return undefined;
    this.notices += 1;
    this.noticePending = true;
    const now = this.clock();
    // While a check runs, its end schedules the next one, which then honours the notice.
    if (this.current === undefined) this.schedule(Math.max(0, (this.nextCheckAt ?? now) - now));
    const checkInMs = this.current === undefined ? Math.max(0, (this.nextCheckAt ?? now) - now) : 0;
    this.options.onEvent?.({ type: 'notice', checkInMs: Math.round(checkInMs) });
    return { checkInMs };
  }

  /**
   * A result learnt other than from the owner record, applied exactly like a check (in turn with them):
   * a member of an etcd cluster whose peer saw `not-owner` must fence and lose ownership too, even while
   * its own lookups still show the old record from a cache.
   */
  async observe(check: OwnerCheck): Promise<void> {
    if (!this.running) return;
    clearTimeout(this.timer);
    await this.current;
    clearTimeout(this.timer);
    const run = this.apply(check, 'observation').finally(() => {
      if (this.current === run) this.current = undefined;
    });
    this.current = run;
    await run;
  }

  private schedule(delay: number): void {
    clearTimeout(this.timer);
    if (!this.running) return;
    const now = this.clock();
    let at = now + delay;
    this.nextIsNoticed = this.noticePending;
    if (this.noticePending)
      at = noticedCheckAt({
        now,
        scheduledAt: at,
        lastNoticedCheckAt: this.lastNoticedCheckAt,
        ...(this.options.notices?.minSpacing === undefined ? {} : { minSpacing: this.options.notices.minSpacing }),
      });
    this.nextCheckAt = at;
    this.timer = setTimeout(() => void this.runOnce(), Math.max(0, at - now));
  }

  private clock(): number {
    return (this.options.now ?? (() => performance.now()))();
  }

  private runOnce(): Promise<void> {
    let trigger: CheckTrigger = this.followUps === undefined ? 'poll' : 'follow-up';
    if (this.nextIsNoticed) {
      trigger = 'notice';
      this.noticePending = false;
      this.nextIsNoticed = false;
      this.lastNoticedCheckAt = this.clock();
      this.followUps = 0;
    }
    const run = this.check(trigger).finally(() => {
      if (this.current === run) this.current = undefined;
    });
    this.current = run;
    return run;
  }

  private async check(trigger: CheckTrigger): Promise<void> {
    const o = this.options;
    // After a notice, an answer cached before it is no evidence: look the record up afresh.
    const outcome = await lookUpWithin(
      o.lookup.lookup(o.recordName, trigger === 'poll' ? {} : { fresh: true }),
      this.timings.checkTimeout,
    );
    const cluster = needsCluster(outcome) ? await o.clusterId?.().catch(() => undefined) : undefined;
    await this.apply(checkOwner({ outcome, identity: o.identity, ...(cluster ? { cluster } : {}) }), trigger);
  }

  private async apply(check: OwnerCheck, trigger: CheckTrigger = 'poll'): Promise<void> {
    const o = this.options;
    const decision = decideOwnerWatchdog({
      state: this.state,
      result: check.result,
      now: this.clock(),
      options: this.timings,
    });
    this.state = decision.state;
    this.lastCheck = check;
    this.lastCheckAt = Date.now();
    this.checks += 1;
    o.onEvent?.({
      type: 'check',
      check,
      mode: decision.state.mode,
      actions: decision.actions.map((a) => a.type),
      trigger,
    });
    if (decision.readiness === 503) this.readinessValue = 503;
    for (const action of decision.actions) {
      if (!(await this.execute(action))) break;
    }
    await this.reconcile();
    this.readinessValue = this.state.mode === 'serving' ? 200 : 503;
    this.schedule(this.afterCheck(decision.nextCheckIn, check, trigger));
  }

  /** The decision's delay, or sooner while a notice's follow-ups run (a seed that still finds itself the owner). */
  private afterCheck(nextCheckIn: number, check: OwnerCheck, trigger: CheckTrigger): number {
    if (trigger === 'observation' || this.followUps === undefined) return nextCheckIn;
    const followUp = followUpAfterNoticedCheck({
      nextCheckIn,
      mode: this.state.mode,
      result: check.result,
      followUps: this.followUps,
      ownerCheckInterval: this.timings.ownerCheckInterval,
      ...(this.options.notices?.firstFollowUp === undefined
        ? {}
        : { firstFollowUp: this.options.notices.firstFollowUp }),
    });
    this.followUps = followUp.followUps;
    return followUp.nextCheckIn;
  }

  /** True to go on with the next action. A failed fence stops the list: no final snapshot from an unfenced etcd. */
  private async execute(action: WatchdogAction): Promise<boolean> {
    const a = this.options.actuator;
    const started = performance.now();
    try {
      switch (action.type) {
        case 'stop-snapshotter':
          await a.stopSnapshotter();
          break;
        case 'start-snapshotter':
          await a.startSnapshotter();
          break;
        case 'fence':
          await a.fence();
          break;
        case 'unfence':
          await a.unfence();
          break;
        case 'take-final-snapshot':
          await a.takeFinalSnapshot();
          this.state = recordFinalSnapshot({ state: this.state, outcome: 'taken', options: this.options }).state;
          break;
      }
      this.options.onEvent?.({ type: 'action', action: action.type, ms: Math.round(performance.now() - started) });
      return true;
    } catch (error) {
      this.options.onEvent?.({ type: 'action-failed', action: action.type, error });
      // The core retries a failed final snapshot at the next check.
      if (action.type === 'take-final-snapshot')
        this.state = recordFinalSnapshot({ state: this.state, outcome: 'failed', options: this.options }).state;
      return action.type !== 'fence';
    }
  }

  /**
   * Level-triggered backstop: whatever failed before, etcd ends where the mode says. A fenced or lost
   * sidecar must never serve publicly; a serving one retries an unfence or snapshotter start that failed.
   */
  private async reconcile(): Promise<void> {
    const a = this.options.actuator;
    try {
      if (this.state.mode === 'serving') {
        if (!a.servingPublicly()) await a.unfence();
        await a.startSnapshotter();
      } else {
        await a.stopSnapshotter();
        if (a.servingPublicly()) await a.fence();
      }
    } catch (error) {
      this.options.onEvent?.({
        type: 'action-failed',
        action: this.state.mode === 'serving' ? 'unfence' : 'fence',
        error,
      });
    }
  }
}

/** A lookup that hangs or fails is no answer: `unknown`, never `not-owner`. */
export async function lookUpWithin(lookup: Promise<OwnerLookupOutcome>, ms: number): Promise<OwnerLookupOutcome> {
  const outcome = await withTimeout(
    lookup.catch((error: unknown): OwnerLookupOutcome => ({
      kind: 'failed',
      failure: 'other',
      message: String(error),
      cause: error,
    })),
    ms,
  );
  return outcome ?? { kind: 'failed', failure: 'timeout', message: `no answer within ${ms} ms` };
}
