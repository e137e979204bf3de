import type { RestorePlan, SnapshotStore, StoredSnapshot } from '../../core/snapshots/index.js';
import { decodeDelta, type DeltaHeader } from './delta-format.js';
import { RestoreDigestError } from './errors.js';
import { digestAfterTouched, scanKeySpace, type DigestAt } from './key-space.js';

/**
 * The fidelity check of a restore (docs/design.md section 4, "Fidelity"): the restored etcd's key-space
 * digest at its revision, compared with the digest the source's last snapshot names at that revision.
 */
export interface Fidelity {
  readonly revision: number;
  /** The restored etcd's digest at `revision`. */
  readonly digest: string;
  /** The digest the source's snapshot `against` names at that revision; absent when it names none (`unchecked` says why). */
  readonly expected?: string;
  readonly against?: string;
  readonly unchecked?: string;
  /** The digests differ and the operator accepted it (a migration resumed with the override). */
  readonly overridden?: boolean;
}

/** The last delta of a plan, as the check needs it: its key and header. */
export interface NamedDigest {
  readonly key: string;
  readonly header: DeltaHeader;
}

/** The header of the plan's last delta (one GET), or undefined for a plan of a full snapshot alone. */
export async function lastDeltaOf(
  store: SnapshotStore,
  plan: RestorePlan<StoredSnapshot>,
): Promise<NamedDigest | undefined> {
  const last = plan.deltas.at(-1);
  if (last === undefined) return undefined;
  return { key: last.key, header: decodeDelta(await store.get(last.key), last.key).header };
}

/**
 * Computes the restored etcd's digest at `revision` (from `base` and the keys touched since where given:
 * the cost of those keys; else one pass over the key space at that revision) and compares it with what
 * `named` says. A difference found from `base` is confirmed by a pass before it counts, so that only the
 * data, never the bookkeeping of this process, can refuse a restore. Throws `RestoreDigestError` on a
 * difference unless `acceptMismatch`.
 */
export async function checkFidelity(input: {
  endpoint: string;
  revision: number;
  named: NamedDigest | undefined;
  base?: { from: DigestAt; touched: Iterable<string> } | undefined;
  serializable?: boolean;
  acceptMismatch?: boolean;
}): Promise<Fidelity> {
  const scan = async () =>
    (
      await scanKeySpace(input.endpoint, {
        revision: input.revision,
        ...(input.serializable ? { serializable: true } : {}),
      })
    ).digest;
  let digest =
    input.base === undefined
      ? await scan()
      : (
          await digestAfterTouched(input.endpoint, {
            from: input.base.from,
            keys: input.base.touched,
            to: input.revision,
          })
        ).digest;
  const { named } = input;
  const unchecked =
    named === undefined
      ? 'the restore ends with a full snapshot, which etcd checked against its own hash'
      : named.header.lastRevision !== input.revision
        ? `${named.key} ends at revision ${named.header.lastRevision}, etcd at ${input.revision}`
        : named.header.digest === undefined
          ? `${named.key} names no digest (${named.header.format === 'gardenless-delta/v1' ? 'format v1' : 'its source did not know it yet'})`
          : undefined;
  if (unchecked !== undefined || named === undefined || named.header.digest === undefined)
    return { revision: input.revision, digest, ...(unchecked === undefined ? {} : { unchecked }) };
  const expected = named.header.digest;
  if (digest !== expected && input.base !== undefined) digest = await scan();
  const result = { revision: input.revision, digest, expected, against: named.key };
  if (digest === expected) return result;
  if (input.acceptMismatch) return { ...result, overridden: true };
  throw new RestoreDigestError(
    `the restored key space at revision ${input.revision} has digest ${digest}, the source's ${named.key} names ${expected}: a snapshot lost or changed a write; not serving it`,
    { revision: input.revision, expected, actual: digest, snapshot: named.key },
  );
}
