/**
 * The pure side of `npm run bench:downtime` (scripts/bench-downtime.ts): the write-unavailability window
 * from the writer's own record, the phases inside it from what the system recorded (the sidecars' log
 * lines and the migration record's step times), and the summaries and aims the script prints. All times
 * are epoch milliseconds of one machine's clock: the writer, the sidecars and the Lambdas all run on it.
 */
import { latestFullSnapshot, type Snapshot } from '../core/snapshots/index.js';
import { median } from './bench-stats.js';

export type WriterRole = 'source' | 'destination';

export interface Acknowledgement {
  /** When the writer received etcd's success answer. */
  readonly at: number;
  readonly seed: WriterRole;
}

export interface Interval {
  readonly from: number;
  readonly to: number;
}

export type WriteWindow =
  ({ readonly ok: true; readonly ms: number } & Interval) | { readonly ok: false; readonly reason: string };

/**
 * From the source's last acknowledged write to the destination's first: the time no client could
 * write. There is none without an acknowledgement on each side, or when the source acknowledged after
 * the destination's first (split brain, which a migration must never produce).
 */
export function writeWindow(acknowledged: readonly Acknowledgement[]): WriteWindow {
  let from = -Infinity;
  let to = Infinity;
  for (const a of acknowledged) {
    if (a.seed === 'source') from = Math.max(from, a.at);
    else to = Math.min(to, a.at);
  }
  if (from === -Infinity) return { ok: false, reason: 'the source acknowledged no write' };
  if (to === Infinity) return { ok: false, reason: 'the destination acknowledged no write' };
  if (from > to)
    return {
      ok: false,
      reason: `split brain: the source acknowledged a write ${Math.round(from - to)} ms after the destination's first`,
    };
  return { ok: true, from, to, ms: to - from };
}

/**
 * The live path's window: its members on both seeds are one cluster while it walks, so either may
 * acknowledge and neither's last is the end of anything. The window is the longest time without any
 * acknowledgement from the last one before `from` (the request) to the first one after `to` (the
 * migration's end).
 */
export function liveWriteWindow(acknowledged: readonly Acknowledgement[], from: number, to: number): WriteWindow {
  const times = acknowledged.map((a) => a.at).sort((a, b) => a - b);
  const before = times.filter((t) => t <= from).at(-1);
  const after = times.find((t) => t >= to);
  if (before === undefined) return { ok: false, reason: 'no write was acknowledged before the request' };
  if (after === undefined) return { ok: false, reason: 'no write was acknowledged after the migration ended' };
  const points = [before, ...times.filter((t) => t > before && t < after), after];
  let best = { from: before, to: before };
  for (let i = 1; i < points.length; i++)
    if (points[i]! - points[i - 1]! > best.to - best.from) best = { from: points[i - 1]!, to: points[i]! };
  return { ok: true, ...best, ms: best.to - best.from };
}

/** The phases of the window, in the order a migration goes through them. */
export const PHASES = ['fence', 'final snapshot', 'copy', 'restore', 'activation'] as const;
export type Phase = (typeof PHASES)[number];
/** Time of the window inside none of the phases: the orchestration between them. */
export const BETWEEN = 'between' as const;
export type Share = Phase | typeof BETWEEN;
export const SHARES: readonly Share[] = [...PHASES, BETWEEN];

export interface PhaseInterval extends Interval {
  readonly phase: Phase;
}

/**
 * How the window's time divides among the phases: each moment of the window goes to the phase that
 * covers it, to the earlier phase (in `PHASES` order) where two overlap, and to `between` where none
 * does. The shares add up to the window's length. Earlier wins because each phase waits for the one
 * before it (a copy that waits for the final snapshot is held up by the snapshot, not by copying).
 */
export function phaseShares(window: Interval, intervals: readonly PhaseInterval[]): Record<Share, number> {
  return sharesInOrder(window, intervals, PHASES);
}

/**
 * `phaseShares` for any ordered list of parts: each moment of the window goes to the covering part
 * earliest in `order`, or to `between`.
 */
