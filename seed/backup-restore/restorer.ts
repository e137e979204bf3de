import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { planRestore, type RestorePlan, type SnapshotStore, type StoredSnapshot } from '../../core/snapshots/index.js';
import { decodeDelta } from './delta-format.js';
import { checkFidelity, type Fidelity, type NamedDigest } from './fidelity.js';
import { LeaseHold, LeaseReplay } from './leases.js';
import { RestoreRevisionError } from './errors.js';
import { restoreSnapshot } from './etcdctl.js';
import type { EtcdSupervisor } from './etcd-supervisor.js';
import { parallelDownload, type RangedObjectReader } from './ranged-download.js';
import { currentRevision, replayEvents, type ReplayTarget } from './replay.js';
import { clearWriteAlarms } from './etcd-gateway.js';

export interface RestoreOptions {
  readonly store: SnapshotStore;
  readonly technicalID: string;
  /** Its data dir is replaced; etcd is left running on the private address, restored. */
  readonly supervisor: EtcdSupervisor;
  /** Where the full snapshot is downloaded to. */
  readonly stagingDir: string;
  /** Fail unless the snapshots reach at least this revision (for example the final snapshot's). */
  readonly expectedLastRevision?: number;
  readonly etcdctlBinary?: string;
  /** Downloads large uncompressed snapshots in parallel ranges (S3). Default: one stream. */
  readonly rangedReader?: RangedObjectReader;
  /**
   * Keeps the restored etcd's leases alive while it does not serve (`LeaseHold`): started here, and left
   * running for the caller (a standby holds them until its catch-up). Default: one of the restore's own,
   * stopped when it returns.
   */
  readonly leaseHold?: LeaseHold;
  /** Serve even where the key-space digest differs from the source's (the operator's override): the result says so. */
  readonly acceptDigestMismatch?: boolean;
}

export interface RestoreResult {
  readonly fullKey: string;
  readonly deltaKeys: readonly string[];
  /** The revision etcd reports after the restore; equal to what the plan promised. */
  readonly revision: number;
  readonly final: boolean;
  readonly transactions: number;
  readonly skippedEvents: number;
  /** The key-space digest at `revision`, compared with the source's (docs/design.md section 4, "Fidelity"). */
  readonly fidelity: Fidelity;
  /** ms per phase (`check`: the fidelity check). */
  readonly timings: {
    readonly download: number;
    readonly restore: number;
    readonly start: number;
    readonly replay: number;
    readonly check: number;
    readonly total: number;
  };
}

/**
 * Restore = latest full snapshot + every later delta, in revision order (`planRestore`):
 * download the full snapshot, `etcdctl snapshot restore` it into a fresh data dir (swapped in only when
 * complete), start etcd on the private address, replay the deltas transaction by transaction (leases
 * granted before the puts that need them, and kept alive meanwhile), check that etcd ends exactly on the
 * revision the snapshots promise and that its key space is the one the source's last delta names there.
 * No client can write meanwhile: etcd is on the private address; the caller decides when to serve.
 */
export async function restoreFromStore(options: RestoreOptions): Promise<RestoreResult> {
  const started = performance.now();
  const { store, supervisor, technicalID } = options;
  const plan = planRestore(await store.list(technicalID), {
    technicalID,
    ...(options.expectedLastRevision === undefined ? {} : { expectedLastRevision: options.expectedLastRevision }),
  });
  const prepared = await restoreDataDir({ ...options, plan });
  const t2 = performance.now();
  const hold = options.leaseHold ?? new LeaseHold(() => supervisor.clientUrl('private'));
  await supervisor.ensure('private');
  hold.start();
  const target = supervisor.replayTarget();
  try {
    // A snapshot taken while the source's write guard or its fence refused writes carries that alarm:
    // without clearing it here, the replay and the destination's clients would be refused.
    await clearWriteAlarms(supervisor.clientUrl('private'));
    const t3 = performance.now();
    const replayed = await replayPlan({ target, store, plan });
    const t4 = performance.now();
    const fidelity = await checkFidelity({
      endpoint: target.endpoint,
      revision: replayed.revision,
      named: replayed.last,
      ...(options.acceptDigestMismatch ? { acceptMismatch: true } : {}),
    });
    const t5 = performance.now();
    return restoreResult(plan, replayed, fidelity, {
      download: prepared.download,
      restore: prepared.restore,
      start: ms(t3 - t2),
      replay: ms(t4 - t3),
      check: ms(t5 - t4),
      total: ms(t5 - started),
    });
  } finally {
    target.close();
    if (options.leaseHold === undefined) await hold.stop();
  }
}

/** What a restore of `plan` reports once its deltas were replayed. */
export function restoreResult(
  plan: RestorePlan<StoredSnapshot>,
  replayed: { revision: number; transactions: number; skippedEvents: number },
  fidelity: Fidelity,
  timings: RestoreResult['timings'],
): RestoreResult {
  return {
    fullKey: plan.full.key,
    deltaKeys: plan.deltas.map((d) => d.key),
    revision: replayed.revision,
    final: plan.final,
    transactions: replayed.transactions,
    skippedEvents: replayed.skippedEvents,
    fidelity,
    timings,
  };
}

/**
 * The full snapshot of `plan` into the supervisor's data dir, etcd stopped: downloaded (unless `file`
 * already holds it), restored with `etcdctl snapshot restore` into a fresh dir and swapped in only when
 * complete. A cluster member is restored with every member and the new cluster's token. ms per phase.
 */
