import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import { Etcd3 } from 'etcd3';
import { backupLag, makeSnapshot, resumePoint, type SnapshotStore } from '../../core/snapshots/index.js';
import { DeltaBuffer, type PendingDelta } from './delta-buffer.js';
import { decodeDelta, encodeDelta, type DeltaLease } from './delta-format.js';
import { readHistory, type ReadDelta } from './history.js';
import { KeySpaceTracker, type DigestAt } from './key-space.js';
import { LeaseTtls } from './leases.js';
import { watchAll, type WatchAll } from './watch-all.js';
import { watchEvents } from './watch-events.js';
import { HistoryUnavailableError, SnapshotTakeError } from './errors.js';
import { saveSnapshot, snapshotStatus } from './etcdctl.js';

export const DEFAULT_FULL_SNAPSHOT_INTERVAL_MS = 60 * 60_000;
export const DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS = 20_000;

export type Compression = 'gzip' | 'none';

export interface SnapshotterOptions {
  readonly store: SnapshotStore;
  /** The etcd's folder in the bucket. */
  readonly technicalID: string;
  /** The client URL the watch and periodic snapshots use: the public one while serving. */
  readonly endpoint: () => string;
  /** Where full snapshots are written before the upload. */
  readonly stagingDir: string;
  /** Default 60 min. */
  readonly fullSnapshotInterval?: number;
  /** Default 20 s. */
  readonly deltaSnapshotInterval?: number;
  /** Default gzip (`.gz` objects). */
  readonly compression?: Compression;
  readonly etcdctlBinary?: string;
  /** Epoch ms, for the `<unix seconds>` of object names. */
  readonly now?: () => number;
  /**
   * One of several members' sidecars may snapshot at a time (the etcd leader's). Called before every
   * upload except a final one: false drops what was about to be uploaded and stops the snapshotter, so a
   * deposed leader adds nothing to the store after its successor took over.
   */
  readonly uploadGuard?: () => Promise<boolean>;
  /**
   * `store`: a start without a baseline continues where the store's snapshots end (the last revision of
   * the latest full snapshot and its deltas), as a new leader's sidecar takes over from the old one's;
   * a full snapshot only when the store has none or a gap. Default `full`: a fresh start begins with one.
   */
  readonly baseline?: 'full' | 'store';
  readonly onEvent?: (event: SnapshotterEvent) => void;
}

export interface TakenSnapshot {
  readonly key: string;
  readonly kind: 'Full' | 'Incr';
  readonly startRevision: number;
  readonly lastRevision: number;
  readonly final: boolean;
  readonly size: number;
  readonly ms: number;
}

/** A delta ready to upload: its events, the lease table at its end and the key-space digest at its last revision, if known. */
export interface DeltaContent extends PendingDelta {
  readonly leases: readonly DeltaLease[];
  readonly digest?: string | undefined;
}

/** A final delta read while etcd refused writes, to upload once it is gone (`Snapshotter.prepareFinal`). */
export interface PreparedFinal {
  readonly delta: DeltaContent;
  /** The last revision the store's snapshots held when the delta was read: it starts right after. */
  readonly storeEnd: number;
}

export type SnapshotterEvent =
  | { readonly type: 'snapshot'; readonly snapshot: TakenSnapshot }
  | { readonly type: 'snapshot-failed'; readonly kind: 'Full' | 'Incr'; readonly error: unknown }
  | { readonly type: 'resumed'; readonly lastRevision: number; readonly fullKey: string }
  | { readonly type: 'upload-refused'; readonly kind: 'Full' | 'Incr' }
  | { readonly type: 'watch-error'; readonly error: unknown }
  | { readonly type: 'digest-scan-failed'; readonly error: unknown };

export interface SnapshotterStatus {
  readonly running: boolean;
  /** The last revision the store holds (from this process's snapshots), or null before the first. */
  readonly lastRevision: number | null;
  readonly lastSnapshot: TakenSnapshot | null;
  readonly lastFullSnapshot: TakenSnapshot | null;
  readonly pendingEvents: number;
  /** The age of the oldest acknowledged write not yet in the store (ms, 0 when there is none): the write guard's backup lag. */
  readonly backupLagMs: number;
  readonly lastError: string | null;
  /** The key-space digest as far as the watch delivered it, or null while unknown (a scan runs, or failed). */
  readonly digest: DigestAt | null;
}