export function sharesInOrder<P extends string>(
  window: Interval,
  intervals: readonly (Interval & { readonly phase: P })[],
  order: readonly P[],
): Record<P | typeof BETWEEN, number> {
  const shares = Object.fromEntries([...order, BETWEEN].map((s) => [s, 0])) as Record<P | typeof BETWEEN, number>;
  if (!(window.to > window.from)) return shares;
  const inside = intervals.filter((i) => i.to > window.from && i.from < window.to && i.to > i.from);
  const points = [
    ...new Set([
      window.from,
      window.to,
      ...inside.flatMap((i) => [i.from, i.to]).filter((t) => t > window.from && t < window.to),
    ]),
  ].sort((a, b) => a - b);
  for (let k = 0; k + 1 < points.length; k++) {
    const [a, b] = [points[k]!, points[k + 1]!];
    let winner: P | typeof BETWEEN = BETWEEN;
    for (const i of inside)
      if (i.from <= a && i.to >= b && (winner === BETWEEN || order.indexOf(i.phase) < order.indexOf(winner)))
        winner = i.phase;
    shares[winner] += b - a;
  }
  return shares;
}

/**
 * The kube-level window: the longest time without an acknowledged write through kube-apiserver, from one
 * acknowledgement to the next, among those ending after `after` (the migration's request). The writer
 * does not know which seed answered (the API domain hides it), so the gap is the window; it is only
 * complete once a write was acknowledged after `servedAt` (the destination's first acknowledged etcd
 * write): one before that may be the source's, before its fence.
 */
export function kubeWindow(acknowledgedAt: readonly number[], marks: { after: number; servedAt: number }): WriteWindow {
  const { after } = marks;
  const at = [...acknowledgedAt].sort((a, b) => a - b);
  if (!at.some((t) => t <= after)) return { ok: false, reason: 'no write was acknowledged before the request' };
  if (!at.some((t) => t > marks.servedAt))
    return { ok: false, reason: 'no write was acknowledged after the destination served' };
  let best: Interval = { from: after, to: after };
  for (let k = 0; k + 1 < at.length; k++)
    if (at[k + 1]! > after && at[k + 1]! - at[k]! > best.to - best.from) best = { from: at[k]!, to: at[k + 1]! };
  return { ok: true, ...best, ms: best.to - best.from };
}

/** What the kube-level window is made of, in the order a migration goes through them. */
export const KUBE_PARTS = ['etcd window', 'kube-apiserver', 'record switch', 'reconnect'] as const;
export type KubePart = (typeof KUBE_PARTS)[number];
export type KubeShare = KubePart | typeof BETWEEN;
export const KUBE_SHARES: readonly KubeShare[] = [...KUBE_PARTS, BETWEEN];

/**
 * How the kube-level window divides: the etcd window inside it; from its end until the destination's
 * kube-apiserver answered ready; from then until the API record named the destination (the switch step's
 * end), where the window ended only after it; from then until the kube writer's next acknowledgement
 * (the client's new connection). A window that ended before the switch waited for none (the source's
 * load balancer handed the client over): all of it after kube-apiserver's ready is the reconnect.
 * `between`: the rest (kube writes failing before etcd's did).
 */
export function kubeWindowShares(
  window: Interval,
  marks: { etcd: Interval; apiServerReadyAt?: number; switchedAt?: number },
): Record<KubeShare, number> {
  const ready = Math.max(marks.etcd.to, marks.apiServerReadyAt ?? marks.etcd.to);
  const waitedForSwitch = marks.switchedAt !== undefined && marks.switchedAt < window.to;
  const switched = waitedForSwitch ? Math.max(ready, marks.switchedAt!) : ready;
  return sharesInOrder(
    window,
    [
      { phase: 'etcd window', ...marks.etcd },
      { phase: 'kube-apiserver', from: marks.etcd.to, to: ready },
      { phase: 'record switch', from: ready, to: switched },
      { phase: 'reconnect', from: switched, to: window.to },
    ],
    KUBE_PARTS,
  );
}

/** One JSON line of a sidecar's log (`{"time": ISO, "event": ..., ...}`), with its time as epoch ms. */
export interface SidecarLogEvent {
  readonly time: number;
  readonly event: string;
  readonly [field: string]: unknown;
}

/** The JSON event lines of a sidecar log; anything else (a partial last line, plain text) is skipped. */
export function parseSidecarLog(text: string): SidecarLogEvent[] {
  const events: SidecarLogEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const value = JSON.parse(line) as Record<string, unknown>;
      const time = typeof value.time === 'string' ? Date.parse(value.time) : NaN;
      if (Number.isFinite(time) && typeof value.event === 'string') events.push({ ...value, time, event: value.event });
    } catch {
      // A line being written while the file was read.
    }
  }
  return events;
}

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : NaN);
/** The first event at or after `since` that matches. */
export const firstEventAfter = (
  events: readonly SidecarLogEvent[],
  since: number,
  match: (e: SidecarLogEvent) => boolean,
): SidecarLogEvent | undefined => events.find((e) => e.time >= since && match(e));
const firstAfter = firstEventAfter;