export async function restoreDataDir(options: {
  plan: RestorePlan<StoredSnapshot>;
  store: SnapshotStore;
  supervisor: EtcdSupervisor;
  stagingDir: string;
  /** The full snapshot, downloaded already (members on one machine share one download). */
  file?: string;
  cluster?: { initialCluster: readonly { name: string; peerUrl: string }[]; token: string };
  etcdctlBinary?: string;
  rangedReader?: RangedObjectReader;
}): Promise<{ download: number; restore: number }> {
  const { supervisor } = options;
  await supervisor.stop();
  await mkdir(options.stagingDir, { recursive: true });
  const file = options.file ?? join(options.stagingDir, `restore-${process.pid}-${Date.now()}.db`);
  const fresh = `${supervisor.dataDir}.restoring`;
  try {
    const t0 = performance.now();
    if (options.file === undefined) await download(options.store, options.plan.full, file, options.rangedReader);
    const t1 = performance.now();
    await rm(fresh, { recursive: true, force: true });
    await restoreSnapshot({
      file,
      dataDir: fresh,
      name: supervisor.name,
      peerUrl: supervisor.peerUrl,
      ...(options.cluster ? { cluster: options.cluster } : {}),
      ...(options.etcdctlBinary ? { binary: options.etcdctlBinary } : {}),
    });
    await rm(supervisor.dataDir, { recursive: true, force: true });
    await rename(fresh, supervisor.dataDir);
    return { download: ms(t1 - t0), restore: ms(performance.now() - t1) };
  } finally {
    if (options.file === undefined) await rm(file, { force: true });
    await rm(fresh, { recursive: true, force: true });
  }
}

/**
 * Replays the plan's deltas into the restored etcd behind `client` and checks that it ends exactly on
 * the revision the snapshots promise (a full snapshot written by etcd-backup-restore may hold a little
 * more than its name says: then on that). Before each delta's events, the leases its table lists and its
 * puts name are granted where etcd lacks them; after the last, the leases its table no longer lists are
 * revoked where no key is left on them (`LeaseReplay`). Returns the last delta's header, for the
 * fidelity check.
 */
export async function replayPlan(input: {
  target: ReplayTarget;
  store: SnapshotStore;
  plan: RestorePlan<StoredSnapshot>;
  /**
   * The other members of a restored cluster may serve (and be written to) as soon as the replay is done:
   * then the end is checked as "at least" the promised revision, and that revision is returned.
   */
  othersMayServe?: boolean;
  /** Collects the keys (base64) of the events replayed (the catch-up's digest reads only those). */
  touched?: Set<string>;
}): Promise<{ revision: number; transactions: number; skippedEvents: number; last: NamedDigest | undefined }> {
  const { target, store, plan } = input;
  const afterFull = await currentRevision(target.client);
  if (afterFull < plan.full.lastRevision) {
    throw new RestoreRevisionError(
      `${plan.full.key} restored to revision ${afterFull}, its name promises ${plan.full.lastRevision}`,
      {
        expected: plan.full.lastRevision,
        actual: afterFull,
      },
    );
  }
  let revision = afterFull;
  let transactions = 0;
  let skippedEvents = 0;
  let last: NamedDigest | undefined;
  const leases = new LeaseReplay(() => target.endpoint);
  for (const delta of plan.deltas) {
    const { header, events } = decodeDelta(await store.get(delta.key), delta.key);
    last = { key: delta.key, header };
    const from = revision;
    await leases.grant(
      header.leases,
      events.filter((e) => e.revision > from),
    );
    const replayed = await replayEvents({
      target,
      events,
      fromRevision: revision,
      ...(input.touched ? { touched: input.touched } : {}),
    });
    revision = replayed.revision;
    transactions += replayed.transactions;
    skippedEvents += replayed.skippedEvents;
    if (revision < delta.lastRevision) {
      throw new RestoreRevisionError(
        `after ${delta.key} etcd is at revision ${revision}, the delta ends at ${delta.lastRevision}`,
        { expected: delta.lastRevision, actual: revision },
      );
    }
  }
  if (last !== undefined) await leases.revokeGone(last.header.leases);
  const expected = Math.max(plan.lastRevision, afterFull);
  const actual = await currentRevision(target.client);
  if (input.othersMayServe ? actual < expected : actual !== expected)
    throw new RestoreRevisionError(`restored etcd is at revision ${actual}, the snapshots end at ${expected}`, {
      expected,
      actual,
    });
  return { revision: input.othersMayServe ? expected : actual, transactions, skippedEvents, last };
}

const PARALLEL_DOWNLOAD_MIN_BYTES = 32 * 1024 * 1024;

/** Streams an object to a file, gunzipping `.gz` objects on the way; large uncompressed ones in parallel ranges when a reader is given. */
export async function download(
  store: SnapshotStore,
  snapshot: StoredSnapshot,
  file: string,
  rangedReader?: RangedObjectReader,
): Promise<void> {
  if (rangedReader !== undefined && snapshot.compressionSuffix === '' && snapshot.size >= PARALLEL_DOWNLOAD_MIN_BYTES) {
    return parallelDownload({ reader: rangedReader, key: snapshot.key, size: snapshot.size, file });
  }
  const body = Readable.from(await store.fetch(snapshot.key));
  if (snapshot.compressionSuffix === '.gz') await pipeline(body, createGunzip(), createWriteStream(file));
  else if (snapshot.compressionSuffix === '') await pipeline(body, createWriteStream(file));
  else
    throw new RangeError(
      `${snapshot.key}: compression ${snapshot.compressionSuffix} is not supported by this restorer (only gzip)`,
    );
}

function ms(value: number): number {
  return Math.round(value);
}
