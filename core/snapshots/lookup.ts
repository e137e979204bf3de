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
 * The latest final full snapshot: the one a fenced sidecar takes after losing ownership. Its presence
 * tells the copy that nothing was acknowledged after it.
 */
export function latestFinalSnapshot<S extends Snapshot>(snapshots: Iterable<S>): S | undefined {
  return latestWhere(snapshots, (s) => s.kind === 'Full' && s.final);
}

/**
 * The final snapshot that ends the current history, if there is one: the latest final full snapshot,
 * provided nothing was snapshotted after it and it was not created before `notBefore` (unix seconds).
 * A bucket keeps the final snapshot of every earlier migration away from its seed; a shoot that came
 * back has newer snapshots after that old one, and the copy waiting for a new final must not take the
 * old one for it. Pass the owner change time (minus clock skew) as `notBefore` for the same reason.
 */
export function currentFinalSnapshot<S extends Snapshot>(snapshots: Iterable<S>, options: { notBefore?: number } = {}): S | undefined {
  const latest = latestSnapshot(snapshots);
  if (latest === undefined || latest.kind !== 'Full' || !latest.final) return undefined;
  if (options.notBefore !== undefined && latest.createdOn < options.notBefore) return undefined;
  return latest;
}
