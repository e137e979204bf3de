import { createHash } from 'node:crypto';
import { SnapshotNotFoundError } from './errors.js';
import { compareSnapshots, snapshotPrefix, tryParseSnapshotKey } from './name.js';
import type { ObjectHead, SnapshotBody, SnapshotStore, StoredSnapshot } from './store.js';

/** sha256 of the content, in the form every store reports it. */
export function contentChecksum(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('base64')}`;
}

export async function readBody(body: SnapshotBody): Promise<Uint8Array> {
  if (body instanceof Uint8Array) return body;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.byteLength;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** A bucket in memory: for unit tests and for the local seed runtime. Copies bytes in and out so callers cannot alias them. */
export class InMemorySnapshotStore implements SnapshotStore {
  private readonly objects = new Map<string, { bytes: Uint8Array; head: ObjectHead; storedAt: number }>();
  private lastStoredAt = 0;

  async list(technicalID: string): Promise<StoredSnapshot[]> {
    const prefix = snapshotPrefix(technicalID);
    const out: StoredSnapshot[] = [];
    for (const [key, { head, storedAt }] of this.objects) {
      if (!key.startsWith(prefix)) continue;
      const snapshot = tryParseSnapshotKey(key);
      // Chunks, temporary uploads and foreign files share the folder; they are not snapshots.
      if (snapshot !== undefined && snapshot.technicalID === technicalID) out.push({ ...snapshot, ...head, storedAt });
    }
    return out.sort(compareSnapshots);
  }

  async get(key: string): Promise<Uint8Array> {
    return Uint8Array.from(this.object(key).bytes);
  }

  async fetch(key: string): Promise<AsyncIterable<Uint8Array>> {
    const bytes = await this.get(key);
    return (async function* chunks() {
      const size = 64 * 1024;
      for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size);
    })();
  }

  async put(key: string, body: SnapshotBody): Promise<ObjectHead> {
    const bytes = Uint8Array.from(await readBody(body));
    const head: ObjectHead = { key, size: bytes.byteLength, checksum: contentChecksum(bytes) };
    // Strictly increasing, as S3's LastModified is between writes seconds apart: the order of writes is what lookups rely on.
    this.lastStoredAt = Math.max(Date.now(), this.lastStoredAt + 1);
    this.objects.set(key, { bytes, head, storedAt: this.lastStoredAt });
    return head;
  }

  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    return this.objects.get(key)?.head;
  }

  /** Every key, for test assertions. */
  keys(): string[] {
    return [...this.objects.keys()].sort();
  }

  private object(key: string): { bytes: Uint8Array; head: ObjectHead } {
    const found = this.objects.get(key);
    if (found === undefined) throw new SnapshotNotFoundError(`no snapshot object ${key}`, key);
    return found;
  }
}
