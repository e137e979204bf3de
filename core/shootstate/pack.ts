import { sha256Hex, type BlobStore } from './blob-store.js';
import { ShootStateTooLargeError } from './errors.js';
import type { ShootStateKey, ShootStateStore } from './store.js';
import type { BlobRef, PackedShootState, ShootState, StoredState } from './types.js';

/** docs/design.md section 1: states larger than this go to the state bucket. */
export const BLOB_THRESHOLD_BYTES = 100 * 1024;
/**
 * The inline states of one document together stay below this, the largest moving to the bucket first:
 * a packed ShootState then fits a DynamoDB item (400 KB), a Step Functions payload and an SQS message
 * (256 KiB each) with room for the envelope, so it can travel in commands and task outputs as it is.
 */
export const INLINE_BUDGET_BYTES = 160 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The bytes a state is measured, hashed and stored as: its JSON, UTF-8. */
export function stateBytes(state: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(state));
}

/** Content-addressed, so that a retried save writes the same object and equal states share one. */
export function blobKey(shoot: ShootStateKey, sha256: string): string {
  return `shootstate/${shoot.project}/${shoot.name}/${sha256}`;
}

export function isBlobRef(state: StoredState): state is { ref: BlobRef } {
  return 'ref' in state;
}

export interface PackOptions {
  state: ShootState;
  blobs: BlobStore;
  thresholdBytes?: number;
  inlineBudgetBytes?: number;
}

/**
 * The ShootState as persisted: states above the threshold (and then the largest ones, until the inline
 * total fits the budget) written to the blob store and replaced by their reference.
 */
export async function packShootState(options: PackOptions): Promise<PackedShootState> {
  const threshold = options.thresholdBytes ?? BLOB_THRESHOLD_BYTES;
  const budget = options.inlineBudgetBytes ?? INLINE_BUDGET_BYTES;
  const { project, name } = options.state.shoot;
  const encoded = options.state.extensions.map((e) => (e.state === undefined ? undefined : stateBytes(e.state)));
  const offload = new Set<number>();
  encoded.forEach((bytes, i) => {
    if (bytes !== undefined && bytes.byteLength > threshold) offload.add(i);
  });
  let inline = encoded.reduce(
    (sum, bytes, i) => sum + (bytes === undefined || offload.has(i) ? 0 : bytes.byteLength),
    0,
  );
  const bySize = encoded
    .map((bytes, i) => ({ i, size: bytes?.byteLength ?? 0 }))
    .filter(({ i, size }) => size > 0 && !offload.has(i))
    .sort((a, b) => b.size - a.size || a.i - b.i);
  for (const { i, size } of bySize) {
    if (inline <= budget) break;
    offload.add(i);
    inline -= size;
  }
  const extensions = await Promise.all(
    options.state.extensions.map(async (entry, i) => {
      const bytes = encoded[i];
      if (bytes === undefined) return { ...entry, state: undefined };
      if (!offload.has(i)) return { ...entry, state: { inline: entry.state } };
      const ref = await options.blobs.put(blobKey({ project, name }, sha256Hex(bytes)), bytes);
      return { ...entry, state: { ref } };
    }),
  );
  return { ...options.state, extensions: extensions.map(dropUndefinedState) };
}

export interface UnpackOptions {
  state: PackedShootState;
  blobs: BlobStore;
}

/** The ShootState with every referenced state read back (and verified against its sha256). */
export async function unpackShootState(options: UnpackOptions): Promise<ShootState> {
  const extensions = await Promise.all(
    options.state.extensions.map(async (entry) => {
      if (entry.state === undefined) return { ...entry, state: undefined };
      if (!isBlobRef(entry.state)) return { ...entry, state: entry.state.inline };
      const bytes = await options.blobs.get(entry.state.ref);
      return { ...entry, state: JSON.parse(decoder.decode(bytes)) as unknown };
    }),
  );
  return { ...options.state, extensions: extensions.map(dropUndefinedState) };
}

function dropUndefinedState<T extends { state?: unknown }>(entry: T): T {
  if (entry.state !== undefined) return entry;
  const { state: _none, ...rest } = entry;
  return rest as T;
}

/** The size of a packed document as the stores keep it (its JSON). */
export function packedSize(state: PackedShootState): number {
  return stateBytes(state).byteLength;
}

/** DynamoDB's item limit (400 KB) minus room for keys and attributes. */
export const MAX_PACKED_BYTES = 380 * 1024;

export function assertPackedFits(state: PackedShootState, limit = MAX_PACKED_BYTES): void {
  const size = packedSize(state);
  if (size > limit) {
    throw new ShootStateTooLargeError(
      `ShootState of ${state.shoot.project}/${state.shoot.name} is ${size} bytes packed, more than ${limit}: too many extensions or resources to keep in one item`,
      size,
    );
  }
}

/** Packs and saves; returns the new version and the document as stored. */
export async function persistShootState(
  options: PackOptions & { store: ShootStateStore; expectedVersion?: number },
): Promise<{ version: number; packed: PackedShootState }> {
  const packed = await packShootState(options);
  assertPackedFits(packed);
  const { project, name } = options.state.shoot;
  const version = await options.store.save({
    project,
    name,
    state: packed,
    ...(options.expectedVersion === undefined ? {} : { expectedVersion: options.expectedVersion }),
  });
  return { version, packed };
}

/** Loads and unpacks; undefined when none is stored. */
export async function loadShootState(
  options: ShootStateKey & { store: ShootStateStore; blobs: BlobStore },
): Promise<{ state: ShootState; version: number } | undefined> {
  const stored = await options.store.load({ project: options.project, name: options.name });
  if (stored === undefined) return undefined;
  return { state: await unpackShootState({ state: stored.state, blobs: options.blobs }), version: stored.version };
}
