import type { SidecarSettings } from '../model/seed.js';
import { FenceBoundError } from '../ownership/errors.js';
import { fenceBound, waitForFinalTimeout } from '../ownership/fence.js';
import { ownershipTimings, type OwnershipTimings } from '../ownership/timings.js';

export type { SidecarSettings };

/**
 * How long the copy of a migration waits for the source's final snapshot before it proceeds with the latest
 * one (docs/design.md section 4, "Copy"; the argument is written there). Pure: the migration's begin-copy step
 * feeds it the owner change, the source's lease and what the source's last heartbeat said its sidecars run
 * with, and passes the answer to copy-snapshots.
 *
 * Two conditions, each necessary, so the later of the two (a max):
 * - the floor, `ownerChangedAt + fenceBound`: by then a source that lost ownership has fenced itself, so no
 *   copy that is not final activates before it (what makes S3 and S4 safe; never shortened by anything);
 * - the loss wait, `anchor + fenceBound + backupLagLimit + guardReaction`: a sum, because the three happen one
 *   after the other. A source that can still deliver without coming back fences at the latest `fenceBound`
 *   after the anchor, and only then can its final snapshot start to upload; an upload may take up to the
 *   limit plus the guard's reaction before the sidecar's own guard counts the store as failing (the S3/S4
 *   case, whose loss that same sum bounds). Past it, no source that is not coming back can acknowledge a
 *   write the bucket lacks beyond the stated bound, and waiting longer buys only the return of a source that
 *   was cut off, at the price of the shoot's recovery.
 * The anchor is the owner change, or the loss of the source's lease when that came first: a seed whose agent
 * went silent together with its sidecars (dead, or cut off from everything) was cut no later than its lease
 * ran out, so its sidecars have fenced (`unknown`) and stalled (the guard) counting from then.
 * The fence bound is computed from each timing's larger value of the deployment's statement and the source's
 * report (a per-field max): the stack's timings are the operator's word for the seeds' worst case, the report
 * a reading of one moment; the larger is safe under both. The delta interval is not summed: the limit
 * already exceeds it (a healthy sidecar's lag reaches one interval plus an upload and stays below the limit).
 *
 * A source that reported nothing (an agent older than this report, or the `kubernetes` runtime) cannot be
 * bounded: its copy waits the fixed wait from the copy's start (10 minutes by default), as before. An
 * operator's explicit wait (per migration, or per seed's evacuation settings) counts from the owner change
 * and only ever lengthens the wait.
 */

/**
 * What the garden allows the write guard from its limit passing until etcd refuses writes: the watch's
 * delivery of the write to the sidecar, its timer (a one-shot timer, a 100 ms tick as fallback) and one raft
 * write for the alarm. Measured 4 to 20 ms (bench runs of the scenarios); ten times the fallback tick.
 */
export const DEFAULT_GUARD_REACTION_MS = 1_000;

/** The settings of several sidecars of one shoot (the members of a cluster): each field's largest value. */
export function slowestSettings(all: readonly SidecarSettings[]): SidecarSettings | undefined {
  if (all.length === 0) return undefined;
  const keys = Object.keys(all[0]!) as (keyof SidecarSettings)[];
  return Object.fromEntries(keys.map((k) => [k, Math.max(...all.map((s) => s[k]))])) as unknown as SidecarSettings;
}

export interface FinalWaitInput {
  /** Epoch ms at which the migration first changed the owner record (`firstOwnerChange`). */
  readonly ownerChangedAt: number;
  /** Epoch ms at which the copy started: the fixed wait counts from it. */
  readonly copyStartedAt: number;
  /** The deployment's ownership timings (the stack's statement of what the seeds run). */
  readonly timings?: Partial<OwnershipTimings> | undefined;
  /** The wait for a source that reported nothing, ms; default 10 min, never shorter than the deployment's fence bound. */
  readonly fixedWaitMs?: number | undefined;
  /** What the source's last heartbeat said this shoot's sidecars run with; undefined: nothing reported. */
  readonly reported?: SidecarSettings | undefined;
  /** Epoch ms at which the source's lease ran out, when it has. */
  readonly leaseLostAt?: number | undefined;
  /** An operator's longer wait, ms from the owner change. */
  readonly explicitWaitMs?: number | undefined;
  /** Default `DEFAULT_GUARD_REACTION_MS`. */
  readonly guardReactionMs?: number | undefined;
}

