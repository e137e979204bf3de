import { join } from 'node:path';
import { Etcd3, type IWatchResponse } from 'etcd3';
import { afterAll, describe, expect, it } from 'vitest';
import { EMPTY_KEY_SPACE_DIGEST, type SnapshotStore } from '../../core/snapshots/index.js';
import {
  decodeDelta,
  DELTA_FORMAT_V1,
  encodeDelta,
  EtcdSupervisor,
  KeySpaceTracker,
  restoreFromStore,
  RestoreDigestError,
  scanKeySpace,
  sleep,
  Snapshotter,
  type DeltaEvent,
} from '../../seed/backup-restore/index.js';
import { watchAll } from '../../seed/backup-restore/watch-all.js';
import { FAITHFUL, fidelityReport, readKeySpace, readLeases, type KeyFacts } from '../../harness/scenario/fidelity.js';
import {
  cleanup,
  etcdPorts,
  newBucket,
  ownerZone,
  readiness,
  startedEtcd,
  startSidecar,
  tempDir,
  unique,
  until,
} from './backup-restore-support.js';

/**
 * Fidelity with real etcds and the emulator's S3 (docs/design.md section 4, "Fidelity"): a restore hands
 * the destination the key space the source had at the same revision (value, create and mod revision,
 * version, lease), the leases live with their IDs and granted TTLs, the history a watch resumes on, and
 * it refuses (`RestoreDigestError`, both digests) a delta that lost an event the revisions do not show.
 */

const HOUR = 3_600;
const ME = 'seed-b-2222';
const SOURCE = 'seed-a-1111';
const intervals = {
  ownerCheckInterval: 500,
  initialRetryDelay: 200,
  deltaSnapshotInterval: 60_000,
  fullSnapshotInterval: 600_000,
};

afterAll(cleanup);

interface Source {
  readonly endpoint: string;
  readonly client: Etcd3;
  readonly snapshotter: Snapshotter;
  readonly store: SnapshotStore;
  readonly technicalID: string;
  /** Lease ID -> granted TTL, of the leases the writes below granted. */
  readonly granted: Map<string, number>;
  stop(): Promise<void>;
}

/** A source etcd with its snapshotter (the sidecar's, without the owner watchdog) writing into a new bucket. */
async function source(label: string): Promise<Source> {
  const store = await newBucket(label);
  const technicalID = unique(`shoot--dev--${label}`);
  const { dir, supervisor, endpoint, client } = await startedEtcd(`${label}-source`, 'private');
  const snapshotter = new Snapshotter({
    store,
    technicalID,
    endpoint: () => endpoint,
    stagingDir: join(dir, 'staging'),
    compression: 'none',
  });
  return {
    endpoint,
    client,
    snapshotter,
    store,
    technicalID,
    granted: new Map(),
    async stop() {
      snapshotter.stop();
      client.close();
      await supervisor.stop();
    },
  };
}

/** A delta of everything up to `revision`, once the snapshotter's watch delivered it. */
async function deltaUpTo(s: Source, revision: number) {
  await until(
    `the watch to reach revision ${revision}`,
    () => (s.snapshotter.status().digest?.revision ?? 0) >= revision,
  );
  const taken = await s.snapshotter.takeDelta();
  expect(taken?.lastRevision).toBe(revision);
  return taken!;
}

async function revisionOf(s: Source): Promise<number> {
  return (await readKeySpace(s.endpoint, { prefix: '\0' })).revision;
}

async function grant(s: Source, ttl: number): Promise<string> {
  const { ID } = await s.client.leaseClient.leaseGrant({ TTL: ttl });
  s.granted.set(String(ID), ttl);
  return String(ID);
}

async function put(s: Source, key: string, value: string, lease?: string): Promise<number> {
  const res = await s.client.kv.put({ key: Buffer.from(key), value: Buffer.from(value), ...(lease ? { lease } : {}) });
  return Number(res.header.revision);
}

