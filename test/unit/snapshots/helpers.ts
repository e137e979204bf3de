import {
  makeSnapshot,
  type Snapshot,
  type SnapshotFields,
  type StoredSnapshot,
} from '../../../core/snapshots/index.js';

export const TECHNICAL_ID = 'shoot--dev--api1';

/** A snapshot with defaults: `full(0, 100)`, `incr(101, 120)`. */
export function snap(fields: Partial<SnapshotFields> & Pick<SnapshotFields, 'kind' | 'lastRevision'>): Snapshot {
  return makeSnapshot({
    technicalID: TECHNICAL_ID,
    startRevision: 0,
    createdOn: 1_700_000_000 + fields.lastRevision,
    compressionSuffix: '',
    final: false,
    ...fields,
  });
}

export function full(lastRevision: number, more: Partial<SnapshotFields> = {}): Snapshot {
  return snap({ kind: 'Full', startRevision: 0, lastRevision, ...more });
}

export function incr(startRevision: number, lastRevision: number, more: Partial<SnapshotFields> = {}): Snapshot {
  return snap({ kind: 'Incr', startRevision, lastRevision, ...more });
}

/** As a store lists it: size from the revisions, checksum from the key. */
export function stored(s: Snapshot, more: Partial<StoredSnapshot> = {}): StoredSnapshot {
  return { ...s, size: 1000 + s.lastRevision, checksum: `sha256:${s.key}`, ...more };
}