/** What the source's sidecar logged once the migration started: its fence and its final snapshot. */
export interface SourceRecord {
  /**
   * The fence, from its start (the line's time less its duration) to its `fenced` line: a single etcd's
   * logged once etcd is gone from the public address (`stoppedAfterMs`: the alarm, the final delta read,
   * the gate's close; etcd goes on running on its private address), a cluster member's once etcd is
   * healthy again on the private address (`privateReadyAfterMs`).
   */
  readonly fence?: Interval & { readonly refusingAfterMs: number; readonly by: string };
  /** The final snapshot's own duration (`ms`: save, compress, upload) up to its line, logged once it is in the bucket. */
  readonly finalSnapshot?: Interval & { readonly kind: string; readonly key: string; readonly bytes: number };
}

export function sourceRecord(events: readonly SidecarLogEvent[], since: number): SourceRecord {
  const fenced = firstAfter(events, since, (e) => e.event === 'fenced');
  const final = firstAfter(events, since, (e) => e.event === 'snapshot' && e.final === true);
  return {
    ...(fenced
      ? {
          fence: {
            from: fenced.time - num(fenced.privateReadyAfterMs ?? fenced.stoppedAfterMs),
            to: fenced.time,
            refusingAfterMs: num(fenced.refusingAfterMs),
            by: String(fenced.by ?? 'stop'),
          },
        }
      : {}),
    ...(final
      ? {
          finalSnapshot: {
            from: final.time - num(final.ms),
            to: final.time,
            kind: String(final.kind),
            key: String(final.key),
            bytes: num(final.size),
          },
        }
      : {}),
  };
}

/** The sidecar log lines that end the restore a destination serves from: a restore, or the catch-up of a restore ahead. */
export const RESTORE_EVENTS: readonly string[] = ['restored', 'caught-up'];

/** What the destination's sidecar logged once the migration started: its restore, and what came before it served. */
export interface DestinationRecord {
  /**
   * The sidecar's restore (`timings.total`: download, `etcdctl snapshot restore`, start on the private
   * address, delta replay) up to its `restored` line, or the catch-up of a restore ahead up to its
   * `caught-up` line (a restore ahead, `restored-ahead`, is not it: the destination does not serve from it yet).
   */
  readonly restore?: Interval & {
    readonly event: string;
    readonly timings: Readonly<Record<string, number>>;
    readonly final: boolean;
  };
  /** The full snapshot the sidecar takes of the restored etcd before it serves. */
  readonly postRestoreSnapshot?: { readonly ms: number; readonly bytes: number };
  /** The watchdog's unfence (etcd moved to the public address) after the restore. */
  readonly unfence?: { readonly at: number; readonly ms: number };
}

export function destinationRecord(events: readonly SidecarLogEvent[], since: number): DestinationRecord {
  const restored = firstAfter(events, since, (e) => RESTORE_EVENTS.includes(e.event));
  if (!restored) return {};
  const timings = (restored.timings ?? {}) as Record<string, number>;
  const snapshot = firstAfter(events, restored.time, (e) => e.event === 'snapshot');
  const unfence = firstAfter(events, restored.time, (e) => e.event === 'watchdog-action' && e.action === 'unfence');
  return {
    restore: {
      from: restored.time - num(timings.total),
      to: restored.time,
      event: restored.event,
      timings,
      final: restored.final === true,
    },
    ...(snapshot ? { postRestoreSnapshot: { ms: num(snapshot.ms), bytes: num(snapshot.size) } } : {}),
    ...(unfence ? { unfence: { at: unfence.time, ms: num(unfence.ms) } } : {}),
  };
}

/** A step of the migration record (`GET .../migration`). */
export interface RecordStep {
  readonly id: string;
  readonly startedAt?: string;
  readonly endedAt?: string;
}

const stepInterval = (s: RecordStep): Interval | undefined => {
  const from = s.startedAt ? Date.parse(s.startedAt) : NaN;
  const to = s.endedAt ? Date.parse(s.endedAt) : NaN;
  return Number.isFinite(from) && Number.isFinite(to) ? { from, to } : undefined;
};

/**
 * The phase intervals of one migration: fence and final snapshot from the source's log, copy from the
 * record's steps named in `copySteps`, restore from the destination's log, and activation from the end
 * of the last of those (within the window) to the destination's first acknowledged write.
 */
