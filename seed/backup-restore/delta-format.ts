import { gunzipSync, gzipSync } from 'node:zlib';
import { DeltaFormatError } from './errors.js';

/**
 * The content of a delta (`Incr-…`) snapshot: the watch events since the previous snapshot, as JSON lines.
 * The first line is a header naming the format and the revisions; each further line is one event.
 * Keys and values are base64, since etcd keys and values are bytes.
 *
 * Version 2 (written since leases travel, docs/design.md section 4 "Fidelity") adds what a replay needs
 * to hand the destination the same key space, not only the same values: the lease of every put, the
 * table of leases live at the delta's end (ID and granted TTL: grants, keep-alives and revocations make
 * no revision, so no event carries them), and the key-space digest at its last revision. Version 1
 * (no leases, no digest) is still read: no backup in a bucket becomes unreadable.
 */

export const DELTA_FORMAT = 'gardenless-delta/v2';
export const DELTA_FORMAT_V1 = 'gardenless-delta/v1';
export type DeltaFormat = typeof DELTA_FORMAT | typeof DELTA_FORMAT_V1;

export interface DeltaEvent {
  readonly type: 'put' | 'delete';
  /** base64 */
  readonly key: string;
  /** base64; only for puts. */
  readonly value?: string;
  /** The revision etcd assigned to the write (mod_revision). Events of one transaction share it. */
  readonly revision: number;
  /** The put's lease ID (etcd's int64, decimal); absent without a lease, and in version 1. */
  readonly lease?: string;
}

/**
 * A lease of the delta's table: its ID (decimal int64) and the TTL it was granted (s). `gone`: a put of the
 * delta names it, but it was no longer live on the source at the delta's end (revoked or expired, its
 * keys' deletes in this delta or a later one): a replay grants it for the put and revokes it once empty.
 */
export interface DeltaLease {
  readonly id: string;
  readonly ttl: number;
  readonly gone?: true;
}

export interface DeltaHeader {
  readonly format: DeltaFormat;
  readonly startRevision: number;
  readonly lastRevision: number;
  readonly events: number;
  /**
   * Every lease live on the source when the delta was cut, and the leases its puts name that were gone
   * by then (`gone`; with a minimal TTL where it was revoked before its TTL could be read); undefined in
   * version 1: unknown.
   */
  readonly leases?: readonly DeltaLease[];
  /** The key-space digest at `lastRevision` (`core/snapshots/key-space-digest.ts`); absent where the source did not know it yet, and in version 1. */
  readonly digest?: string;
}

export interface Delta {
  readonly header: DeltaHeader;
  readonly events: readonly DeltaEvent[];
}

export function encodeDelta(input: {
  startRevision: number;
  lastRevision: number;
  events: readonly DeltaEvent[];
  leases: readonly DeltaLease[];
  digest?: string | undefined;
  gzip: boolean;
}): Uint8Array {
  const header: DeltaHeader = {
    format: DELTA_FORMAT,
    startRevision: input.startRevision,
    lastRevision: input.lastRevision,
    events: input.events.length,
    leases: input.leases,
    ...(input.digest === undefined ? {} : { digest: input.digest }),
  };
  const lines = [JSON.stringify(header), ...input.events.map((e) => JSON.stringify(e))];
  const text = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
  return input.gzip ? gzipSync(text, { level: 1 }) : text;
}

/** Parses a delta; `key` names the object in errors. Gzip is recognised by its magic bytes, not the name. */
export function decodeDelta(bytes: Uint8Array, key: string): Delta {
  let text: string;
  try {
    const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    text = (raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw).toString('utf8');
  } catch (error) {
    throw new DeltaFormatError(`delta ${key} is not readable gzip`, key, { cause: error });
  }
  const lines = text.split('\n').filter((l) => l.length > 0);
  let header: DeltaHeader;
  let events: DeltaEvent[];
  try {
    header = JSON.parse(lines[0] ?? 'null') as DeltaHeader;
    events = lines.slice(1).map((l) => JSON.parse(l) as DeltaEvent);
  } catch (error) {
    throw new DeltaFormatError(`delta ${key} is not JSON lines`, key, { cause: error });
  }
  if (header?.format !== DELTA_FORMAT && header?.format !== DELTA_FORMAT_V1)
    throw new DeltaFormatError(`delta ${key} is not in format ${DELTA_FORMAT} nor ${DELTA_FORMAT_V1}`, key);
  if (header.format === DELTA_FORMAT) assertVersion2(header, key);
  if (events.length !== header.events)
    throw new DeltaFormatError(
      `delta ${key} announces ${header.events} events but holds ${events.length} (truncated?)`,
      key,
    );
  let previous = 0;
  for (const e of events) {
    if (
      (e.type !== 'put' && e.type !== 'delete') ||
      typeof e.key !== 'string' ||
      !Number.isSafeInteger(e.revision) ||
      (e.lease !== undefined && (header.format === DELTA_FORMAT_V1 || !isLeaseId(e.lease)))
    ) {
      throw new DeltaFormatError(`delta ${key} holds a malformed event ${JSON.stringify(e).slice(0, 200)}`, key);
    }
    if (e.revision < previous || e.revision < header.startRevision || e.revision > header.lastRevision) {
      throw new DeltaFormatError(
        `delta ${key}: event revision ${e.revision} out of order or outside ${header.startRevision}..${header.lastRevision}`,
        key,
      );
    }
    previous = e.revision;
  }
  return { header, events };
}

/** The header fields of version 2, checked: a lease table, and a digest when there is one. */
function assertVersion2(header: DeltaHeader, key: string): void {
  const leases = header.leases;
  if (
    !Array.isArray(leases) ||
    !leases.every(
      (l: DeltaLease) =>
        isLeaseId(l?.id) && Number.isSafeInteger(l.ttl) && l.ttl > 0 && (l.gone === undefined || l.gone === true),
    )
  )
    throw new DeltaFormatError(`delta ${key} holds a malformed lease table`, key);
  if (header.digest !== undefined && !/^[0-9a-f]{64}$/.test(header.digest))
    throw new DeltaFormatError(`delta ${key} holds a malformed digest ${JSON.stringify(header.digest)}`, key);
}

/** etcd's lease IDs are int64, written in decimal; 0 means no lease and is never written. */
function isLeaseId(id: unknown): id is string {
  if (typeof id !== 'string' || !/^-?[1-9][0-9]{0,18}$/.test(id)) return false;
  const n = BigInt(id);
  return n >= -(1n << 63n) && n < 1n << 63n;
}

/** One etcd transaction to replay: every event of one revision. */
export interface RevisionGroup {
  readonly revision: number;
  readonly events: readonly DeltaEvent[];
}

/** Groups events (in revision order) by revision, so a replayed transaction lands on one revision as the original did. */
export function groupByRevision(events: readonly DeltaEvent[]): RevisionGroup[] {
  const groups: { revision: number; events: DeltaEvent[] }[] = [];
  for (const e of events) {
    const last = groups.at(-1);
    if (last !== undefined && last.revision === e.revision) last.events.push(e);
    else groups.push({ revision: e.revision, events: [e] });
  }
  return groups;
}