/** What every restore path is tried with: leases before and after the full snapshot, one revoked, one expiring, history to carry. */
async function writeHistory(
  s: Source,
  when: 'before-full' | 'after-full',
): Promise<{ expiring: string; revoked: string }> {
  const tag = when === 'before-full' ? 'b' : 'a';
  // Keys attached to a 30-minute lease (Kubernetes Events use an hour), and one lease with no key yet.
  const long = await grant(s, 30 * 60);
  for (let i = 0; i < 5; i++) await put(s, `${tag}/leased/${i}`, `v${i}`, long);
  await grant(s, HOUR);
  // A key rewritten, deleted and created again: create_revision and version must follow.
  for (let i = 0; i < 3; i++) await put(s, `${tag}/history`, `v${i}`);
  await s.client.delete().key(`${tag}/history`);
  await put(s, `${tag}/history`, 'again');
  // One transaction of several events, two on one lease.
  const txnLease = await grant(s, 30 * 60);
  await s.client.kv.txn({
    compare: [],
    success: [
      { request_put: { key: Buffer.from(`${tag}/txn/1`), value: Buffer.from('1'), lease: txnLease } },
      { request_put: { key: Buffer.from(`${tag}/txn/2`), value: Buffer.from('2'), lease: txnLease } },
      { request_put: { key: Buffer.from(`${tag}/txn/3`), value: Buffer.from('3') } },
      { request_delete_range: { key: Buffer.from(`${tag}/history`) } },
    ],
  });
  // A lease that will be revoked and one that will expire, each with keys.
  const revoked = await grant(s, 30 * 60);
  for (let i = 0; i < 3; i++) await put(s, `${tag}/revoked/${i}`, 'r', revoked);
  const expiring = await grant(s, 3);
  for (let i = 0; i < 3; i++) await put(s, `${tag}/expiring/${i}`, 'e', expiring);
  return { expiring, revoked };
}

/** Revokes one lease and waits until the other expired on the source (its keys' deletes are one revision each). */
async function endLeases(s: Source, leases: { expiring: string; revoked: string }): Promise<void> {
  await s.client.leaseClient.leaseRevoke({ ID: leases.revoked });
  await until(
    `lease ${leases.expiring} to expire on the source`,
    async () => !(await readLeases(s.endpoint)).has(leases.expiring),
    { timeoutMs: 15_000 },
  );
}

/** The destination holds exactly the source's key space and leases (same IDs, granted TTLs, remaining within them). */
async function expectFaithful(destination: string, s: Source): Promise<void> {
  const [expected, found] = [await readKeySpace(s.endpoint), await readKeySpace(destination)];
  const [sourceLeases, leases] = [await readLeases(s.endpoint), await readLeases(destination)];
  expect(found.revision).toBe(expected.revision);
  expect(fidelityReport({ expected: expected.keys, found: found.keys, leases, grantedTtls: s.granted })).toEqual(
    FAITHFUL,
  );
  expect([...leases.keys()].sort()).toEqual([...sourceLeases.keys()].sort());
  for (const [id, facts] of sourceLeases) expect(leases.get(id)?.keys).toEqual(facts.keys);
}

/** Every event a watch from `from` delivers up to `to`, as comparable records. */
async function watchedEvents(endpoint: string, from: number, to: number): Promise<string[]> {
  const client = new Etcd3({ hosts: endpoint });
  const out: string[] = [];
  try {
    const watcher = await client.watch().prefix('').startRevision(String(from)).withPreviousKV().create();
    await new Promise<void>((resolve, reject) => {
      watcher.on('error', reject);
      watcher.on('data', (res: IWatchResponse) => {
        for (const e of res.events) {
          const facts = `${e.type} ${e.kv.key.toString()} ${e.kv.mod_revision} ${e.kv.create_revision} ${e.kv.version} ${e.kv.lease} ${e.kv.value.toString()}`;
          out.push(facts);
          if (Number(e.kv.mod_revision) >= to) resolve();
        }
      });
    });
    await watcher.cancel();
    return out;
  } finally {
    client.close();
  }
}