export function phaseIntervals(input: {
  window: Interval;
  source: SourceRecord;
  destination: DestinationRecord;
  steps: readonly RecordStep[];
  copySteps: readonly string[];
}): PhaseInterval[] {
  const intervals: PhaseInterval[] = [];
  if (input.source.fence) intervals.push({ phase: 'fence', from: input.source.fence.from, to: input.source.fence.to });
  if (input.source.finalSnapshot)
    intervals.push({
      phase: 'final snapshot',
      from: input.source.finalSnapshot.from,
      to: input.source.finalSnapshot.to,
    });
  for (const step of input.steps) {
    const interval = input.copySteps.includes(step.id) ? stepInterval(step) : undefined;
    if (interval) intervals.push({ phase: 'copy', ...interval });
  }
  if (input.destination.restore)
    intervals.push({ phase: 'restore', from: input.destination.restore.from, to: input.destination.restore.to });
  const ends = intervals.map((i) => i.to).filter((t) => t <= input.window.to);
  const activationFrom = Math.max(input.window.from, ...ends);
  intervals.push({ phase: 'activation', from: activationFrom, to: input.window.to });
  return intervals;
}

/** How long each step of the record ran inside the window (steps that did not, left out), in record order. */
export function stepsInWindow(window: Interval, steps: readonly RecordStep[]): { id: string; ms: number }[] {
  const out: { id: string; ms: number }[] = [];
  for (const step of steps) {
    const interval = stepInterval(step);
    if (!interval) continue;
    const ms = Math.min(interval.to, window.to) - Math.max(interval.from, window.from);
    if (ms > 0) out.push({ id: step.id, ms });
  }
  return out;
}

/**
 * What a bucket holds of one etcd that no restore and no copy will read again: everything but the latest
 * full snapshot and the deltas after it (what `planRestore` uses). Without a full snapshot, nothing.
 */
export function supersededSnapshots<S extends Snapshot & { readonly key: string }>(listing: readonly S[]): S[] {
  const full = latestFullSnapshot(listing);
  if (!full) return [];
  return listing.filter((s) => s.key !== full.key && !(s.kind === 'Incr' && s.lastRevision > full.lastRevision));
}

export interface Summary {
  readonly runs: number;
  readonly median: number;
  readonly max: number;
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return { runs: 0, median: NaN, max: NaN };
  return { runs: values.length, median: median(values), max: Math.max(...values) };
}

/** Each share's part of the time of all windows together (sum of the share over the sum of the windows); 0 without time. */
export function shareFractions(runs: readonly Readonly<Record<Share, number>>[]): Record<Share, number> {
  const total = runs.reduce((sum, r) => sum + SHARES.reduce((s, k) => s + r[k], 0), 0);
  return Object.fromEntries(
    SHARES.map((k) => [k, total > 0 ? runs.reduce((sum, r) => sum + r[k], 0) / total : 0]),
  ) as Record<Share, number>;
}

export type MigrationPathName = 'good' | 'bad' | 'live';

/** How tables and aims name a path: the bad path is measured with its source still running. */
export function pathLabel(path: MigrationPathName): string {
  return path === 'bad' ? 'bad (live source)' : path === 'live' ? 'live (etcd walks under raft)' : 'good';
}

export interface MeasuredWindow {
  readonly sizeMb: number;
  readonly path: MigrationPathName;
  readonly ms: number;
}

export interface Aim {
  readonly label: string;
  /** Undefined when the runs it needs were not made (a smaller run than the default). */
  readonly value: number | undefined;
  readonly limit: number;
  readonly unit: 'ms' | 'x';
  readonly met: boolean | undefined;
}

export interface AimSettings {
  readonly fenceBoundMs: number;
  readonly smallMb: number;
  readonly largeMb: number;
  /** Good path at the large size: at most this (issue 12: 3 s). */
  readonly goodLimitMs: number;
  /** Large over small window: at most this (issue 12: 1.3). */
  readonly ratioLimit: number;
  /** Bad path with a live source: at most the fence bound plus this (issue 12: 3 s). */
  readonly badMarginMs: number;
  /** Live path at every size: median and maximum window at most these (issue 33: 500 ms and 1 s). */
  readonly liveMedianMs: number;
  readonly liveMaxMs: number;
}

export const ISSUE_AIMS: Omit<AimSettings, 'fenceBoundMs'> = {
  smallMb: 10,
  largeMb: 500,
  goodLimitMs: 3_000,
  ratioLimit: 1.3,
  badMarginMs: 3_000,
  liveMedianMs: 500,
  liveMaxMs: 1_000,
};

const aim = (label: string, value: number | undefined, limit: number, unit: Aim['unit']): Aim => ({
  label,
  value,
  limit,
  unit,
  met: value === undefined ? undefined : value <= limit,
});

