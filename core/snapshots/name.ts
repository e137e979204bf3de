import { SnapshotNameError } from './errors.js';

/**
 * Snapshot object names compatible with etcd-backup-restore's v2 layout:
 * `<technicalID>/v2/<Kind>-<%08d startRevision>-<%08d lastRevision>-<unix seconds>[compression][.final]`.
 * A real backup bucket written by etcd-backup-restore can be read by gardenless and the other way round.
 */

export type SnapshotKind = 'Full' | 'Incr';

/** The compression suffixes etcd-backup-restore writes (gzip, lzw, zlib); '' means uncompressed. */
export const COMPRESSION_SUFFIXES = ['', '.gz', '.Z', '.zlib'] as const;
export type CompressionSuffix = (typeof COMPRESSION_SUFFIXES)[number];

export const FINAL_SUFFIX = '.final';
export const BACKUP_FORMAT_VERSION = 'v2';

export interface Snapshot {
  /** The folder of one etcd in the bucket: the shoot's technical ID (`shoot--<project>--<name>`). */
  readonly technicalID: string;
  readonly kind: SnapshotKind;
  /** A full snapshot starts at 0, as etcd-backup-restore writes it; a delta at the previous snapshot's last revision + 1. */
  readonly startRevision: number;
  readonly lastRevision: number;
  /** Unix seconds. */
  readonly createdOn: number;
  readonly compressionSuffix: CompressionSuffix;
  /** Taken by a fenced sidecar that lost ownership: nothing was written after it. */
  readonly final: boolean;
  /** The object name below `<technicalID>/v2/`. */
  readonly name: string;
  /** The full object key. */
  readonly key: string;
}

export type SnapshotFields = Omit<Snapshot, 'name' | 'key'>;

const NAME = /^(Full|Incr)-(\d{1,16})-(\d{1,16})-(\d{1,16})((?:\.[A-Za-z0-9]+)*)$/;

function pad8(n: number): string {
  return String(n).padStart(8, '0');
}

function checkRevision(value: number, field: string, key: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new SnapshotNameError(`${field} must be a non-negative integer, got ${value}`, key);
  }
}

/** The object name for a snapshot, exactly as etcd-backup-restore's `GenerateSnapshotName` spells it. */
export function formatSnapshotName(s: Omit<SnapshotFields, 'technicalID'>): string {
  checkRevision(s.startRevision, 'startRevision', '');
  checkRevision(s.lastRevision, 'lastRevision', '');
  checkRevision(s.createdOn, 'createdOn', '');
  if (s.startRevision > s.lastRevision) {
    throw new SnapshotNameError(`startRevision ${s.startRevision} is after lastRevision ${s.lastRevision}`, '');
  }
  if (!COMPRESSION_SUFFIXES.includes(s.compressionSuffix)) {
    throw new SnapshotNameError(`unknown compression suffix "${s.compressionSuffix}"`, '');
  }
  return `${s.kind}-${pad8(s.startRevision)}-${pad8(s.lastRevision)}-${s.createdOn}${s.compressionSuffix}${s.final ? FINAL_SUFFIX : ''}`;
}

/** The folder all snapshots of one etcd live in, with the trailing slash (a listing prefix). */
export function snapshotPrefix(technicalID: string): string {
  if (technicalID.length === 0 || technicalID.startsWith('/') || technicalID.endsWith('/')) {
    throw new SnapshotNameError(
      `technicalID must be a non-empty path without leading or trailing "/", got "${technicalID}"`,
      technicalID,
    );
  }
  return `${technicalID}/${BACKUP_FORMAT_VERSION}/`;
}

/** Builds a snapshot (name and key included) from its fields. */
export function makeSnapshot(fields: SnapshotFields): Snapshot {
  const name = formatSnapshotName(fields);
  return { ...fields, name, key: `${snapshotPrefix(fields.technicalID)}${name}` };
}

/**
 * Parses a bare object name (no folder). The technical ID of the result is empty: use
 * `parseSnapshotKey` for full keys.
 */
export function parseSnapshotName(name: string, key: string = name): Omit<SnapshotFields, 'technicalID'> {
  const m = NAME.exec(name);
  if (!m) {
    throw new SnapshotNameError(
      `"${name}" is not a snapshot name <Full|Incr>-<startRevision>-<lastRevision>-<unix seconds>[.gz|.Z|.zlib][.final]`,
      key,
    );
  }
  const [, kind, start, last, created, suffixes = ''] = m;
  const startRevision = Number(start);
  const lastRevision = Number(last);
  const createdOn = Number(created);
  for (const [value, field] of [
    [startRevision, 'startRevision'],
    [lastRevision, 'lastRevision'],
    [createdOn, 'createdOn'],
  ] as const) {
    checkRevision(value, field, key);
  }
  if (startRevision > lastRevision) {
    throw new SnapshotNameError(`"${name}": startRevision ${startRevision} is after lastRevision ${lastRevision}`, key);
  }
  // At most one compression suffix, then at most one ".final", in that order (etcd-backup-restore's order).
  let rest = suffixes;
  let final = false;
  if (rest.endsWith(FINAL_SUFFIX)) {
    final = true;
    rest = rest.slice(0, -FINAL_SUFFIX.length);
  }
  const compressionSuffix = COMPRESSION_SUFFIXES.find((c) => c === rest);
  if (compressionSuffix === undefined) {
    throw new SnapshotNameError(
      `"${name}": unknown suffix "${rest}" (expected .gz, .Z or .zlib, then optionally .final)`,
      key,
    );
  }
  return { kind: kind as SnapshotKind, startRevision, lastRevision, createdOn, compressionSuffix, final };
}

/**
 * Parses a full object key `<technicalID>/v2/<name>`. Chunk objects (`.../v2/<name>/<part>`, left
 * by providers that upload in chunks) and v1 layouts are not snapshots and are rejected.
 */
export function parseSnapshotKey(key: string): Snapshot {
  const marker = `/${BACKUP_FORMAT_VERSION}/`;
  const at = key.lastIndexOf(marker);
  if (at <= 0) {
    throw new SnapshotNameError(`"${key}" is not below a "<technicalID>${marker}" folder`, key);
  }
  const technicalID = key.slice(0, at);
  const name = key.slice(at + marker.length);
  if (name.includes('/')) {
    throw new SnapshotNameError(`"${key}" is a chunk or nested object, not a snapshot`, key);
  }
  return { technicalID, ...parseSnapshotName(name, key), name, key };
}

/** Like `parseSnapshotKey`, but returns undefined for keys that are not snapshots (listings hold other objects too). */
export function tryParseSnapshotKey(key: string): Snapshot | undefined {
  try {
    return parseSnapshotKey(key);
  } catch (error) {
    if (error instanceof SnapshotNameError) return undefined;
    throw error;
  }
}

/**
 * Revision order: by last revision; at the same last revision a non-final before a final one (a final
 * snapshot ends the history, whatever its kind: a fenced source whose store already held its last
 * revision takes a final delta of that revision, after the full snapshot of it), then a delta before a
 * full snapshot (the full one supersedes it), then by creation time and key so the order is total.
 */
export function compareSnapshots(a: Snapshot, b: Snapshot): number {
  return (
    a.lastRevision - b.lastRevision ||
    Number(a.final) - Number(b.final) ||
    kindRank(a) - kindRank(b) ||
    a.createdOn - b.createdOn ||
    (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  );
}

function kindRank(s: Snapshot): number {
  return s.kind === 'Full' ? 1 : 0;
}
