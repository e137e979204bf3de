import { setTimeout as sleep } from 'node:timers/promises';
import { gatewayPut, type EtcdPut } from './etcd-client.js';

/**
 * A steady writer in front of the members of one etcd cluster, as a client that knows every member's
 * address (etcd's clients balance over the endpoints they are given): each write goes to the next member
 * in turn, and a member that refuses or does not answer is skipped for the next one at once, until every
 * member failed this write. Only a write etcd answered with success is acknowledged.
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
  /** Default 100. */
  readonly writesPerSecond?: number;
  /** Per attempt on one member; default 500 ms. */
  readonly timeoutMs?: number;
  readonly put?: EtcdPut;
}

export interface ClusterWriter {
  record(): ClusterWriterRecord;
  stop(): Promise<ClusterWriterRecord>;
}

const epochNow = () => performance.timeOrigin + performance.now();

export function startClusterWriter(options: ClusterWriterOptions): ClusterWriter {
  const put = options.put ?? gatewayPut;
  const intervalMs = 1_000 / (options.writesPerSecond ?? 100);
  const timeoutMs = options.timeoutMs ?? 500;
  const acknowledged: ClusterAck[] = [];
  let failed = 0;
  const startedAt = epochNow();
  let stoppedAt: number | undefined;
  let running = true;
  let next = 0;
  let sequence = 0;
  const stopping = new AbortController();
  const pause = (ms: number) => (ms > 0 ? sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined) : Promise.resolve());

  const loop = (async () => {
    while (running) {
      const slotEnd = epochNow() + intervalMs;
      const n = sequence++;
      const key = `${options.prefix}/${String(n).padStart(8, '0')}`;
      const value = `v-${n}`;
      const endpoints = options.endpoints();
      let done = false;
      for (let tried = 0; tried < endpoints.length && running && !done; tried++) {
        const member = (next + tried) % endpoints.length;
        const sentAt = epochNow();
        try {
          const { revision } = await put({ endpoint: endpoints[member]!, key, value, timeoutMs });
          acknowledged.push({ key, value, revision, member, sentAt, at: epochNow() });
          next = (member + 1) % endpoints.length;
          done = true;
        } catch {
          // Refused, reset or timed out on this member: the next one.
        }
      }
      if (!done) {
        failed += 1;
        await pause(20);
      }
      await pause(slotEnd - epochNow());
    }
  })();

  const record = (): ClusterWriterRecord => ({ prefix: options.prefix, startedAt, stoppedAt, acknowledged: [...acknowledged].sort((a, b) => a.at - b.at), failed });
  return {
    record,
    async stop() {
      running = false;
      stopping.abort();
      await loop;
      stoppedAt ??= epochNow();
      return record();
    },
  };
}

/** The longest time without an acknowledgement between `from` and `to` (epoch ms), and where it began. */
export function longestGap(acks: readonly { readonly at: number }[], from: number, to: number): { ms: number; after: number } {
  const times = acks.map((a) => a.at).filter((t) => t >= from && t <= to).sort((a, b) => a - b);
  let best = { ms: 0, after: from };
  let previous = from;
  for (const t of [...times, to]) {
    if (t - previous > best.ms) best = { ms: t - previous, after: previous };
    previous = t;
  }
  return best;
}
