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

/**
 * The events the watch delivered since the last snapshot, as a pure structure. `snapshotted` moves the
 * baseline after a snapshot was uploaded, and drops what it covers; a failed upload moves nothing, so
 * the next delta simply holds more.
 */
export class DeltaBuffer {
  private events: DeltaEvent[] = [];

  constructor(private baseline: number) {}

  /** The last revision in the store. */
  get lastRevision(): number {
    return this.baseline;
  }

  get pending(): number {
    return this.events.length;
  }

  /** Events at or below the baseline are already in a snapshot (a full snapshot overtook the watch). */
  add(events: readonly DeltaEvent[]): void {
    for (const e of events) if (e.revision > this.baseline) this.events.push(e);
  }

  cut(): CutResult {
    const first = this.events[0];
    if (first === undefined) return { kind: 'empty' };
    if (first.revision !== this.baseline + 1) return { kind: 'gap', expected: this.baseline + 1, found: first.revision };
    return { kind: 'delta', delta: { startRevision: this.baseline + 1, lastRevision: this.events.at(-1)!.revision, events: [...this.events] } };
  }

  /** A snapshot up to `revision` is in the store. */
  snapshotted(revision: number): void {
    if (revision <= this.baseline) return;
    this.baseline = revision;
    this.events = this.events.filter((e) => e.revision > revision);
  }
}