/**
 * The revision etcd says it compacted when a watch from `from` is created (etcd cancels it at once), or
 * undefined when the watch delivers events instead. Through etcd's gateway: the gRPC client library
 * drops `compact_revision`.
 */
async function compactedAt(endpoint: string, from: number): Promise<number | undefined> {
  const controller = new AbortController();
  const res = await fetch(`${endpoint}/v3/watch`, {
    method: 'POST',
    body: JSON.stringify({ create_request: { key: 'AA==', range_end: 'AA==', start_revision: String(from) } }),
    signal: AbortSignal.any([controller.signal, AbortSignal.timeout(5_000)]),
  });
  const reader = res.body!.getReader();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return undefined;
      text += Buffer.from(value).toString();
      const lines = text.split('\n');
      text = lines.pop() ?? '';
      for (const line of lines.filter((l) => l.trim().startsWith('{'))) {
        const { result } = JSON.parse(line) as {
          result?: { canceled?: boolean; compact_revision?: string; events?: unknown[] };
        };
        if (result?.canceled) return Number(result.compact_revision);
        if ((result?.events?.length ?? 0) > 0) return undefined;
      }
    }
  } finally {
    controller.abort();
  }
}

/** A fresh etcd to restore into (a data dir that is gone), stopped at cleanup. */
async function freshSupervisor(label: string): Promise<EtcdSupervisor> {
  const dir = tempDir(label);
  const supervisor = new EtcdSupervisor({
    dataDir: join(dir, 'data'),
    ...(await etcdPorts()),
    logFile: join(dir, 'etcd.log'),
  });
  return supervisor;
}

