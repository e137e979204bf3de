import type { AcknowledgedWrite } from './writer.js';

/**
 * The scenario matrix's three assertions as pure functions over the writer's acknowledged writes and
 * the destination etcd's final content (key -> value). Each returns a report whose `summary` names the
 * keys and times involved, so that a failing scenario says what happened, not only that it failed.
 */

export type DestinationContent = ReadonlyMap<string, string>;

export interface CheckReport {
  readonly ok: boolean;
  readonly summary: string;
}

const shown = 5;
const iso = (at: number) => new Date(at).toISOString();
const describe = (w: AcknowledgedWrite) => `${w.key} (rev ${w.revision}, ${w.seed}, ${iso(w.at)})`;
const list = (writes: readonly AcknowledgedWrite[]) =>
  writes.slice(0, shown).map(describe).join(', ') + (writes.length > shown ? ` and ${writes.length - shown} more` : '');

export interface SplitBrainReport extends CheckReport {
  readonly firstDestinationAck: AcknowledgedWrite | undefined;
  /** Source acknowledgements later than the destination's first one: each is a split brain. */
  readonly sourceAcksAfter: readonly AcknowledgedWrite[];
}

/** (a) No write is acknowledged by the source after the destination acknowledged its first write. */
export function checkNoSplitBrain(acknowledged: readonly AcknowledgedWrite[]): SplitBrainReport {
  const firstDestinationAck = acknowledged
    .filter((w) => w.seed === 'destination')
    .reduce<AcknowledgedWrite | undefined>((first, w) => (first && first.at <= w.at ? first : w), undefined);
  if (!firstDestinationAck)
    return { ok: true, summary: 'the destination acknowledged no write', firstDestinationAck, sourceAcksAfter: [] };
  const sourceAcksAfter = acknowledged
    .filter((w) => w.seed === 'source' && w.at > firstDestinationAck.at)
    .sort((a, b) => a.at - b.at);
  const ok = sourceAcksAfter.length === 0;
  return {
    ok,
    firstDestinationAck,
    sourceAcksAfter,
    summary: ok
      ? `no source acknowledgement after the destination's first, ${describe(firstDestinationAck)}`
      : `split brain: the source acknowledged ${sourceAcksAfter.length} write(s) after the destination's first, ${describe(firstDestinationAck)}: ${list(sourceAcksAfter)}; last at ${iso(sourceAcksAfter.at(-1)!.at)}`,
  };
}

export interface LossReport extends CheckReport {
  /** Acknowledged writes missing from the destination or present there with another value. */
  readonly lost: readonly AcknowledgedWrite[];
  readonly checked: number;
}

function missing(acknowledged: readonly AcknowledgedWrite[], destination: DestinationContent): AcknowledgedWrite[] {
  return acknowledged.filter((w) => destination.get(w.key) !== w.value).sort((a, b) => a.at - b.at);
}

/** (b) Every acknowledged write, whichever seed acknowledged it, is in the destination with its value. */
export function checkNoAcknowledgedWriteLost(
  acknowledged: readonly AcknowledgedWrite[],
  destination: DestinationContent,
): LossReport {
  const lost = missing(acknowledged, destination);
  const ok = lost.length === 0;
  return {
    ok,
    lost,
    checked: acknowledged.length,
    summary: ok
      ? `all ${acknowledged.length} acknowledged writes are in the destination`
      : `${lost.length} of ${acknowledged.length} acknowledged writes lost: ${list(lost)}`,
  };
}

export interface BoundedLossReport extends LossReport {
  /** When the source acknowledged its last write; undefined when it acknowledged none. */
  readonly sourceLastAckAt: number | undefined;
  /** Lost writes acknowledged at or after this are within the bound. */
  readonly windowStart: number | undefined;
  /** Lost writes the bound does not allow: older source writes, and any destination write. */
  readonly outsideBound: readonly AcknowledgedWrite[];
}

export interface BoundedLossOptions {
  /** How long before the source's last acknowledgement a lost write may have been acknowledged (`scenarioLoss` of core/snapshots). */
  readonly spanMs: number;
  /**
   * The last revision the source's store held (its last uploaded snapshot): a lost write at or below it
   * was in the store, and the bound does not allow it, whenever it was acknowledged.
   */
  readonly storeLastRevision?: number;
}

/**
 * (c) Loss bounded as S3 and S4 without reconnection allow (docs/design.md section 6): every lost write
 * is a source write acknowledged after the source's last uploaded delta (above `storeLastRevision`) and
 * within `spanMs` before the source's last acknowledgement. A destination write is never allowed to be
 * lost: it was acknowledged by the etcd that ends up serving.
 */
export function checkLossBounded(
  acknowledged: readonly AcknowledgedWrite[],
  destination: DestinationContent,
  options: BoundedLossOptions,
): BoundedLossReport {
  const lost = missing(acknowledged, destination);
  const sourceLastAckAt = acknowledged
    .filter((w) => w.seed === 'source')
    .reduce<number | undefined>((last, w) => (last === undefined || w.at > last ? w.at : last), undefined);
  const windowStart = sourceLastAckAt === undefined ? undefined : sourceLastAckAt - options.spanMs;
  const inStore = (w: AcknowledgedWrite) =>
    options.storeLastRevision !== undefined && w.revision <= options.storeLastRevision;
  const outsideBound = lost.filter(
    (w) => w.seed === 'destination' || windowStart === undefined || w.at < windowStart || inStore(w),
  );
  const ok = outsideBound.length === 0;
  const window =
    windowStart === undefined ? 'no source acknowledgement' : `window ${iso(windowStart)} .. ${iso(sourceLastAckAt!)}`;
  const store =
    options.storeLastRevision === undefined ? '' : `, above the store's revision ${options.storeLastRevision}`;
  return {
    ok,
    lost,
    checked: acknowledged.length,
    sourceLastAckAt,
    windowStart,
    outsideBound,
    summary: ok
      ? `${lost.length} of ${acknowledged.length} acknowledged writes lost, all within ${options.spanMs} ms before the source's last acknowledgement${store} (${window})`
      : `${outsideBound.length} lost write(s) outside the bound of ${options.spanMs} ms${store} (${window}): ${list(outsideBound)}`,
  };
}

/** Acknowledged writes a second between two times: the writer must hold at least 50 while a seed serves. */
export function acknowledgedRate(
  acknowledged: readonly Pick<AcknowledgedWrite, 'at'>[],
  from: number,
  to: number,
): number {
  if (to <= from) return 0;
  return acknowledged.filter((w) => w.at >= from && w.at <= to).length / ((to - from) / 1_000);
}
