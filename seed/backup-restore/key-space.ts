import { Etcd3, type IKeyValue, type IWatchResponse } from 'etcd3';
import { KeySpaceDigest, type KeyEntry } from '../../core/snapshots/index.js';

/** The key-space digest of an etcd at one revision (`core/snapshots/key-space-digest.ts`). */
export interface DigestAt {
  readonly revision: number;
  readonly digest: string;
}

export function keyEntry(kv: IKeyValue): KeyEntry {
  return {
    key: kv.key,
    value: kv.value ?? Buffer.alloc(0),
    createRevision: kv.create_revision,
    modRevision: kv.mod_revision,
    version: kv.version,
    lease: kv.lease || '0',
  };
}

/** A client whose responses may hold large values: a page of the scan, a batch of the touched keys. */
export function digestClient(endpoint: string): Etcd3 {
  return new Etcd3({ hosts: endpoint, grpcOptions: { 'grpc.max_receive_message_length': 1024 * 1024 * 1024 } });
}

/** Pages of at least 16 and at most 4096 keys, aiming at a few MiB each whatever the values weigh. */
const PAGE = { first: 256, min: 16, max: 4_096, aimBytes: 4 * 1024 * 1024 };

/**
 * The digest of every key at one revision (default: the current one), read in pages at that revision, so
 * that writes during the scan change nothing. A pass over the whole database: what a restore does once
 * where it has nothing to build on, and a source sidecar does in the background where it starts without a
 * digest. `serializable`: the member's own data, without asking the leader.
 */
export async function scanKeySpace(
  endpoint: string,
  options: { revision?: number; serializable?: boolean } = {},
): Promise<DigestAt & { readonly keys: number }> {
  const client = digestClient(endpoint);
  try {
    const digest = new KeySpaceDigest();
    let revision = options.revision;
    let from: Buffer = Buffer.from([0]);
    let limit = PAGE.first;
    let keys = 0;
    for (;;) {
      const res = await client.kv.range({
        key: from,
        range_end: Buffer.from([0]),
        limit: String(limit),
        ...(revision === undefined ? {} : { revision: String(revision) }),
        ...(options.serializable ? { serializable: true } : {}),
      });
      revision ??= Number(res.header.revision);
      let bytes = 0;
      for (const kv of res.kvs) {
        digest.add(keyEntry(kv));
        bytes += kv.key.byteLength + (kv.value?.byteLength ?? 0);
      }
      keys += res.kvs.length;
      const last = res.kvs.at(-1);
      if (!res.more || last === undefined) return { revision, digest: digest.hex, keys };
      from = Buffer.concat([last.key, Buffer.from([0])]);
      if (bytes > 2 * PAGE.aimBytes) limit = Math.max(PAGE.min, Math.floor(limit / 2));
      else if (bytes < PAGE.aimBytes / 2) limit = Math.min(PAGE.max, limit * 2);
    }
  } finally {
    client.close();
  }
}

/**
 * The digest at `to` from the one at `from.revision`, where only `keys` (base64) changed in between (the
 * keys a catch-up replayed): each key's entry at `from.revision` is taken out and its entry at `to` put in,
 * read at those revisions, so that the cost is that of the keys touched, not of the database.
 */
export async function digestAfterTouched(
  endpoint: string,
  input: { from: DigestAt; to: number; keys: Iterable<string> },
): Promise<DigestAt> {
  const digest = new KeySpaceDigest(input.from.digest);
  const keys = [...new Set(input.keys)];
  if (keys.length === 0 || input.to === input.from.revision) return { revision: input.to, digest: digest.hex };
  const client = digestClient(endpoint);
  try {
    // Transactions of ranges within etcd's default of 128 operations: an etcd that serves takes no more.
    for (let i = 0; i < keys.length; i += 64) {
      const batch = keys.slice(i, i + 64);
      const read = (revision: number) =>
        client.kv.txn({
          compare: [],
          success: batch.map((k) => ({ request_range: { key: Buffer.from(k, 'base64'), revision: String(revision) } })),
        });
      const [before, after] = await Promise.all([read(input.from.revision), read(input.to)]);
      for (const r of before.responses) for (const kv of r.response_range?.kvs ?? []) digest.remove(keyEntry(kv));
      for (const r of after.responses) for (const kv of r.response_range?.kvs ?? []) digest.add(keyEntry(kv));
    }
    return { revision: input.to, digest: digest.hex };
  } finally {
    client.close();
  }
}

/**
 * The digest of a running etcd's key space, kept up to date from a watch that asks for every event's
 * previous key-value (`prev_kv`): a put takes out the key's previous entry and adds the new one, a delete
 * takes out the previous entry. Unknown until it is given a digest to start from or a scan finished;
 * events that arrive while a scan runs wait for it. An event whose previous entry etcd did not send (it
 * compacted it: the watch is about to fail anyway) makes it unknown again: a wrong digest is worse than none.
 */
export class KeySpaceTracker {
  private state: { revision: number; digest: KeySpaceDigest } | undefined;
  private queued: IWatchResponse['events'][] | undefined;
  private generation = 0;

  constructor(known?: DigestAt) {
    this.reset(known);
  }

  /** The digest at the last revision applied, or undefined while unknown. */
  get known(): DigestAt | undefined {
    return this.state === undefined ? undefined : { revision: this.state.revision, digest: this.state.digest.hex };
  }

  /** The digest at exactly `revision`, or undefined. */
  at(revision: number): string | undefined {
    return this.state?.revision === revision ? this.state.digest.hex : undefined;
  }

  get scanning(): boolean {
    return this.queued !== undefined;
  }

  /** Starts again from `known` (or unknown); a scan in flight is discarded. */
  reset(known?: DigestAt): void {
    this.generation += 1;
    this.queued = undefined;
    this.state =
      known === undefined ? undefined : { revision: known.revision, digest: new KeySpaceDigest(known.digest) };
  }

  apply(events: IWatchResponse['events']): void {
    if (this.queued !== undefined) {
      this.queued.push(events);
      return;
    }
    const state = this.state;
    if (state === undefined) return;
    // The events of one revision (a transaction) arrive in one response: all of them after `from`.
    const from = state.revision;
    for (const e of events) {
      const revision = Number(e.kv.mod_revision);
      if (revision <= from) continue;
      const previous = e.prev_kv ?? undefined;
      if (previous !== undefined) state.digest.remove(keyEntry(previous));
      else if (e.type !== 'Put' || e.kv.version !== '1') {
        this.state = undefined;
        return;
      }
      if (e.type === 'Put') state.digest.add(keyEntry(e.kv));
      state.revision = revision;
    }
  }

  /**
   * Scans the key space at its current revision and applies what the watch delivered meanwhile. Only
   * while unknown; a failed scan leaves it unknown (the caller tries again later).
   */
  async scan(endpoint: string): Promise<void> {
    if (this.state !== undefined || this.queued !== undefined) return;
    const generation = ++this.generation;
    this.queued = [];
    try {
      const scanned = await scanKeySpace(endpoint);
      if (generation !== this.generation) return;
      const queued = this.queued;
      this.queued = undefined;
      this.state = { revision: scanned.revision, digest: new KeySpaceDigest(scanned.digest) };
      for (const events of queued) this.apply(events);
    } catch (error) {
      if (generation === this.generation) this.queued = undefined;
      throw error;
    }
  }
}
