import { Command } from 'commander';
import { Etcd3 } from 'etcd3';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { registerBackupRestoreCommand } from '../../cli/backup-restore-command.js';
import { latestFullSnapshot, RestorePlanGapError, RestorePlanIncompleteError } from '../../core/snapshots/index.js';
import { copySnapshots, sleep } from '../../seed/backup-restore/index.js';
import {
  cleanup,
  dump,
  newBucket,
  ownerZone,
  readiness,
  restoredContent,
  startSidecar,
  unique,
  until,
} from './backup-restore-support.js';
import { emulatorCredentials } from '../../local/aws-env.js';

/** Restore from a bucket: latest full + later deltas replayed revision by revision, verified; and the copy. */

const ME = 'seed-a-1111';
const intervals = {
  ownerCheckInterval: 500,
  deltaSnapshotInterval: 600,
  fullSnapshotInterval: 60_000,
  unknownGrace: 5_000,
};

afterAll(cleanup);

/** Puts, overwrites, deletes and multi-key transactions, so the deltas hold every kind of event. */
async function mixedWrites(clientUrl: string, rounds: number): Promise<number> {
  const client = new Etcd3({ hosts: clientUrl });
  try {
    let revision = 0;
    for (let i = 0; i < rounds; i++) {
      await client.put(`k/${i}`).value(`v${i}`);
      if (i % 3 === 0) await client.put(`k/${i}`).value(`v${i}-again`);
      if (i % 4 === 1) await client.delete().key(`k/${i}`);
      if (i % 5 === 2) {
        const res = await client.kv.txn({
          compare: [],
          success: [
            { request_put: { key: Buffer.from(`t/${i}/a`), value: Buffer.from('a') } },
            { request_put: { key: Buffer.from(`t/${i}/b`), value: Buffer.from('b') } },
          ],
        });
        revision = Number(res.header.revision);
      }
      revision = Math.max(revision, Number((await client.put('last').value(String(i))).header.revision));
      if (i % 10 === 9) await sleep(250);
    }
    return revision;
  } finally {
    client.close();
  }
}

