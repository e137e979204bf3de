import { gunzipSync, gzipSync } from 'node:zlib';
import { DeltaFormatError } from './errors.js';

/**
 * The content of a delta (`Incr-…`) snapshot: the watch events since the previous snapshot, as JSON lines.
 * The first line is a header naming the format and the revisions; each further line is one event.
 * Keys and values are base64, since etcd keys and values are bytes.
 */

export const DELTA_FORMAT = 'gardenless-delta/v1';

export interface DeltaEvent {
  readonly type: 'put' | 'delete';
  /** base64 */
  readonly key: string;
  /** base64; only for puts. */
  readonly value?: string;
  /** The revision etcd assigned to the write (mod_revision). Events of one transaction share it. */
  readonly revision: number;
}

export interface DeltaHeader {
  readonly format: typeof DELTA_FORMAT;
  readonly startRevision: number;
  readonly lastRevision: number;
  readonly events: number;
}

export interface Delta {
  readonly header: DeltaHeader;
  readonly events: readonly DeltaEvent[];
}

export function encodeDelta(input: {
  startRevision: number;
  lastRevision: number;
  events: readonly DeltaEvent[];
  gzip: boolean;
}): Uint8Array {
  const header: DeltaHeader = {
    format: DELTA_FORMAT,
    startRevision: input.startRevision,
    lastRevision: input.lastRevision,
    events: input.events.length,
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
  if (header?.format !== DELTA_FORMAT) throw new DeltaFormatError(`delta ${key} is not in format ${DELTA_FORMAT}`, key);
  if (events.length !== header.events)
    throw new DeltaFormatError(
      `delta ${key} announces ${header.events} events but holds ${events.length} (truncated?)`,
      key,
    );
  let previous = 0;
  for (const e of events) {
    if ((e.type !== 'put' && e.type !== 'delete') || typeof e.key !== 'string' || !Number.isSafeInteger(e.revision)) {
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