/**
 * Full snapshots (etcdctl snapshot save) every `fullSnapshotInterval`, delta snapshots (the watch events
 * since the last snapshot) every `deltaSnapshotInterval`, uploaded under etcd-backup-restore's names.
 * Snapshots run one at a time. The revision reached survives `stop`/`start`: after a fence that was
 * undone, the watch resumes from the last snapshot's revision, so the store never has a gap.
 */
export class Snapshotter {
  private readonly options: SnapshotterOptions;
  private buffer: DeltaBuffer | undefined;
  private client: Etcd3 | undefined;
  private watch: WatchAll | undefined;
  private timers: NodeJS.Timeout[] = [];
  private queue: Promise<unknown> = Promise.resolve();
  private deltaQueued = false;
  private needFull = false;
  /** A full snapshot to take in the background once the snapshotter runs (after a restore began the history with a marker). */
  private fullSoon = false;
  private runningFlag = false;
  private lastSnapshot: TakenSnapshot | null = null;
  private lastFull: TakenSnapshot | null = null;
  private lastError: string | null = null;
  /** The key-space digest of etcd, kept from the watch (`prev_kv`); its deltas name it at their last revision. */
  private readonly tracker = new KeySpaceTracker();
  /** The digest at the last revision the store holds, where this process knows it. */
  private storeDigest: DigestAt | undefined;
  private readonly ttls: LeaseTtls;

  constructor(options: SnapshotterOptions) {
    for (const field of ['fullSnapshotInterval', 'deltaSnapshotInterval'] as const) {
      const v = options[field];
      if (v !== undefined && !(Number.isFinite(v) && v > 0))
        throw new RangeError(`${field} must be a positive number of ms, got ${v}`);
    }
    this.options = options;
    this.ttls = new LeaseTtls(() => this.options.endpoint());
  }

  get running(): boolean {
    return this.runningFlag;
  }

  status(): SnapshotterStatus {
    return {
      running: this.runningFlag,
      lastRevision: this.buffer?.lastRevision ?? null,
      lastSnapshot: this.lastSnapshot,
      lastFullSnapshot: this.lastFull,
      pendingEvents: this.buffer?.pending ?? 0,
      backupLagMs: backupLag(Date.now(), this.oldestPendingAt),
      lastError: this.lastError,
      digest: this.tracker.known ?? null,
    };
  }

  /**
   * Starts the schedule. Without a baseline (a fresh process) the first thing is a full snapshot, so the
   * deltas that follow always have something to apply to.
   */
  async start(): Promise<void> {
    if (this.runningFlag) return;
    this.runningFlag = true;
    try {
      if (this.buffer === undefined && this.options.baseline === 'store') await this.resumeFromStore();
      if (this.buffer === undefined || this.needFull) await this.takeFull();
      await this.openWatch();
    } catch (error) {
      // Not running: the next start (the watchdog retries at each check) begins again from the top.
      this.runningFlag = false;
      this.closeWatch();
      throw error;
    }
    // Stopped while it was starting (a fence, a deposed leader): no timers.
    if (!this.runningFlag) {
      this.closeWatch();
      return;
    }
    if (this.fullSoon) {
      this.fullSoon = false;
      void this.takeFull().catch(() => {
        this.fullSoon = true;
      });
    }
    const full = this.options.fullSnapshotInterval ?? DEFAULT_FULL_SNAPSHOT_INTERVAL_MS;
    const delta = this.options.deltaSnapshotInterval ?? DEFAULT_DELTA_SNAPSHOT_INTERVAL_MS;
    this.timers = [
      setInterval(() => void this.takeFull().catch(() => undefined), full),
      setInterval(() => {
        // One delta waiting is enough: it takes whatever arrived by the time it runs.
        if (this.deltaQueued) return;
        this.deltaQueued = true;
        void this.takeDelta().catch(() => undefined);
      }, delta),
    ];
  }

  /**
   * Stops timers and the watch at once, without waiting for a snapshot in flight: the fence must not wait
   * for an upload. Events received but not yet uploaded are dropped; the watch resumes from the last
   * uploaded revision on the next start.
   */
  stop(options: { forget?: boolean } = {}): void {
    if (options.forget) this.buffer = undefined;
    if (!this.runningFlag) return;
    this.runningFlag = false;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.closeWatch();
    // The dropped events are acknowledged writes the store lacks: their age goes on counting (the write guard).
    if (this.buffer !== undefined) this.buffer = new DeltaBuffer(this.buffer.lastRevision, this.buffer.carry());
  }

