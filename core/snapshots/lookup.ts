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
