import { compareSnapshots, type Snapshot } from './name.js';

/**
 * Latest-snapshot lookups in one pass over a listing, without sorting: a seed bucket holds thousands of
 * snapshots per etcd (a delta every 20 s), and the copy polls the source listing while it waits.
 * Keys cannot be compared as strings: revisions outgrow their eight-digit padding and kinds interleave.
 */
function latestWhere<S extends Snapshot>(snapshots: Iterable<S>, keep: (s: S) => boolean): S | undefined {
  let best: S | undefined;
  for (const s of snapshots) {
    if (keep(s) && (best === undefined || compareSnapshots(s, best) > 0)) best = s;
  }
  return best;
}

/** The snapshot with the highest revision, full or delta. */
export function latestSnapshot<S extends Snapshot>(snapshots: Iterable<S>): S | undefined {
  return latestWhere(snapshots, () => true);
}

/** The full snapshot with the highest last revision: where a restore starts. */
export function latestFullSnapshot<S extends Snapshot>(snapshots: Iterable<S>): S | undefined {
  return latestWhere(snapshots, (s) => s.kind === 'Full');
}

/**
 * The latest final snapshot: the one a fenced sidecar takes after losing ownership (a final delta of
 * what the store lacked, or a final full snapshot where a delta cannot close the history). Its presence
 * tells the copy that nothing was acknowledged after it.
 */
export function latestFinalSnapshot<S extends Snapshot>(snapshots: Iterable<S>): S | undefined {
  return latestWhere(snapshots, (s) => s.final);
}

/**
 * The final snapshot that ends the current history, if there is one: the latest snapshot, if it is
 * final (a delta or a full snapshot), provided nothing was stored after it and it was not created
 * before `notBefore` (unix seconds).
 * A bucket keeps the final snapshot of every earlier migration away from its seed, and a migration to
 * this seed copies the old source's final snapshot in; a copy waiting for a new final must not take
 * such an old one for it. Revisions do not tell them apart (a restored etcd that took no write since
 * snapshots the same revision again), so a final is stale when any snapshot was stored after it: by the
 * store's clock where the listing has it (`storedAt`), else by creation time. A restored sidecar takes
 * a full snapshot before it serves, so every seed that hosted the shoot since stored one.
 */
export function currentFinalSnapshot<S extends Snapshot & { readonly storedAt?: number }>(
  snapshots: Iterable<S>,
  options: { notBefore?: number } = {},
): S | undefined {
  const all = [...snapshots];
  const latest = latestSnapshot(all);
  if (latest === undefined || !latest.final) return undefined;
  if (options.notBefore !== undefined && latest.createdOn < options.notBefore) return undefined;
  if (all.some((s) => storedAfter(s, latest))) return undefined;
  return latest;
}

/** Whether `s` was stored after `final`: by the store's clock when both carry it, else by the seeds' creation times. */
function storedAfter(
  s: Snapshot & { readonly storedAt?: number },
  final: Snapshot & { readonly storedAt?: number },
): boolean {
  if (s.storedAt !== undefined && final.storedAt !== undefined) return s.storedAt > final.storedAt;
  return s.createdOn > final.createdOn;
}