/**
 * The issue's aims against the measured windows: the good path at the large size (median and maximum)
 * at most `goodLimitMs`; the large size's median window at most `ratioLimit` times the small size's, per
 * path; the bad path at every size measured (median and maximum) at most the fence bound plus `badMarginMs`.
 */
export function downtimeAims(windows: readonly MeasuredWindow[], settings: AimSettings): Aim[] {
  const of = (sizeMb: number, path: MigrationPathName) =>
    summarize(windows.filter((w) => w.sizeMb === sizeMb && w.path === path).map((w) => w.ms));
  const defined = (s: Summary, pick: 'median' | 'max') => (s.runs > 0 ? s[pick] : undefined);
  const good = of(settings.largeMb, 'good');
  const aims = [
    aim(`good path at ${settings.largeMb} MB, median window`, defined(good, 'median'), settings.goodLimitMs, 'ms'),
    aim(`good path at ${settings.largeMb} MB, maximum window`, defined(good, 'max'), settings.goodLimitMs, 'ms'),
  ];
  const measured = (path: MigrationPathName) => windows.some((w) => w.path === path);
  // The live path's aims only where it was measured: a run of the snapshot paths alone has nothing to say of it.
  for (const path of ['good', 'bad', 'live'] as const) {
    if (path === 'live' && !measured('live')) continue;
    const [small, large] = [of(settings.smallMb, path), of(settings.largeMb, path)];
    const ratio = small.runs > 0 && large.runs > 0 ? large.median / small.median : undefined;
    aims.push(
      aim(
        `${path} path, median window at ${settings.largeMb} MB / at ${settings.smallMb} MB`,
        ratio,
        settings.ratioLimit,
        'x',
      ),
    );
  }
  const badLimit = settings.fenceBoundMs + settings.badMarginMs;
  const sizes = [...new Set(windows.filter((w) => w.path === 'bad').map((w) => w.sizeMb))].sort((a, b) => a - b);
  for (const sizeMb of sizes.length > 0 ? sizes : [settings.largeMb]) {
    const bad = of(sizeMb, 'bad');
    aims.push(aim(`bad path (live source) at ${sizeMb} MB, median window`, defined(bad, 'median'), badLimit, 'ms'));
    aims.push(aim(`bad path (live source) at ${sizeMb} MB, maximum window`, defined(bad, 'max'), badLimit, 'ms'));
  }
  const liveSizes = [...new Set(windows.filter((w) => w.path === 'live').map((w) => w.sizeMb))].sort((a, b) => a - b);
  for (const sizeMb of liveSizes) {
    const live = of(sizeMb, 'live');
    aims.push(aim(`live path at ${sizeMb} MB, median window`, defined(live, 'median'), settings.liveMedianMs, 'ms'));
    aims.push(aim(`live path at ${sizeMb} MB, maximum window`, defined(live, 'max'), settings.liveMaxMs, 'ms'));
  }
  return aims;
}

/** Issue 31: the kube-level window's median at most the etcd-level window's median plus this. */
export const KUBE_MARGIN_MS = 2_000;

export interface MeasuredWindows {
  readonly sizeMb: number;
  readonly path: MigrationPathName;
  readonly etcdMs: number;
  readonly kubeMs: number;
}

/** Per size and path measured: the kube-level median window against the etcd-level median plus `KUBE_MARGIN_MS`. */
export function kubeAims(windows: readonly MeasuredWindows[]): Aim[] {
  const cells = [...new Set(windows.map((w) => `${w.sizeMb}|${w.path}`))];
  return cells.map((cell) => {
    const runs = windows.filter((w) => `${w.sizeMb}|${w.path}` === cell);
    const { sizeMb, path } = runs[0]!;
    const etcd = median(runs.map((w) => w.etcdMs));
    return aim(
      `${path} path at ${sizeMb} MB, kube-level median window (aim: the etcd-level median ${Math.round(etcd).toLocaleString('en-US')} ms + ${KUBE_MARGIN_MS / 1_000} s)`,
      median(runs.map((w) => w.kubeMs)),
      etcd + KUBE_MARGIN_MS,
      'ms',
    );
  });
}

/** `1,234 ms`, `1.27x`. */
export function formatAim(a: Aim): string {
  const show = (v: number) => (a.unit === 'ms' ? `${Math.round(v).toLocaleString('en-US')} ms` : `${v.toFixed(2)}x`);
  const verdict = a.met === undefined ? 'not measured in this run' : a.met ? 'met' : 'not met';
  return `${a.label}: ${a.value === undefined ? '-' : show(a.value)} (aim at most ${show(a.limit)}): ${verdict}`;
}
