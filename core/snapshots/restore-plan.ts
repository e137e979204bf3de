import { NoFullSnapshotError, RestorePlanGapError, RestorePlanIncompleteError } from './errors.js';
import { latestFullSnapshot, latestSnapshot } from './lookup.js';
import { compareSnapshots, type Snapshot } from './name.js';

export interface RestorePlan<S extends Snapshot = Snapshot> {
  readonly full: S;
  /** Deltas to apply after the full snapshot, in revision order, covering every revision without a gap. */
  readonly deltas: readonly S[];
  /** The revision etcd must report after the restore (verified by the restorer). */
  readonly lastRevision: number;
  /**
   * Whether the plan ends with a final snapshot (a final full snapshot alone, or a final delta last):
   * nothing was acknowledged after it. A final snapshot followed by anything is an old one.
   */
  readonly final: boolean;
}

export interface PlanRestoreOptions {
  /** Fails with `RestorePlanIncompleteError` when the plan ends before this revision. */
  readonly expectedLastRevision?: number;
  /** For error messages only. */
  readonly technicalID?: string;
}

/**
 * Latest full snapshot plus every later delta, in revision order.
 *
 * - Deltas that end at or before the revision already covered are left out: a delta older than the
 *   full snapshot, or one a chosen delta already covers, adds nothing and would replay history.
 * - A delta may overlap what is covered (etcd-backup-restore's first delta after a full snapshot often
 *   does); the restorer skips events at or below the current revision, as etcd-backup-restore does.
 * - A delta that starts after `covered + 1` leaves revisions no snapshot holds: `RestorePlanGapError`.
 *   Silently restoring up to the gap would lose acknowledged writes.
 * - A final delta that is the store's latest snapshot is kept even when it adds nothing (a fenced source
 *   whose store already held its last revision takes a final delta of that revision again): it is the
 *   mark that nothing was acknowledged after it, and the copy carries it with the plan.
 */
export function planRestore<S extends Snapshot>(
  snapshots: Iterable<S>,
  options: PlanRestoreOptions = {},
): RestorePlan<S> {
  const all = [...snapshots];
  const full = latestFullSnapshot(all);
  if (full === undefined) {
    const where = options.technicalID === undefined ? '' : ` for ${options.technicalID}`;
    throw new NoFullSnapshotError(
      `no full snapshot to restore from${where} (${all.length} snapshots, none full)`,
      options.technicalID,
    );
  }
  // By start revision (longest first on a tie), so a delta nested in an earlier one is skipped, not
  // mistaken for a gap; the chosen deltas then rise in both start and last revision.
  const later = all
    .filter((s) => s.kind === 'Incr' && s.lastRevision > full.lastRevision)
    .sort((a, b) => a.startRevision - b.startRevision || b.lastRevision - a.lastRevision || compareSnapshots(a, b));
  const latest = latestSnapshot(all);
  const closing = latest !== undefined && latest.kind === 'Incr' && latest.final ? latest : undefined;
  const deltas: S[] = [];
  let covered = full.lastRevision;
  for (const delta of later) {
    if (delta.lastRevision <= covered) continue;
    if (delta.startRevision > covered + 1) {
      throw new RestorePlanGapError(
        `revisions ${covered + 1}..${delta.startRevision - 1} are in no snapshot: ${deltas.at(-1)?.key ?? full.key} ends at ${covered}, the next delta ${delta.key} starts at ${delta.startRevision}`,
        {
          afterRevision: covered,
          nextStartRevision: delta.startRevision,
          missingFrom: covered + 1,
          missingTo: delta.startRevision - 1,
        },
      );
    }
    deltas.push(delta);
    covered = delta.lastRevision;
  }
  // The closing final delta re-covers revisions the plan already holds (the restorer skips its events).
  if (
    closing !== undefined &&
    closing.lastRevision === covered &&
    closing.startRevision <= covered &&
    !deltas.includes(closing)
  )
    deltas.push(closing);
  if (options.expectedLastRevision !== undefined && covered < options.expectedLastRevision) {
    throw new RestorePlanIncompleteError(
      `snapshots end at revision ${covered}, expected at least ${options.expectedLastRevision}`,
      { expected: options.expectedLastRevision, available: covered },
    );
  }
  return { full, deltas, lastRevision: covered, final: (deltas.at(-1) ?? full).final };
}

/** Every snapshot of the plan, in the order a restorer applies them. */
export function restorePlanSnapshots<S extends Snapshot>(plan: RestorePlan<S>): S[] {
  return [plan.full, ...plan.deltas];
}
