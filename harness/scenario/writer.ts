import { setTimeout as sleep } from 'node:timers/promises';
import { failedOutcome, gatewayPut, type EtcdPut } from './etcd-client.js';
import { epochNow, type HistoryRecorder } from './history.js';

/**
 * A steady writer in front of the two etcds of a migrating control plane, behaving as a client behind
 * a load balancer: it keeps writing to the endpoint that last answered, and when that one fails it
 * tries the other at once. A probe loop also sends a share of writes to the other endpoint, as a
 * round-robin balancer would to any backend that accepts connections: without it, a source that keeps
 * accepting writes after the destination took over would never be seen, and split brain could hide.
 *
 * Only a write etcd answered with success is recorded as acknowledged; refusals, resets and timeouts
 * are failures, even though a timed-out write may have been applied (the client cannot know). Given a
 * history, the writer also records every attempt there (each loop is a client), with that
 * distinction kept: a refused write failed, a timed-out one is of unknown outcome.
 */

export type SeedRole = 'source' | 'destination';
export const otherSeed = (role: SeedRole): SeedRole => (role === 'source' ? 'destination' : 'source');

export interface AcknowledgedWrite {
  readonly key: string;
  readonly value: string;
  readonly revision: number;
  /** Epoch milliseconds (sub-millisecond precision) when the write was sent and when etcd acknowledged it. */
  readonly sentAt: number;
  readonly at: number;
  readonly seed: SeedRole;
}

export interface FailedWrite {
  readonly key: string;
  readonly seed: SeedRole;
  readonly sentAt: number;
  readonly at: number;
  readonly error: string;
}

export interface WriterRecord {
  readonly prefix: string;
  readonly startedAt: number;
  readonly stoppedAt: number | undefined;
  /** In acknowledgement order. */
  readonly acknowledged: readonly AcknowledgedWrite[];
  readonly failed: readonly FailedWrite[];
}

export interface WriterOptions {
  readonly endpoints: Readonly<Record<SeedRole, string>>;
  /** Every key starts with it; one prefix per test keeps the content check to this writer's keys. */
  readonly prefix: string;
  /** Target pace of all main loops together; 100 leaves room above the required 50 acknowledged writes a second. */
  readonly writesPerSecond?: number;
  /**
   * Main loops writing at once, each its own client with one write in flight (default
   * `DEFAULT_WRITER_LOOPS`), at the same pace together, as an API server's many clients write; the
   * system's guarantees do not depend on it.
   */
  readonly mainLoops?: number;
  /** A write not answered within this is a failure: an LB would give up on the backend too. */
  readonly timeoutMs?: number;
  /** Pause after both endpoints failed, so that an outage is not a busy loop. */
  readonly bothFailedPauseMs?: number;
  /** Interval of the probe loop writing to the endpoint the main loop is not using; 0 turns it off. */
  readonly probeIntervalMs?: number;
  readonly put?: EtcdPut;
  readonly now?: () => number;
  /** Where every attempt is recorded for the linearizability checker, in addition to the record. */
  readonly history?: HistoryRecorder;
}

export interface Writer {
  /** A copy of what was recorded so far. */
  record(): WriterRecord;
  /** The endpoint the main loop writes to now. */
  readonly current: SeedRole;
  /** Stops every loop, waits for writes in flight, and returns the final record. */
  stop(): Promise<WriterRecord>;
}

/**
 * Six loops at 100 writes a second together keep the 50 acknowledged writes a second the scenarios
 * require while one write takes up to 120 ms. Beside two CPU hogs (load average 6 to 20) two loops got
 * 26 a second in the scenario harness and 42 in S4 of a `zone` shoot, and the HA test's one loop 47:
 * one write waiting on a descheduled process holds its loop's next.
 */
export const DEFAULT_WRITER_LOOPS = 6;

export function startWriter(options: WriterOptions): Writer {
  const put = options.put ?? gatewayPut;
  const now = options.now ?? options.history?.now ?? epochNow;
  const mainLoops = options.mainLoops ?? DEFAULT_WRITER_LOOPS;
  const intervalMs = (1_000 * mainLoops) / (options.writesPerSecond ?? 100);
  const timeoutMs = options.timeoutMs ?? 1_000;
  const bothFailedPauseMs = options.bothFailedPauseMs ?? 20;
  const probeIntervalMs = options.probeIntervalMs ?? 100;
  const acknowledged: AcknowledgedWrite[] = [];
  const failed: FailedWrite[] = [];
  const startedAt = now();
  let stoppedAt: number | undefined;
  let current: SeedRole = 'source';
  let sequence = 0;
  let running = true;
  // Wakes sleeping loops on stop, so that stop() is bounded by one write's timeout.
  const stopping = new AbortController();

  const mainClients = Array.from({ length: mainLoops }, (_, i) => options.history?.newClient() ?? i);
  const probeClient = options.history?.newClient() ?? mainLoops;
  const attempt = async (seed: SeedRole, client: number): Promise<boolean> => {
    const n = sequence++;
    const key = `${options.prefix}/${String(n).padStart(8, '0')}`;
    const value = `${seed}-${n}`;
    const sentAt = now();
    try {
      const { revision } = await put({ endpoint: options.endpoints[seed], key, value, timeoutMs });
      const at = now();
      acknowledged.push({ key, value, revision, sentAt, at, seed });
      options.history?.add({
        client,
        op: 'put',
        key,
        input: value,
        invokedAt: sentAt,
        returnedAt: at,
        outcome: 'ok',
        seed,
      });
      return true;
    } catch (error) {
      const at = now();
      const message = error instanceof Error ? error.message : String(error);
      failed.push({ key, seed, sentAt, at, error: message });
      options.history?.add({
        client,
        op: 'put',
        key,
        input: value,
        invokedAt: sentAt,
        returnedAt: at,
        outcome: failedOutcome(error),
        seed,
        error: message,
      });
      return false;
    }
  };

  const pause = (ms: number) =>
    ms > 0 ? sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined) : Promise.resolve();

  const mainLoop = async (mainClient: number) => {
    while (running) {
      const slotEnd = now() + intervalMs;
      if (!(await attempt(current, mainClient)) && running) {
        const fallback = otherSeed(current);
        if (await attempt(fallback, mainClient)) current = fallback;
        else await pause(bothFailedPauseMs);
      }
      await pause(slotEnd - now());
    }
  };
  const mainLoopsDone = Promise.all(mainClients.map(mainLoop));

  const probeLoop = (async () => {
    if (probeIntervalMs <= 0) return;
    while (running) {
      await pause(probeIntervalMs);
      if (running) await attempt(otherSeed(current), probeClient);
    }
  })();

  const record = (): WriterRecord => ({
    prefix: options.prefix,
    startedAt,
    stoppedAt,
    acknowledged: [...acknowledged].sort((a, b) => a.at - b.at),
    failed: [...failed],
  });

  return {
    record,
    get current() {
      return current;
    },
    async stop() {
      running = false;
      stopping.abort();
      await Promise.all([mainLoopsDone, probeLoop]);
      stoppedAt ??= now();
      return record();
    },
  };
}