  /**
   * When the oldest acknowledged write that no uploaded snapshot holds reached the sidecar (epoch ms),
   * undefined when the store holds everything the watch delivered. A snapshotter that does not run (a
   * fenced sidecar, a member that does not lead) reports what it dropped, if anything.
   */
  get oldestPendingAt(): number | undefined {
    return this.buffer?.oldestPendingAt;
  }

  /**
   * Queues a delta now unless one is already waiting: the write guard retries a failed upload sooner than
   * the next interval, so that writes resume within a retry of the store coming back.
   */
  retryDelta(): void {
    if (!this.runningFlag || this.deltaQueued) return;
    this.deltaQueued = true;
    void this.takeDelta().catch(() => undefined);
  }

  /**
   * Sets the baseline to where the store's snapshots end, as the previous snapshotter (another member's
   * sidecar) left them; a store without a full snapshot, or with a gap, asks for a full snapshot instead.
   */
  private async resumeFromStore(): Promise<void> {
    const point = resumePoint(await this.options.store.list(this.options.technicalID));
    if (point.kind === 'full') return;
    this.buffer = new DeltaBuffer(point.lastRevision);
    this.needFull = false;
    this.storeDigest = await this.digestOfStoreEnd(point.lastRevision);
    this.options.onEvent?.({ type: 'resumed', lastRevision: point.lastRevision, fullKey: point.fullKey });
  }

  /** False (and stopped, baseline forgotten) when another member's sidecar snapshots now. */
  private async mayUpload(kind: 'Full' | 'Incr'): Promise<boolean> {
    if (this.options.uploadGuard === undefined || (await this.options.uploadGuard().catch(() => false))) return true;
    this.options.onEvent?.({ type: 'upload-refused', kind });
    this.stop({ forget: true });
    return false;
  }

  /** Waits until the snapshots queued so far are done (for shutdown and tests). */
  async idle(): Promise<void> {
    await this.queue;
  }

  /**
   * One full snapshot from `endpoint` (default: the current one), uploaded; `final` marks the one a
   * fenced sidecar takes after losing ownership. Queued behind snapshots in flight. `unguarded` skips the
   * upload guard: a cluster's restore coordinator takes the restored cluster's first full snapshot before
   * any member's sidecar snapshots.
   */
  takeFull(options: { final?: boolean; endpoint?: string; unguarded?: boolean } = {}): Promise<TakenSnapshot> {
    return this.serialize(() =>
      this.full(options.final ?? false, options.endpoint ?? this.options.endpoint(), options.unguarded ?? false),
    );
  }

  /**
   * The final snapshot of a fenced etcd (no client can write to `endpoint` any more): a delta of what
   * the store lacks, from where its snapshots end to etcd's current revision, so that it costs the last
   * seconds' writes and not the database's size; when the store already holds that revision, a delta of
   * it again, which marks the end. A full snapshot only where the data says a delta cannot end the
   * history: the store holds nothing restorable (no full snapshot, a gap), or etcd no longer has the
   * events since (compacted). The store's listing decides, not this process's memory: a restarted or
   * newly leading sidecar knows no baseline, and the store is what the destination restores from.
   */
  takeFinal(options: { endpoint: string }): Promise<TakenSnapshot> {
    return this.serialize(async () => {
      const read = await this.readFinalDelta(options.endpoint);
      if ('prepared' in read) return this.uploadDelta(read.prepared.delta, true);
      if (read.watchError !== undefined) this.options.onEvent?.({ type: 'watch-error', error: read.watchError });
      return this.full(true, options.endpoint, true);
    });
  }

  /**
   * What `takeFinal` would upload, read from an etcd that refuses writes but still serves reads (the quick
   * fence's alarm), so that it can be uploaded once etcd is gone without waiting for etcd to start again:
   * the final delta and where the store's snapshots ended when it was read. Undefined where the final
   * snapshot must be a full one (the store holds nothing restorable, or etcd compacted the events):
   * `takeFinal` then takes it.
   */
  prepareFinal(options: { endpoint: string }): Promise<PreparedFinal | undefined> {
    return this.serialize(async () => {
      const read = await this.readFinalDelta(options.endpoint);
      return 'prepared' in read ? read.prepared : undefined;
    });
  }