describe('backup-restore sidecar: restore', () => {
  it('restores the latest full snapshot plus every later delta, lands on the expected revision, marks the history before serving and snapshots in full behind it', async () => {
    // Prepare: a sidecar that writes a full snapshot and then several deltas of mixed events.
    const [store, zone] = [await newBucket('restore'), await ownerZone()];
    const technicalID = unique('shoot--dev--restore');
    await zone.records.set({ name: zone.recordName, value: ME });
    const owner = { lookup: zone.lookupThrough(), recordName: zone.recordName, identity: ME };
    const source = await startSidecar({ technicalID, store, owner, ...intervals });
    await until('readiness 200', async () => (await readiness(source.sidecar.statusUrl)) === 200);
    const lastRevision = await mixedWrites(source.sidecar.clientUrl, 60);
    await until('deltas up to the last write', () => source.sidecar.status().snapshots.lastRevision === lastRevision, {
      timeoutMs: 10_000,
    });
    const before = await dump(source.sidecar.clientUrl);
    await source.sidecar.stop();
    const listing = await store.list(technicalID);
    expect(listing.filter((s) => s.kind === 'Incr').length).toBeGreaterThanOrEqual(3);

    // Act: a new sidecar (another data dir) restores from the bucket before serving.
    const target = await startSidecar({
      technicalID,
      store,
      owner,
      ...intervals,
      restore: { expectedLastRevision: lastRevision },
    });
    await until('readiness 200', async () => (await readiness(target.sidecar.statusUrl)) === 200);

    // Assess: same keys, values and revisions; the deltas were replayed, not skipped.
    const restore = target.sidecar.status().restore!;
    expect(restore).toMatchObject({ fullKey: latestFullSnapshot(listing)!.key, revision: lastRevision });
    expect(restore.deltaKeys.length).toBeGreaterThanOrEqual(3);
    expect(restore.transactions).toBeGreaterThan(0);
    expect(await dump(target.sidecar.clientUrl)).toEqual(before);
    // Before serving, the history in the store begins with a marker (a delta of the restored revision
    // again); the full snapshot of the restored data follows in the background, at the restored revision.
    const marker = (await store.list(technicalID)).filter(
      (x) => x.kind === 'Incr' && !x.final && x.startRevision === lastRevision && x.lastRevision === lastRevision,
    );
    expect(marker).toHaveLength(1);
    await until(
      'the full snapshot after serving',
      async () => latestFullSnapshot(await store.list(technicalID))?.lastRevision === lastRevision,
      { timeoutMs: 10_000 },
    );
    const after = await store.list(technicalID);
    expect(latestFullSnapshot(after)).toMatchObject({ lastRevision: lastRevision, final: false });
    expect(latestFullSnapshot(after)!.key).not.toBe(restore.fullKey);
    // Serving continues the history: the next write is the next revision.
    const client = new Etcd3({ hosts: target.sidecar.clientUrl });
    expect(Number((await client.put('after').value('restore')).header.revision)).toBe(lastRevision + 1);
    client.close();
  });

  it('replays a revision of more events than etcd takes in one transaction by default (a prefix delete, a lease expiry)', async () => {
    // Prepare: 300 keys under a prefix and 200 on one lease, written in transactions of at most 100 operations
    // (etcd's default limit is 128); then one DeleteRange of the prefix and the lease's revocation: two
    // revisions of 300 and 200 delete events, which a restore must replay each as one transaction.
    const [store, zone] = [await newBucket('bulk'), await ownerZone()];
    const technicalID = unique('shoot--dev--bulk');
    await zone.records.set({ name: zone.recordName, value: ME });
    const owner = { lookup: zone.lookupThrough(), recordName: zone.recordName, identity: ME };
    const source = await startSidecar({ technicalID, store, owner, ...intervals });
    await until('readiness 200', async () => (await readiness(source.sidecar.statusUrl)) === 200);
    const client = new Etcd3({ hosts: source.sidecar.clientUrl });
    const putAll = async (keys: string[], lease?: string) => {
      for (let i = 0; i < keys.length; i += 100) {
        const puts = keys.slice(i, i + 100).map((key) => ({
          request_put: { key: Buffer.from(key), value: Buffer.from('v'), ...(lease === undefined ? {} : { lease }) },
        }));
        await client.kv.txn({ compare: [], success: puts });
      }
    };
    const lease = await client.leaseClient.leaseGrant({ TTL: 3_600 });
    await putAll(Array.from({ length: 300 }, (_, i) => `bulk/${i}`));
    await putAll(
      Array.from({ length: 200 }, (_, i) => `leased/${i}`),
      lease.ID,
    );
    await client.put('kept').value('yes');
    const deleted = await client.kv.deleteRange({ key: Buffer.from('bulk/'), range_end: Buffer.from('bulk0') });
    expect(Number(deleted.deleted)).toBe(300);
    await client.leaseClient.leaseRevoke({ ID: lease.ID });
    const lastRevision = Number((await client.put('last').value('1')).header.revision);
    client.close();
    await until('deltas up to the last write', () => source.sidecar.status().snapshots.lastRevision === lastRevision, {
      timeoutMs: 10_000,
    });
    const before = await dump(source.sidecar.clientUrl);
    await source.sidecar.stop();

    // Act: restore into another data dir.
    const target = await startSidecar({
      technicalID,
      store,
      owner,
      ...intervals,
      restore: { expectedLastRevision: lastRevision },
    });
    await until('readiness 200', async () => (await readiness(target.sidecar.statusUrl)) === 200);

    // Assess: every revision replayed onto its own revision; only the two keys outside the deletes remain.
    expect(target.sidecar.status().restore).toMatchObject({ revision: lastRevision });
    const after = await dump(target.sidecar.clientUrl);
    expect(after).toEqual(before);
    expect([...after.keys()].sort()).toEqual(['kept', 'last']);
  });

  it('refuses to restore across a revision gap or short of the expected revision', async () => {
    // Prepare: full + three deltas, then one delta in the middle goes missing.
    const [store, zone] = [await newBucket('gap'), await ownerZone()];
    const technicalID = unique('shoot--dev--gap');
    await zone.records.set({ name: zone.recordName, value: ME });
    const owner = { lookup: zone.lookupThrough(), recordName: zone.recordName, identity: ME };
    const source = await startSidecar({ technicalID, store, owner, ...intervals });
    await until('readiness 200', async () => (await readiness(source.sidecar.statusUrl)) === 200);
    const lastRevision = await mixedWrites(source.sidecar.clientUrl, 40);
    await until('deltas up to the last write', () => source.sidecar.status().snapshots.lastRevision === lastRevision, {
      timeoutMs: 10_000,
    });
    await source.sidecar.stop();

    // Act / Assess: short of the expected revision.
    await expect(
      restoredContent({ store, technicalID, expectedLastRevision: lastRevision + 5 }),
    ).rejects.toBeInstanceOf(RestorePlanIncompleteError);
    const deltas = (await store.list(technicalID)).filter((s) => s.kind === 'Incr');
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    await store.delete(deltas[0]!.key);
    await expect(restoredContent({ store, technicalID })).rejects.toBeInstanceOf(RestorePlanGapError);
  });

  it('copies what a restore needs to another bucket (the CLI copy command), idempotently, and the copy restores', async () => {
    // Prepare
    const [source, destination, zone] = [await newBucket('copysrc'), await newBucket('copydst'), await ownerZone()];
    const technicalID = unique('shoot--dev--copy');
    await zone.records.set({ name: zone.recordName, value: ME });
    const side = await startSidecar({
      technicalID,
      store: source,
      owner: { lookup: zone.lookupThrough(), recordName: zone.recordName, identity: ME },
      ...intervals,
    });
    await until('readiness 200', async () => (await readiness(side.sidecar.statusUrl)) === 200);
    const lastRevision = await mixedWrites(side.sidecar.clientUrl, 20);
    await until('deltas up to the last write', () => side.sidecar.status().snapshots.lastRevision === lastRevision, {
      timeoutMs: 10_000,
    });
    const before = await dump(side.sidecar.clientUrl);
    await side.sidecar.stop();

    // Act: the CLI command, as an operator runs it.
    const program = new Command('gardenless').exitOverride();
    registerBackupRestoreCommand(program);
    const printed: string[] = [];
    const spy = vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
    const endpoint = inject('deployment').awsEndpoint;
    // The command takes credentials from the environment, as on a seed.
    vi.stubEnv('AWS_ACCESS_KEY_ID', emulatorCredentials().accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', emulatorCredentials().secretAccessKey);
    try {
      await program.parseAsync(
        [
          'backup-restore',
          'copy',
          '--technical-id',
          technicalID,
          '--source-bucket',
          source.bucket,
          '--destination-bucket',
          destination.bucket,
          '--s3-endpoint',
          endpoint,
          '--region',
          'us-east-1',
        ],
        { from: 'user' },
      );
    } finally {
      spy.mockRestore();
      vi.unstubAllEnvs();
    }

    // Assess: the plan's objects copied; a second copy skips them all; the copy restores to the same content.
    const first = JSON.parse(printed[0]!) as { copied: number; skipped: number; lastRevision: number };
    expect(first).toMatchObject({ skipped: 0, lastRevision });
    expect(first.copied).toBeGreaterThanOrEqual(2);
    const again = await copySnapshots({ source, destination, copier: destination.copierFrom(source), technicalID });
    expect(again).toMatchObject({ copied: 0, skipped: first.copied });
    const { result, kvs } = await restoredContent({
      store: destination,
      technicalID,
      expectedLastRevision: lastRevision,
    });
    expect(result.revision).toBe(lastRevision);
    expect(kvs).toEqual(before);
  });
});