describe('backup-restore: what etcd held is what etcd holds', () => {
  it('the source keeps the key-space digest from its watch exactly as a pass over the data computes it, through every kind of write', async () => {
    // Prepare: a tracker fed by a watch with previous key-values, from an empty etcd.
    const { endpoint, client, supervisor } = await startedEtcd('fid-tracker', 'private');
    try {
      const tracker = new KeySpaceTracker({ revision: 1, digest: EMPTY_KEY_SPACE_DIGEST });
      const watch = await watchAll(
        client,
        2,
        { data: (res) => tracker.apply(res.events), error: () => undefined },
        { prevKv: true },
      );
      const expectKept = async () => {
        const scanned = await scanKeySpace(endpoint);
        await until(`the tracker at revision ${scanned.revision}`, () => tracker.known?.revision === scanned.revision);
        expect(tracker.known).toEqual({ revision: scanned.revision, digest: scanned.digest });
      };
      const lease = String((await client.leaseClient.leaseGrant({ TTL: 30 })).ID);
      const short = String((await client.leaseClient.leaseGrant({ TTL: 2 })).ID);
      const writes: [string, () => Promise<unknown>][] = [
        ['a put', () => client.put('a').value('1').exec()],
        ['an overwrite', () => client.put('a').value('2').exec()],
        ['a delete', () => client.delete().key('a').exec()],
        ['a put that creates the key again', () => client.put('a').value('3').exec()],
        ['a put on a lease', () => client.kv.put({ key: Buffer.from('l'), value: Buffer.from('x'), lease })],
        [
          'a transaction of puts and a delete',
          () =>
            client.kv.txn({
              compare: [],
              success: [
                { request_put: { key: Buffer.from('t1'), value: Buffer.from('1'), lease } },
                { request_put: { key: Buffer.from('t2'), value: Buffer.from('2') } },
                { request_delete_range: { key: Buffer.from('a') } },
              ],
            }),
        ],
        ['a lease revoked with its keys', () => client.leaseClient.leaseRevoke({ ID: lease })],
        [
          'puts on a short lease',
          () => client.kv.put({ key: Buffer.from('e'), value: Buffer.from('x'), lease: short }),
        ],
        ['the short lease expired', () => until('the expiry', async () => !(await readLeases(endpoint)).has(short))],
      ];
      // Act + Assess: after each write, the kept digest is the scanned one.
      for (const [, write] of writes) {
        await write();
        await expectKept();
      }
      await watch.cancel();
    } finally {
      client.close();
      await supervisor.stop();
    }
  }, 60_000);

  it('a restore from the bucket after the data dir is gone (full snapshot + deltas) keeps every key, lease, revision and version; a watch resumes on it', async () => {
    // Prepare: history before the full snapshot, the full, history after it, the leases ending in between.
    const s = await source('fid-full');
    try {
      const before = await writeHistory(s, 'before-full');
      await s.snapshotter.takeFull();
      await s.snapshotter.start();
      const mid = await put(s, 'mid', 'x');
      await endLeases(s, before);
      const after = await writeHistory(s, 'after-full');
      await endLeases(s, after);
      // A lease of the source that expires only after the restore: its keys must go on the destination too.
      const short = await grant(s, 6);
      await put(s, 'short/1', 's', short);
      const last = await put(s, 'last', 'x');
      const delta = await deltaUpTo(s, last);
      const header = decodeDelta(await s.store.get(delta.key), delta.key).header;

      // Act: restore into a data dir of its own (the source's is as good as deleted).
      const destination = await freshSupervisor('fid-full-dest');
      const result = await restoreFromStore({
        store: s.store,
        technicalID: s.technicalID,
        supervisor: destination,
        stagingDir: join(tempDir('fid-full-staging'), 's'),
      });
      const endpoint = destination.clientUrl('private');

      // Assess: the delta named the source's digest, the restore computed the same; key space and leases equal.
      expect(header.leases?.map((l) => l.id)).toEqual(expect.arrayContaining([short]));
      expect(result.fidelity).toEqual({
        revision: last,
        digest: header.digest,
        expected: header.digest,
        against: delta.key,
      });
      await expectFaithful(endpoint, s);
      for (const ended of [before, after]) {
        expect((await readLeases(endpoint)).has(ended.expiring)).toBe(false);
        expect((await readLeases(endpoint)).has(ended.revoked)).toBe(false);
      }
      // A watch the client began on the source, resumed on the destination from its last seen revision.
      expect(await watchedEvents(endpoint, mid + 1, last)).toEqual(await watchedEvents(s.endpoint, mid + 1, last));

      // Assess: the short lease expires on the destination and deletes its key, as it does on the source.
      await until(
        'the short lease to expire on the destination',
        async () => !(await readKeySpace(endpoint, { prefix: 'short/' })).keys.has('short/1'),
        { timeoutMs: 20_000 },
      );
      expect((await readKeySpace(endpoint)).revision).toBe(last + 1);
      await destination.stop();
    } finally {
      await s.stop();
    }
  }, 120_000);

  it('a restore ahead holds its leases while it waits, the refresh and the catch-up replay with them, and the catch-up checks the digest from the keys it touched', async () => {
    // Prepare: the source's history and a full snapshot and delta in the bucket.
    const [s, zone] = [await source('fid-ahead'), await ownerZone()];
    try {
      await zone.records.set({ name: zone.recordName, value: SOURCE });
      const before = await writeHistory(s, 'before-full');
      await s.snapshotter.takeFull();
      await s.snapshotter.start();
      const short = await grant(s, 3);
      await deltaUpTo(s, await put(s, 'short/1', 's', short));

      // Act 1: restore ahead, then wait longer than the short lease's TTL.
      const { sidecar } = await startSidecar({
        technicalID: s.technicalID,
        store: s.store,
        owner: { lookup: zone.lookupThrough(), recordName: zone.recordName, identity: ME },
        ...intervals,
        restore: { ahead: true },
      });
      const aheadRevision = sidecar.status().restore!.revision;
      await sleep(6_000);

      // Assess 1: nothing expired on the standby: same revision, the short lease and its key still there.
      const standby = sidecar.supervisor.clientUrl('private');
      expect((await readKeySpace(standby)).revision).toBe(aheadRevision);
      expect((await readLeases(standby)).has(short)).toBe(true);

      // Act 2: the source goes on (its short lease expires there), a second round refreshes the standby.
      await endLeases(s, before);
      await until('the short lease to expire on the source', async () => !(await readLeases(s.endpoint)).has(short));
      await writeHistory(s, 'after-full');
      await deltaUpTo(s, await revisionOf(s));
      const refresh = await fetch(`${sidecar.statusUrl}/restore/refresh`, { method: 'POST' });
      expect(refresh.status).toBe(200);

      // Act 3: the source is fenced (no more writes), takes its final delta; the record moves; the catch-up.
      s.snapshotter.stop();
      const finalLease = await grant(s, 30 * 60);
      await put(s, 'final/1', 'f', finalLease);
      const final = await s.snapshotter.takeFinal({ endpoint: s.endpoint });
      await zone.records.set({ name: zone.recordName, value: ME, expected: SOURCE });
      const res = await fetch(`${sidecar.statusUrl}/restore/catch-up?expectedLastRevision=${final.lastRevision}`, {
        method: 'POST',
      });
      const body = (await res.json()) as { restore: { caughtUp: boolean; fidelity: Record<string, unknown> } };

      // Assess: caught up (not restored from scratch), the digest matched the final delta's, the copy is faithful.
      expect(res.status).toBe(200);
      const named = decodeDelta(await s.store.get(final.key), final.key).header.digest;
      expect(body.restore).toMatchObject({
        caughtUp: true,
        fidelity: { revision: final.lastRevision, digest: named, expected: named, against: final.key },
      });
      await until('readiness 200', async () => (await readiness(sidecar.statusUrl)) === 200, { timeoutMs: 10_000 });
      await expectFaithful(sidecar.clientUrl, s);
      // The history the restored sidecar begins in the bucket names its digest too, from the verified one.
      await until('the marker delta', async () =>
        (await s.store.list(s.technicalID)).some(
          (x) => x.kind === 'Incr' && !x.final && x.startRevision === final.lastRevision,
        ),
      );
      const marker = (await s.store.list(s.technicalID)).find(
        (x) => x.kind === 'Incr' && !x.final && x.startRevision === final.lastRevision,
      )!;
      expect(decodeDelta(await s.store.get(marker.key), marker.key).header.digest).toBe(named);
    } finally {
      await s.stop();
    }
  }, 120_000);

  it('a delta that lost one event of a transaction fails the restore with both digests; the operator override serves it and says so', async () => {
    // Prepare: a transaction of two puts in a delta, then one of them dropped from the object.
    const s = await source('fid-corrupt');
    try {
      await put(s, 'a', '1');
      await s.snapshotter.takeFull();
      await s.snapshotter.start();
      const txn = await s.client.kv.txn({
        compare: [],
        success: [
          { request_put: { key: Buffer.from('t/1'), value: Buffer.from('1') } },
          { request_put: { key: Buffer.from('t/2'), value: Buffer.from('2') } },
        ],
      });
      const last = await put(s, 'b', '2');
      const delta = await deltaUpTo(s, last);
      const original = await s.store.get(delta.key);
      const { header, events } = decodeDelta(original, delta.key);
      const dropped = events.filter(
        (e) => !(e.revision === Number(txn.header.revision) && Buffer.from(e.key, 'base64').toString() === 't/2'),
      );
      expect(dropped).toHaveLength(events.length - 1);
      await s.store.put(
        delta.key,
        encodeDelta({ ...header, events: dropped, leases: header.leases ?? [], digest: header.digest, gzip: false }),
      );

      // Act: restore; the revisions all land, only the digest can tell.
      const destination = await freshSupervisor('fid-corrupt-dest');
      const restore = (accept: boolean) =>
        restoreFromStore({
          store: s.store,
          technicalID: s.technicalID,
          supervisor: destination,
          stagingDir: join(tempDir('fid-corrupt-staging'), 's'),
          ...(accept ? { acceptDigestMismatch: true } : {}),
        });
      const failure = await restore(false).catch((error: unknown) => error);

      // Assess: refused, with both digests and the snapshot that named the source's.
      expect(failure).toBeInstanceOf(RestoreDigestError);
      const digests = (failure as RestoreDigestError).digests;
      expect(digests).toMatchObject({ revision: last, expected: header.digest, snapshot: delta.key });
      expect(digests.actual).not.toBe(digests.expected);
      expect((failure as Error).message).toContain(digests.expected);
      expect((failure as Error).message).toContain(digests.actual);

      // Act 2: the operator's override serves the wrong history, and the result says so.
      const overridden = await restore(true);
      expect(overridden.fidelity).toMatchObject({ overridden: true, expected: header.digest, digest: digests.actual });

      // Act 3: the delta repaired: the restore checks out.
      await s.store.put(delta.key, original);
      expect((await restore(false)).fidelity).toMatchObject({ expected: header.digest, digest: header.digest });
      await destination.stop();
    } finally {
      await s.stop();
    }
  }, 90_000);

  it('a catch-up over a delta that lost an event answers 422 with both digests and stays unserved; repaired, the next catch-up restores from scratch and serves', async () => {
    // Prepare: a standby restored ahead, then a delta whose transaction lost an event.
    const [s, zone] = [await source('fid-catchup'), await ownerZone()];
    try {
      await zone.records.set({ name: zone.recordName, value: SOURCE });
      await put(s, 'a', '1');
      await s.snapshotter.takeFull();
      await s.snapshotter.start();
      await deltaUpTo(s, await put(s, 'b', '2'));
      const { sidecar } = await startSidecar({
        technicalID: s.technicalID,
        store: s.store,
        owner: { lookup: zone.lookupThrough(), recordName: zone.recordName, identity: ME },
        ...intervals,
        restore: { ahead: true },
      });
      const txn = await s.client.kv.txn({
        compare: [],
        success: [1, 2].map((i) => ({ request_put: { key: Buffer.from(`t/${i}`), value: Buffer.from(String(i)) } })),
      });
      const delta = await deltaUpTo(s, await put(s, 'c', '3'));
      const original = await s.store.get(delta.key);
      const { header, events } = decodeDelta(original, delta.key);
      const kept = events.filter(
        (e) => !(e.revision === Number(txn.header.revision) && Buffer.from(e.key, 'base64').toString() === 't/2'),
      );
      await s.store.put(delta.key, encodeDelta({ ...header, events: kept, leases: header.leases ?? [], gzip: false }));
      await zone.records.set({ name: zone.recordName, value: ME, expected: SOURCE });
      const catchUp = () => fetch(`${sidecar.statusUrl}/restore/catch-up`, { method: 'POST' });

      // Act 1
      const refused = await catchUp();
      const body = (await refused.json()) as { name: string; digests: Record<string, unknown> };

      // Assess 1: refused with both digests (after a restore from scratch said the same), still a standby.
      expect(refused.status).toBe(422);
      expect(body).toMatchObject({
        name: 'RestoreDigestError',
        digests: { revision: delta.lastRevision, expected: header.digest, snapshot: delta.key },
      });
      expect(body.digests.actual).not.toBe(header.digest);
      expect(sidecar.status()).toMatchObject({ standby: true, ready: false, etcd: { fenced: true } });
      expect(await readiness(sidecar.statusUrl)).toBe(503);

      // Act 2: the delta repaired.
      await s.store.put(delta.key, original);
      const served = await catchUp();
      const result = (await served.json()) as { restore: { caughtUp: boolean; reason: string; fidelity: object } };

      // Assess 2: restored from scratch (the standby was no longer trusted), checked, serving the source's key space.
      expect(served.status).toBe(200);
      expect(result.restore).toMatchObject({
        caughtUp: false,
        reason: expect.stringMatching(/earlier catch-up failed/),
        fidelity: { expected: header.digest, digest: header.digest },
      });
      await until('readiness 200', async () => (await readiness(sidecar.statusUrl)) === 200, { timeoutMs: 10_000 });
      await expectFaithful(sidecar.clientUrl, s);
    } finally {
      await s.stop();
    }
  }, 90_000);

  it('still restores deltas of format v1 (no leases, no digest) and says it could not check them', async () => {
    // Prepare: a full snapshot, then a delta written in the old format.
    const s = await source('fid-v1');
    try {
      await put(s, 'a', '1');
      const full = await s.snapshotter.takeFull();
      const events: DeltaEvent[] = [
        {
          type: 'put',
          key: Buffer.from('b').toString('base64'),
          value: Buffer.from('2').toString('base64'),
          revision: full.lastRevision + 1,
        },
      ];
      const key = `${s.technicalID}/v2/Incr-${String(full.lastRevision + 1).padStart(8, '0')}-${String(full.lastRevision + 1).padStart(8, '0')}-${Math.floor(Date.now() / 1000)}`;
      const v1 = [
        {
          format: DELTA_FORMAT_V1,
          startRevision: full.lastRevision + 1,
          lastRevision: full.lastRevision + 1,
          events: 1,
        },
        ...events,
      ];
      await s.store.put(key, Buffer.from(v1.map((l) => JSON.stringify(l)).join('\n')));

      // Act
      const destination = await freshSupervisor('fid-v1-dest');
      const result = await restoreFromStore({
        store: s.store,
        technicalID: s.technicalID,
        supervisor: destination,
        stagingDir: join(tempDir('fid-v1-staging'), 's'),
      });

      // Assess: restored, unchecked and why.
      expect(result.revision).toBe(full.lastRevision + 1);
      expect(result.fidelity.unchecked).toMatch(/format v1/);
      expect(result.fidelity.expected).toBeUndefined();
      expect((await readKeySpace(destination.clientUrl('private'))).keys.get('b')).toMatchObject<Partial<KeyFacts>>({
        value: '2',
        createRevision: full.lastRevision + 1,
        lease: '0',
      });
      await destination.stop();
    } finally {
      await s.stop();
    }
  }, 60_000);

  it("a watch resumed on the restored etcd below the source's compaction gets a clean compacted error, above it every event once", async () => {
    // Prepare: the source compacts, then its full snapshot carries that compaction.
    const s = await source('fid-compact');
    try {
      for (let i = 0; i < 5; i++) await put(s, `c/${i}`, String(i));
      const compacted = await put(s, 'c/x', 'x');
      await s.client.kv.compact({ revision: String(compacted), physical: true });
      for (let i = 0; i < 5; i++) await put(s, `d/${i}`, String(i));
      await s.snapshotter.takeFull();
      await s.snapshotter.start();
      for (let i = 0; i < 5; i++) await put(s, `e/${i}`, String(i));
      const last = await put(s, 'e/x', 'x');
      await deltaUpTo(s, last);
      const destination = await freshSupervisor('fid-compact-dest');
      await restoreFromStore({
        store: s.store,
        technicalID: s.technicalID,
        supervisor: destination,
        stagingDir: join(tempDir('fid-compact-staging'), 's'),
      });
      const endpoint = destination.clientUrl('private');

      // Act + Assess: from below the compaction: compacted at the same revision, on both; from just above: the same events.
      for (const url of [s.endpoint, endpoint]) {
        expect(await compactedAt(url, compacted - 2)).toBe(compacted);
        expect(await compactedAt(url, compacted + 1)).toBeUndefined();
      }
      expect(await watchedEvents(endpoint, compacted + 1, last)).toEqual(
        await watchedEvents(s.endpoint, compacted + 1, last),
      );
      await destination.stop();
    } finally {
      await s.stop();
    }
  }, 60_000);
});
