import { setTimeout as sleep } from 'node:timers/promises';
import { EndpointReadiness } from './endpoint-readiness.js';
import { EtcdRequestError, failedOutcome, gatewayCreate, type EtcdPut } from './etcd-client.js';
import { epochNow, type HistoryRecorder, type Outcome } from './history.js';
import { DEFAULT_WRITER_LOOPS } from './writer.js';

/**
 * A steady writer in front of the members of one etcd cluster, as a client that knows every member's
 * address (etcd's clients balance over the endpoints they are given): each write goes to the next member
 * in turn that is ready (`EndpointReadiness`: it answered, as a gRPC connection is READY once the server
 * answered), and a member that refuses or does not answer is skipped for the next one at once, until every
 * member failed this write. Only a write etcd answered with success is acknowledged. Each write is a
 * create (`gatewayCreate`): an attempt that timed out may still be applied, and its retry on the next
 * member must not apply it a second time.
 *
 * Given a history, the writer records each write there as one put of its client (its key is written
 * by nobody else, its value is the same on every member it tries): ok when a member acknowledged it,
 * from the first attempt to the acknowledgement; otherwise of unknown outcome when any attempt may have
 * been applied (a timeout, a reset, an error answer), failed only when every member refused it.
 */

export interface ClusterAck {
  readonly key: string;
  readonly value: string;
  readonly revision: number;
  /** The index of the endpoint that acknowledged it. */
  readonly member: number;
  /** Epoch ms (sub-ms precision) when sent and when acknowledged. */
  readonly sentAt: number;
  readonly at: number;
}

export interface ClusterWriterRecord {
  readonly prefix: string;
  readonly startedAt: number;
  readonly stoppedAt: number | undefined;
  /** In acknowledgement order. */
  readonly acknowledged: readonly ClusterAck[];
  /** Writes no member acknowledged. */
  readonly failed: number;
}

export interface ClusterWriterOptions {
  /** Resolved at every write: a member's address may change (a restart) or vanish. */
  readonly endpoints: () => readonly string[];
  readonly prefix: string;
  /** All loops together; default 100. */
  readonly writesPerSecond?: number;
  /**
   * Loops writing at once, each its own client with one write in flight (default `DEFAULT_WRITER_LOOPS`):
   * they keep the pace while a write takes longer than its share of a second, as on a loaded machine.
   */
  readonly loops?: number;
  /** Per attempt on one member; default 500 ms. */
  readonly timeoutMs?: number;
  readonly put?: EtcdPut;
  /** Where every write is recorded for the linearizability checker; `seed` is `memberName(index)`. */
  readonly history?: HistoryRecorder;
  /** Whether a member answers now (`EndpointReadiness`); default a GET of etcd's `/version`. */
  readonly probe?: (endpoint: string, signal: AbortSignal) => Promise<boolean>;
  /** The name a member's endpoint has in the history. Default `member-<index>`. */
  readonly memberName?: (index: number) => string;
}

export interface ClusterWriter {
  record(): ClusterWriterRecord;
  stop(): Promise<ClusterWriterRecord>;
}

export function startClusterWriter(options: ClusterWriterOptions): ClusterWriter {
  const put = options.put ?? gatewayCreate;
  const { history } = options;
  const now = history?.now ?? epochNow;
  const memberName = options.memberName ?? ((i: number) => `member-${i}`);
  const loops = options.loops ?? DEFAULT_WRITER_LOOPS;
  const intervalMs = (1_000 * loops) / (options.writesPerSecond ?? 100);
  const timeoutMs = options.timeoutMs ?? 500;
  const acknowledged: ClusterAck[] = [];
  let failed = 0;
  const startedAt = now();
  let stoppedAt: number | undefined;
  let running = true;
  let next = 0;
  let sequence = 0;
  const stopping = new AbortController();
  const readiness = new EndpointReadiness(options.probe ? { probe: options.probe } : {});
  const pause = (ms: number) =>
    ms > 0 ? sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined) : Promise.resolve();

  const loop = async (client: number) => {
    while (running) {
      const slotEnd = now() + intervalMs;
      const n = sequence++;
      const key = `${options.prefix}/${String(n).padStart(8, '0')}`;
      const value = `v-${n}`;
      const endpoints = options.endpoints();
      const invokedAt = now();
      const tried: number[] = [];
      const errors: string[] = [];
      let outcome: Outcome = 'fail';
      let done = false;
      for (const member of readiness.order(endpoints, next)) {
        if (!running || done) break;
        const sentAt = now();
        tried.push(member);
        try {
          const { revision } = await put({ endpoint: endpoints[member]!, key, value, timeoutMs });
          const at = now();
          acknowledged.push({ key, value, revision, member, sentAt, at });
          history?.add({
            client,
            op: 'put',
            key,
            input: value,
            invokedAt,
            returnedAt: at,
            outcome: 'ok',
            seed: memberName(member),
          });
          next = (member + 1) % endpoints.length;
          readiness.answered(endpoints[member]!);
          done = true;
        } catch (error) {
          // Refused, reset or timed out on this member: the next one. Unknown once any attempt may have applied it.
          if (failedOutcome(error) === 'unknown') outcome = 'unknown';
          if (error instanceof EtcdRequestError && error.answered) readiness.answered(endpoints[member]!);
          else readiness.unanswered(endpoints[member]!);
          errors.push(error instanceof Error ? error.message : String(error));
        }
      }
      if (!done && tried.length > 0)
        history?.add({
          client,
          op: 'put',
          key,
          input: value,
          invokedAt,
          returnedAt: now(),
          outcome,
          seed: tried.map(memberName).join(','),
          error: errors.join('; '),
        });
      if (!done) {
        failed += 1;
        await pause(20);
      }
      await pause(slotEnd - now());
    }
  };
  const loopsDone = Promise.all(Array.from({ length: loops }, (_, i) => loop(history?.newClient() ?? i)));

  const record = (): ClusterWriterRecord => ({
    prefix: options.prefix,
    startedAt,
    stoppedAt,
    acknowledged: [...acknowledged].sort((a, b) => a.at - b.at),
    failed,
  });
  return {
    record,
    async stop() {
      running = false;
      stopping.abort();
      readiness.stop();
      await loopsDone;
      stoppedAt ??= now();
      return record();
    },
  };
}

/** The longest time without an acknowledgement between `from` and `to` (epoch ms), and where it began. */
export function longestGap(
  acks: readonly { readonly at: number }[],
  from: number,
  to: number,
): { ms: number; after: number } {
  const times = acks
    .map((a) => a.at)
    .filter((t) => t >= from && t <= to)
    .sort((a, b) => a - b);
  let best = { ms: 0, after: from };
  let previous = from;
  for (const t of [...times, to]) {
    if (t - previous > best.ms) best = { ms: t - previous, after: previous };
    previous = t;
  }
  return best;
}