/**
 * Which rule decided: the source's bounds from the owner change, or from its lease's loss; the fixed wait (the
 * source reported nothing); or the operator's explicit wait, where it is the longest.
 */
export type FinalWaitBasis = 'bounds' | 'bounds-since-lease-loss' | 'fixed' | 'explicit';

export interface FinalWait {
  /** Epoch ms from which the copy proceeds without the final snapshot. */
  readonly proceedAt: number;
  /** Epoch ms before which nothing that is not final activates: the owner change plus the fence bound. */
  readonly floorAt: number;
  readonly fenceBoundMs: number;
  /** The timings the fence bound was computed from: the copy's gate uses the same. */
  readonly timings: OwnershipTimings;
  /** The S3/S4 loss bound of this source (its limit plus the guard's reaction), when it reported its settings. */
  readonly lossBoundMs: number | null;
  readonly basis: FinalWaitBasis;
  /** One line for the migration's record. */
  readonly reason: string;
}

/** The deployment's timings raised, field by field, to what the source reported. */
export function sourceTimings(
  deployment: Partial<OwnershipTimings> | undefined,
  reported: SidecarSettings | undefined,
): OwnershipTimings {
  const base = ownershipTimings(deployment);
  if (!reported) return base;
  return {
    ...base,
    ownerCheckInterval: Math.max(base.ownerCheckInterval, reported.ownerCheckInterval),
    checkTimeout: Math.max(base.checkTimeout, reported.checkTimeout),
    unknownGrace: Math.max(base.unknownGrace, reported.unknownGrace),
    dnsCacheTTL: Math.max(base.dnsCacheTTL, reported.dnsCacheTTL),
  };
}

export function finalWait(input: FinalWaitInput): FinalWait {
  const oc = input.ownerChangedAt;
  for (const [field, v] of [
    ['ownerChangedAt', oc],
    ['copyStartedAt', input.copyStartedAt],
    ['leaseLostAt', input.leaseLostAt],
    ['explicitWaitMs', input.explicitWaitMs],
    ['guardReactionMs', input.guardReactionMs],
  ] as const) {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0))
      throw new FenceBoundError(`${field} must be a non-negative number of milliseconds, got ${v}`, { field });
  }
  const timings = sourceTimings(input.timings, input.reported);
  const bound = fenceBound(timings);
  const floorAt = oc + bound;
  const s = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  const at = (ms: number) => new Date(ms).toISOString();

  let decided: Pick<FinalWait, 'proceedAt' | 'basis' | 'reason' | 'lossBoundMs'>;
  if (input.reported) {
    const lossBound = input.reported.backupLagLimit + (input.guardReactionMs ?? DEFAULT_GUARD_REACTION_MS);
    const fromLease = input.leaseLostAt !== undefined && input.leaseLostAt < oc;
    const anchor = fromLease ? input.leaseLostAt! : oc;
    const proceedAt = Math.max(floorAt, anchor + bound + lossBound);
    const since = fromLease ? `the source's lease ran out (${at(anchor)})` : `the owner change (${at(oc)})`;
    decided = {
      proceedAt,
      lossBoundMs: lossBound,
      basis: fromLease ? 'bounds-since-lease-loss' : 'bounds',
      reason:
        `the source's fence bound ${s(bound)} and backup lag limit plus the guard's reaction ${s(lossBound)} since ${since}` +
        (proceedAt === floorAt && anchor + bound + lossBound < floorAt
          ? `, no sooner than the fence bound since the owner change`
          : ''),
    };
  } else {
    const fixed = waitForFinalTimeout({ timings: input.timings, wait: input.fixedWaitMs }).waitForFinalTimeout;
    decided = {
      proceedAt: Math.max(floorAt, input.copyStartedAt + fixed),
      lossBoundMs: null,
      basis: 'fixed',
      reason: `the fixed wait of ${s(fixed)} from the copy's start: the source's last heartbeat reported no settings of its sidecars to bound the wait by`,
    };
  }
  if (input.explicitWaitMs !== undefined && oc + input.explicitWaitMs > decided.proceedAt) {
    decided = {
      proceedAt: oc + input.explicitWaitMs,
      lossBoundMs: decided.lossBoundMs,
      basis: 'explicit',
      reason: `the explicit wait of ${s(input.explicitWaitMs)} from the owner change (longer than ${decided.reason})`,
    };
  }
  return { ...decided, floorAt, fenceBoundMs: bound, timings };
}
