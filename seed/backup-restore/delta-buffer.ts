import type { DeltaEvent } from './delta-format.js';

/** What the next delta snapshot holds: the events after the last snapshot, without a gap. */
export interface PendingDelta {
  readonly startRevision: number;
  readonly lastRevision: number;
  readonly events: readonly DeltaEvent[];
}

export type CutResult =
  | { readonly kind: 'empty' }
  | { readonly kind: 'delta'; readonly delta: PendingDelta }
  /** The first event is not the next revision: the watch missed some (compaction). Only a full snapshot helps. */
  | { readonly kind: 'gap'; readonly expected: number; readonly found: number };

/** Acknowledged writes a stopped snapshotter dropped unuploaded: the watch delivers them again after its restart. */
export interface CarriedPending {
  /** When the oldest of them arrived (ms, the caller's clock). */
  readonly since: number;
  /** The last revision among them: a snapshot up to it holds them all. */
  readonly upTo: number;
}

/**
 * The events the watch delivered since the last snapshot, as a pure structure. `snapshotted` moves the
 * baseline after a snapshot was uploaded, and drops what it covers; a failed upload moves nothing, so
 * the next delta simply holds more. It also knows when the oldest event not yet uploaded arrived (the
 * write guard's backup lag), across a stop and start of the snapshotter (`carry`).
 */
export class DeltaBuffer {
  private events: DeltaEvent[] = [];
  private arrivals: number[] = [];

  constructor(
    private baseline: number,
    private carried?: CarriedPending,
  ) {}

  /** The last revision in the store. */
  get lastRevision(): number {
    return this.baseline;
  }

  get pending(): number {
    return this.events.length;
  }

  /** When the oldest event that no uploaded snapshot holds arrived; undefined when there is none. */
  get oldestPendingAt(): number | undefined {
    const first = this.arrivals[0];
    if (this.carried === undefined) return first;
    return first === undefined ? this.carried.since : Math.min(first, this.carried.since);
  }

  /** What a stopped snapshotter's next buffer carries: the pending events' age (their revisions come again). */
  carry(): CarriedPending | undefined {
    const since = this.oldestPendingAt;
    if (since === undefined) return undefined;
    return { since, upTo: Math.max(this.events.at(-1)?.revision ?? 0, this.carried?.upTo ?? 0) };
  }

  /** Events at or below the baseline are already in a snapshot (a full snapshot overtook the watch). `at`: when they arrived. */
  add(events: readonly DeltaEvent[], at: number = Date.now()): void {
    for (const e of events) {
      if (e.revision <= this.baseline) continue;
      this.events.push(e);
      this.arrivals.push(at);
    }
  }

  cut(): CutResult {
    const first = this.events[0];
    if (first === undefined) return { kind: 'empty' };
    if (first.revision !== this.baseline + 1)
      return { kind: 'gap', expected: this.baseline + 1, found: first.revision };
    return {
      kind: 'delta',
      delta: { startRevision: this.baseline + 1, lastRevision: this.events.at(-1)!.revision, events: [...this.events] },
    };
  }

  /** A snapshot up to `revision` is in the store. */
  snapshotted(revision: number): void {
    if (revision <= this.baseline) return;
    this.baseline = revision;
    const kept = this.events.map((e, i) => ({ e, at: this.arrivals[i]! })).filter(({ e }) => e.revision > revision);
    this.events = kept.map(({ e }) => e);
    this.arrivals = kept.map(({ at }) => at);
    if (this.carried !== undefined && revision >= this.carried.upTo) this.carried = undefined;
  }
}
