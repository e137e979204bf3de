import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { failedOutcome } from './etcd-client.js';

/**
 * A history of client operations on key-value registers, for the linearizability checker
 * (tools/linearizability, Porcupine). Every client of a scenario records into one `HistoryRecorder`:
 * what it asked (put or get, key, value), when it asked and when it got the answer, the answer or the
 * error, and which seed it addressed. The file is JSON lines, one operation a line, in the shape the
 * checker reads (tools/linearizability/README.md).
 *
 * Outcomes: `ok` (answered), `fail` (certainly not applied: nothing was sent), `unknown` (a timeout, a
 * reset, an error answer: a put may or may not have been applied; the checker lets it take effect at
 * any time after its invocation, or never).
 */

export type Outcome = 'ok' | 'fail' | 'unknown';

export interface HistoryOperation {
  /** One sequential client: it issues its next operation only once the previous one ended. */
  readonly client: number;
  readonly op: 'put' | 'get';
  readonly key: string;
  /** A put's value; values are unique per history, so that a read names the put it saw. */
  readonly input?: string;
  /** An ok get's answer; null: the key was absent. */
  readonly output?: string | null;
  /** Epoch milliseconds (sub-millisecond precision), taken before sending and after the answer. */
  readonly invokedAt: number;
  readonly returnedAt: number;
  readonly outcome: Outcome;
  /** The seed the client addressed (and, when ok, that served it), e.g. `source` or `destination`. */
  readonly seed: string;
  readonly error?: string;
  /** Why the outcome is what it is when the test changed it, e.g. a contract's loss window. */
  readonly note?: string;
}

/** A point (or span) of the scenario on the visualization's timeline: a cut, a kill, a loss window. */
export interface HistoryAnnotation {
  readonly annotation: string;
  readonly at: number;
  readonly until?: number;
}

export const epochNow = () => performance.timeOrigin + performance.now();

export interface HistoryRecorderOptions {
  readonly now?: () => number;
}

export class HistoryRecorder {
  readonly now: () => number;
  private readonly ops: HistoryOperation[] = [];
  private readonly marks: HistoryAnnotation[] = [];
  private clients = 0;
  private values = 0;

  constructor(options: HistoryRecorderOptions = {}) {
    this.now = options.now ?? epochNow;
  }

  /** A new client id; a client must not overlap its own operations. */
  newClient(): number {
    return this.clients++;
  }

  /** A value no other put of this history writes (`<client>-<n>`). */
  uniqueValue(client: number): string {
    return `c${client}-${this.values++}`;
  }

  /** Records an operation the caller timed itself. */
  add(op: HistoryOperation): void {
    this.ops.push(op);
  }

  /**
   * Runs one put (`call` resolves once acknowledged) or get (`call` resolves with the value read,
   * undefined when absent), timing it and recording its outcome; resolves with that outcome.
   */
  async put(
    input: { client: number; key: string; value: string; seed: string },
    call: () => Promise<unknown>,
  ): Promise<Outcome> {
    return this.run(
      { client: input.client, op: 'put', key: input.key, input: input.value, seed: input.seed },
      async () => {
        await call();
        return undefined;
      },
    );
  }

  async get(
    input: { client: number; key: string; seed: string },
    call: () => Promise<string | undefined>,
  ): Promise<Outcome> {
    return this.run({ client: input.client, op: 'get', key: input.key, seed: input.seed }, async () => ({
      output: (await call()) ?? null,
    }));
  }

  private async run(
    op: Pick<HistoryOperation, 'client' | 'op' | 'key' | 'input' | 'seed'>,
    call: () => Promise<{ output: string | null } | undefined>,
  ): Promise<Outcome> {
    const invokedAt = this.now();
    try {
      const answer = await call();
      this.ops.push({ ...op, ...answer, invokedAt, returnedAt: this.now(), outcome: 'ok' });
      return 'ok';
    } catch (error) {
      const outcome = failedOutcome(error);
      this.ops.push({
        ...op,
        invokedAt,
        returnedAt: this.now(),
        outcome,
        error: error instanceof Error ? error.message : String(error),
      });
      return outcome;
    }
  }

  annotate(annotation: string, at: number = this.now(), until?: number): void {
    this.marks.push(until === undefined ? { annotation, at } : { annotation, at, until });
  }

  operations(): HistoryOperation[] {
    return [...this.ops];
  }

  annotations(): HistoryAnnotation[] {
    return [...this.marks];
  }

  /** Every key an operation touched, sorted. */
  keys(): string[] {
    return [...new Set(this.ops.map((o) => o.key))].sort();
  }

  /** Replaces the recorded operations, e.g. with `markUnknown`'s result. */
  replace(ops: readonly HistoryOperation[]): void {
    this.ops.splice(0, this.ops.length, ...ops);
  }

  /** Writes the history as JSON lines (operations in invocation order, then annotations). */
  write(path: string): void {
    mkdirSync(dirname(path), { recursive: true });
    const ops = [...this.ops].sort((a, b) => a.invokedAt - b.invokedAt);
    writeFileSync(path, [...ops, ...this.marks].map((line) => JSON.stringify(line)).join('\n') + '\n');
  }
}

export interface LossWindow {
  /** Operations of this seed inside the window become of unknown outcome. */
  readonly seed: string;
  /** The window reaches this far back from the seed's last acknowledged put, and on to its last answer. */
  readonly lengthMs: number;
  /** Said in each changed operation's `note` and on the timeline. */
  readonly reason: string;
}

export interface LossWindowResult {
  readonly ops: HistoryOperation[];
  /** Undefined when the seed never answered. */
  readonly from: number | undefined;
  readonly to: number | undefined;
  readonly changed: number;
}

/**
 * A contract that allows a bounded loss (S3 and S4 cut for good: what the source acknowledged within
 * `lengthMs` before its last acknowledged write, the bound its loss check asserts) promises nothing about
 * what the seed answered from then on: its puts become of unknown outcome (they may be lost, or not), and
 * its reads carry no information (they may have seen a write that was then lost), including reads it
 * served after its last acknowledged write (a source whose write guard refuses puts still serves reads
 * until it fences). Everything outside the window is checked as recorded.
 */
export function markLossWindow(ops: readonly HistoryOperation[], window: LossWindow): LossWindowResult {
  const answered = ops.filter((o) => o.seed === window.seed && o.outcome === 'ok');
  if (answered.length === 0) return { ops: [...ops], from: undefined, to: undefined, changed: 0 };
  const last = (list: readonly HistoryOperation[]) => list.reduce((at, o) => Math.max(at, o.returnedAt), -Infinity);
  const puts = answered.filter((o) => o.op === 'put');
  const to = last(answered);
  const from = (puts.length > 0 ? last(puts) : to) - window.lengthMs;
  let changed = 0;
  const marked = ops.map((o): HistoryOperation => {
    if (o.seed !== window.seed || o.outcome !== 'ok' || o.returnedAt < from) return o;
    changed += 1;
    const { output: _output, ...rest } = o;
    return { ...rest, outcome: 'unknown', note: window.reason };
  });
  return { ops: marked, from, to, changed };
}