  /**
   * The final delta from where the store's snapshots end to etcd's current revision, or that the final
   * snapshot must be a full one (no restorable chain in the store, or etcd no longer has the events:
   * `watchError`). Throws where etcd is behind the store or cannot be read.
   */
  private async readFinalDelta(
    endpoint: string,
  ): Promise<{ prepared: PreparedFinal } | { full: true; watchError?: unknown }> {
    const point = resumePoint(await this.options.store.list(this.options.technicalID));
    if (point.kind === 'full') return { full: true };
    let delta: ReadDelta;
    try {
      const digestFrom = await this.digestOfStoreEnd(point.lastRevision);
      delta = await readHistory({
        endpoint,
        fromRevision: point.lastRevision + 1,
        ...(digestFrom === undefined ? {} : { digestFrom }),
      });
    } catch (error) {
      if (!(error instanceof HistoryUnavailableError))
        throw this.failed('Incr', error, `final delta from ${endpoint} failed`);
      return { full: true, watchError: error };
    }
    if (delta.lastRevision < point.lastRevision) {
      throw this.failed(
        'Incr',
        new Error(`etcd is at revision ${delta.lastRevision}, the store holds up to ${point.lastRevision}`),
        `final delta from ${endpoint} refused`,
      );
    }
    const leases = await this.ttls.table(delta.events, endpoint).catch((error: unknown) => {
      throw this.failed('Incr', error, `the lease table of the final delta from ${endpoint} failed`);
    });
    return { prepared: { delta: { ...delta, leases }, storeEnd: point.lastRevision } };
  }

  /**
   * Uploads a prepared final delta, if the store still ends where it did when the delta was read; else
   * undefined (nothing uploaded: `takeFinal` reads it again).
   */
  takePreparedFinal(prepared: PreparedFinal): Promise<TakenSnapshot | undefined> {
    return this.serialize(async () => {
      const point = resumePoint(await this.options.store.list(this.options.technicalID));
      if (point.kind !== 'resume' || point.lastRevision !== prepared.storeEnd) return undefined;
      return this.uploadDelta(prepared.delta, true);
    });
  }

  /** One delta snapshot of the events since the last snapshot; undefined when there were none. */
  takeDelta(): Promise<TakenSnapshot | undefined> {
    return this.serialize(async () => {
      this.deltaQueued = false;
      const buffer = this.buffer;
      if (buffer === undefined || !this.runningFlag) return undefined;
      const cut = buffer.cut();
      if (cut.kind === 'gap' || this.needFull) {
        // The watch lost events (compaction, a cancelled watch): a delta would leave a hole in the store.
        // Checked before an empty cut: a watch etcd cancelled delivers nothing ever again.
        const taken = await this.full(false, this.options.endpoint(), false);
        await this.reopenWatch();
        return taken;
      }
      if (cut.kind === 'empty') return undefined;
      // Read now, before anything is awaited: the tracker has applied exactly the events the cut holds.
      const digest = this.tracker.at(cut.delta.lastRevision);
      if (!(await this.mayUpload('Incr'))) return undefined;
      const endpoint = this.options.endpoint();
      const leases = await this.ttls.table(cut.delta.events, endpoint).catch((error: unknown) => {
        throw this.failed('Incr', error, `the lease table from ${endpoint} failed`);
      });
      return this.uploadDelta({ ...cut.delta, leases, digest }, false);
    });
  }

  private async uploadDelta(delta: DeltaContent, final: boolean): Promise<TakenSnapshot> {
    const started = performance.now();
    const gzip = (this.options.compression ?? 'gzip') === 'gzip';
    const snapshot = makeSnapshot({
      technicalID: this.options.technicalID,
      kind: 'Incr',
      startRevision: delta.startRevision,
      lastRevision: delta.lastRevision,
      createdOn: this.unixSeconds(),
      compressionSuffix: gzip ? '.gz' : '',
      final,
    });
    try {
      const head = await this.options.store.put(snapshot.key, encodeDelta({ ...delta, gzip }));
      // The current buffer, not the captured one: a stop/start in between replaced it, and revisions are global.
      this.buffer?.snapshotted(delta.lastRevision);
      this.storeDigest =
        delta.digest === undefined ? undefined : { revision: delta.lastRevision, digest: delta.digest };
      return this.record({
        key: snapshot.key,
        kind: 'Incr',
        startRevision: delta.startRevision,
        lastRevision: delta.lastRevision,
        final,
        size: head.size,
        ms: performance.now() - started,
      });
    } catch (error) {
      throw this.failed('Incr', error, `upload of ${final ? 'final ' : ''}delta ${snapshot.key} failed`);
    }
  }

  /**
   * Begins this etcd's history in the store after a restore to `revision`, before it serves. When the
   * store's snapshots end exactly there (the copy it was restored from), a delta of that revision again
   * (a few hundred bytes) marks that the history goes on here, so that a final snapshot copied in from the
   * source no longer counts as the end of it (`currentFinalSnapshot`), and the deltas continue from it;
   * the full snapshot of the restored data follows in the background once the snapshotter runs. A full
   * snapshot first, as before, where the store and etcd disagree (etcd holds more than the snapshots'
   * names say, or no chain ends there) or etcd no longer has the events of that revision. This keeps a
   * full snapshot of the whole database out of the migration's write-unavailability window.
   */
  beginAfterRestore(options: { endpoint: string; revision: number; digest?: DigestAt }): Promise<TakenSnapshot> {
    return this.serialize(async () => {
      // The restore's verified digest: the deltas go on from it without a scan of the restored data.
      if (options.digest?.revision === options.revision) this.tracker.reset(options.digest);
      const point = resumePoint(await this.options.store.list(this.options.technicalID));
      if (point.kind === 'resume' && point.lastRevision === options.revision) {
        try {
          const delta = await readHistory({
            endpoint: options.endpoint,
            fromRevision: options.revision,
            ...(options.digest === undefined ? {} : { digestFrom: options.digest }),
          });
          if (delta.lastRevision === options.revision) {
            this.buffer = new DeltaBuffer(options.revision);
            this.fullSoon = true;
            const leases = await this.ttls.table(delta.events, options.endpoint);
            return await this.uploadDelta({ ...delta, leases }, false);
          }
        } catch (error) {
          if (!(error instanceof HistoryUnavailableError)) throw error;
          this.options.onEvent?.({ type: 'watch-error', error });
        }
      }
      return this.full(false, options.endpoint, false);
    });
  }

  /** The key-space digest a restore verified: the watch goes on from it without a scan of the data. */
  assumeDigest(known: DigestAt): void {
    if (!this.runningFlag) this.tracker.reset(known);
  }

  /** Sets the baseline without a snapshot: the data dir was just restored to `revision` from this store. */
  adopt(revision: number): void {
    this.buffer = new DeltaBuffer(revision);
  }

  /**
   * The key-space digest at `revision`, the store's last: this process's own where its last upload named
   * it, else the one the store's last delta names, if that delta ends there (a sidecar that restarted, or
   * a cluster member that takes over the snapshots); undefined where neither knows it.
   */
  private async digestOfStoreEnd(revision: number): Promise<DigestAt | undefined> {
    if (this.storeDigest?.revision === revision) return this.storeDigest;
    const last = [...(await this.options.store.list(this.options.technicalID))]
      .filter((s) => s.kind === 'Incr' && s.lastRevision === revision)
      .at(-1);
    if (last === undefined) return undefined;
    try {
      const { header } = decodeDelta(await this.options.store.get(last.key), last.key);
      return header.digest === undefined ? undefined : { revision, digest: header.digest };
    } catch {
      // Unreadable or of another format: the final delta then names no digest, and the restore says so.
      return undefined;
    }
  }

  private async full(final: boolean, endpoint: string, unguarded: boolean): Promise<TakenSnapshot> {
    const started = performance.now();
    await mkdir(this.options.stagingDir, { recursive: true });
    const file = join(this.options.stagingDir, `full-${process.pid}-${Date.now()}.db`);
    try {
      await saveSnapshot({
        endpoint,
        file,
        ...(this.options.etcdctlBinary ? { binary: this.options.etcdctlBinary } : {}),
      });
      // Status reports the highest key revision; an empty etcd holds none but is at revision 1 (its first write is 2).
      const revision = Math.max(1, (await snapshotStatus({ file })).revision);
      const gzip = (this.options.compression ?? 'gzip') === 'gzip';
      const snapshot = makeSnapshot({
        technicalID: this.options.technicalID,
        kind: 'Full',
        startRevision: 0,
        lastRevision: revision,
        createdOn: this.unixSeconds(),
        compressionSuffix: gzip ? '.gz' : '',
        final,
      });
      if (!final && !unguarded && !(await this.mayUpload('Full')))
        throw new SnapshotTakeError('another member snapshots this cluster now', 'Full');
      const body = gzip ? createReadStream(file).pipe(createGzip({ level: 1 })) : createReadStream(file);
      const head = await this.options.store.put(snapshot.key, body);
      if (this.buffer === undefined) this.buffer = new DeltaBuffer(revision);
      else this.buffer.snapshotted(revision);
      this.needFull = false;
      const digest = this.tracker.at(revision);
      this.storeDigest = digest === undefined ? undefined : { revision, digest };
      const taken = {
        key: snapshot.key,
        kind: 'Full' as const,
        startRevision: 0,
        lastRevision: revision,
        final,
        size: head.size,
        ms: performance.now() - started,
      };
      this.lastFull = taken;
      return this.record(taken);
    } catch (error) {
      throw this.failed('Full', error, `${final ? 'final ' : ''}full snapshot from ${endpoint} failed`);
    } finally {
      await rm(file, { force: true });
      await rm(`${file}.part`, { force: true });
    }
  }

  private async openWatch(): Promise<void> {
    const buffer = this.buffer;
    if (buffer === undefined) return;
    const endpoint = this.options.endpoint();
    const client = new Etcd3({ hosts: endpoint });
    this.client = client;
    // The digest must be known at the watch's start or later: events before it never come again.
    const known = this.tracker.known;
    if (known === undefined || known.revision < buffer.lastRevision)
      this.tracker.reset(this.storeDigest?.revision === buffer.lastRevision ? this.storeDigest : undefined);
    const watch = await watchAll(
      client,
      buffer.lastRevision + 1,
      {
        data: (res) => {
          if (this.buffer !== buffer) return;
          const events = watchEvents(res);
          buffer.add(events, Date.now());
          this.tracker.apply(res.events);
          this.ttls.learn(events);
        },
        error: (error) => {
          // A watch this snapshotter no longer runs says nothing about the one it runs.
          if (this.client !== client) return;
          // Unrecoverable for this watch (cancelled by etcd, compacted): only a full snapshot closes the hole.
          this.needFull = true;
          this.options.onEvent?.({ type: 'watch-error', error });
        },
      },
      { prevKv: true },
    );
    if (this.client !== client) {
      // Stopped while the watch was being created.
      await watch.cancel();
      return;
    }
    this.watch = watch;
    // Without a digest to go on from (a fresh start on existing data), one pass in the background; the
    // deltas cut meanwhile name none, and a restore from them says it could not check.
    if (this.tracker.known === undefined && !this.tracker.scanning)
      void this.tracker
        .scan(endpoint)
        .catch((error: unknown) => this.options.onEvent?.({ type: 'digest-scan-failed', error }));
  }

  private closeWatch(): void {
    const client = this.client;
    this.client = undefined;
    const watch = this.watch;
    this.watch = undefined;
    // Closing the client ends the watch stream; nothing to wait for.
    void watch?.cancel();
    client?.close();
  }

  private async reopenWatch(): Promise<void> {
    this.closeWatch();
    if (this.buffer !== undefined) this.buffer = new DeltaBuffer(this.buffer.lastRevision);
    if (this.runningFlag) await this.openWatch();
  }

  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private record(taken: TakenSnapshot): TakenSnapshot {
    const rounded = { ...taken, ms: Math.round(taken.ms) };
    this.lastSnapshot = rounded;
    this.lastError = null;
    this.options.onEvent?.({ type: 'snapshot', snapshot: rounded });
    return rounded;
  }

  private failed(kind: 'Full' | 'Incr', error: unknown, message: string): SnapshotTakeError {
    const wrapped = new SnapshotTakeError(
      `${message}: ${error instanceof Error ? error.message : String(error)}`,
      kind,
      { cause: error },
    );
    this.lastError = wrapped.message;
    this.options.onEvent?.({ type: 'snapshot-failed', kind, error: wrapped });
    return wrapped;
  }

  private unixSeconds(): number {
    return Math.floor((this.options.now?.() ?? Date.now()) / 1_000);
  }
}
