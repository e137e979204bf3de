import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, describe, expect, it } from 'vitest';
import { currentFinalSnapshot, planRestore } from '../../core/snapshots/index.js';
import { alarms } from '../../seed/backup-restore/etcd-gateway.js';
import { EtcdSupervisor, restoreFromStore, Snapshotter, type PreparedFinal } from '../../seed/backup-restore/index.js';
import { cleanup, dump, etcdPorts, newBucket, restoredContent, startedEtcd, unique } from './backup-restore-support.js';

/**
 * The final snapshot a fenced source takes, against a real etcd and the emulator's S3: a delta of what
 * the store lacks (small, whatever the database's size), the same revision again when nothing is new,
 * and a full snapshot where etcd no longer has the events the store lacks.
 */

afterAll(cleanup);

describe('backup-restore snapshotter: the final snapshot', () => {
  it('is a delta of what the store lacks, then the same revision again, and a full snapshot once etcd compacted the events the store lacks', async () => {
    // Prepare: 2 MB of values in a full snapshot, a delta, then writes the store does not hold yet.
    const store = await newBucket('final');
    const technicalID = unique('shoot--dev--final');
    const { dir, supervisor, endpoint, client } = await startedEtcd('final-delta', 'private');
    try {
      const snapshotter = new Snapshotter({
        store,
        technicalID,
        endpoint: () => endpoint,
        stagingDir: join(dir, 'staging'),
        compression: 'none',
      });
      const big = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 32; i++) await client.put(`big/${i}`).value(big);
      const full = await snapshotter.takeFull();
      await snapshotter.start();
      for (let i = 0; i < 10; i++) await client.put(`a/${i}`).value(String(i));
      await expect.poll(() => snapshotter.status().pendingEvents).toBe(10);
      const delta = await snapshotter.takeDelta();
      snapshotter.stop();
      for (let i = 0; i < 5; i++) await client.put(`b/${i}`).value(String(i));
      await client.delete().key('a/0');
      const revision = Number((await client.get('b/4').exec()).header.revision);

      // Act 1: the final snapshot.
      const final = await snapshotter.takeFinal({ endpoint });

      // Assess 1: a final delta from the store's end to etcd's revision, a fraction of the full snapshot.
      expect(final).toMatchObject({
        kind: 'Incr',
        final: true,
        startRevision: delta!.lastRevision + 1,
        lastRevision: revision,
      });
      expect(final.size).toBeLessThan(full.size / 100);
      expect(currentFinalSnapshot(await store.list(technicalID))?.key).toBe(final.key);
      const { result, kvs } = await restoredContent({ store, technicalID, expectedLastRevision: revision });
      expect(result).toMatchObject({ fullKey: full.key, deltaKeys: [delta!.key, final.key], final: true, revision });
      expect(kvs).toEqual(await dump(endpoint));

      // Act 2: taken again with nothing new (a retried final action).
      const again = await snapshotter.takeFinal({ endpoint });

      // Assess 2: that revision again, marked final; the plan ends with it and restores the same.
      expect(again).toMatchObject({ kind: 'Incr', final: true, startRevision: revision, lastRevision: revision });
      expect(planRestore(await store.list(technicalID))).toMatchObject({ final: true, lastRevision: revision });
      expect(currentFinalSnapshot(await store.list(technicalID))?.key).toBe(again.key);

      // Act 3: writes the store lacks, then etcd compacts their revisions away.
      await client.put('c/0').value('0');
      const compactAt = Number((await client.put('c/1').value('1').exec()).header.revision);
      await client.kv.compact({ revision: String(compactAt), physical: true });
      const fallback = await snapshotter.takeFinal({ endpoint });

      // Assess 3: a final full snapshot, and it restores everything.
      expect(fallback).toMatchObject({ kind: 'Full', final: true, lastRevision: compactAt });
      const restored = await restoredContent({ store, technicalID, expectedLastRevision: compactAt });
      expect(restored.result).toMatchObject({ fullKey: fallback.key, deltaKeys: [], final: true });
      expect(restored.kvs).toEqual(await dump(endpoint));
    } finally {
      client.close();
      await supervisor.stop();
    }
  }, 60_000);

  it("of a quick fence: etcd's alarm refuses writes at once while reads and the final delta go on, etcd leaves the public address before anything is uploaded, and the alarm it keeps is cleared by a restore and by serving again", async () => {
    // Prepare: a serving etcd, a full snapshot, then writes the store does not hold yet.
    const store = await newBucket('quick');
    const technicalID = unique('shoot--dev--quick');
    const { dir, supervisor, endpoint: publicUrl, client } = await startedEtcd('quick-fence', 'public');
    const privateClient = new Etcd3({ hosts: supervisor.clientUrl('private') });
    try {
      const snapshotter = new Snapshotter({
        store,
        technicalID,
        endpoint: () => publicUrl,
        stagingDir: join(dir, 'staging'),
        compression: 'none',
      });
      for (let i = 0; i < 10; i++) await client.put(`a/${i}`).value(String(i));
      const full = await snapshotter.takeFull();
      let acked = 0;
      for (let i = 0; i < 5; i++) acked = Number((await client.put(`b/${i}`).value(String(i)).exec()).header.revision);

      // Act 1: the fence; while it holds etcd on the public address, a client writes and reads, and the final delta is read.
      const seen: { put?: string; read?: string | null; prepared?: PreparedFinal | undefined; publicAfter?: string } =
        {};
      const fenced = await supervisor.fenceQuickly(async (endpoint) => {
        seen.put = await client
          .put('late')
          .value('x')
          .then(
            () => 'acknowledged',
            (error: unknown) => String(error),
          );
        seen.read = await client.get('b/4').string();
        seen.prepared = await snapshotter.prepareFinal({ endpoint });
      });
      seen.publicAfter = await fetch(`${publicUrl}/health`).then(
        () => 'answered',
        () => 'refused',
      );

      // Assess 1: refused by the alarm, read as before, the delta ends at the last acknowledged write; gone from the public address.
      expect(fenced?.timing.by).toBe('alarm');
      expect(fenced!.timing.refusingAt).toBeLessThanOrEqual(fenced!.timing.stoppedAt);
      expect(seen.put).toMatch(/corrupt/);
      expect(seen.read).toBe('4');
      expect(seen.prepared).toMatchObject({
        storeEnd: full.lastRevision,
        delta: { startRevision: full.lastRevision + 1, lastRevision: acked },
      });
      expect(seen.publicAfter).toBe('refused');

      // Act 2: the prepared delta uploaded; etcd up on the private address.
      const taken = await snapshotter.takePreparedFinal(seen.prepared!);
      await fenced!.privateReady;

      // Assess 2: the final delta ends the history; etcd on the private address still refuses writes (the alarm is in its database).
      expect(taken).toMatchObject({
        kind: 'Incr',
        final: true,
        startRevision: full.lastRevision + 1,
        lastRevision: acked,
      });
      expect(currentFinalSnapshot(await store.list(technicalID))?.key).toBe(taken!.key);
      expect(supervisor.address).toBe('private');
      await expect(privateClient.put('p').value('1')).rejects.toThrow(/corrupt/);
      const restored = await restoredContent({ store, technicalID, expectedLastRevision: acked });
      expect(restored.kvs.get('b/4')).toEqual({ value: '4', modRevision: acked });
      expect(restored.kvs.has('late')).toBe(false);

      // Act 3: a full snapshot of the alarmed etcd (the final one where the store has no chain) restored elsewhere.
      const fullOfFenced = await snapshotter.takeFull({ final: true, endpoint: supervisor.clientUrl('private') });
      const elsewhere = new EtcdSupervisor({
        dataDir: join(dir, 'elsewhere'),
        ...(await etcdPorts()),
        logFile: join(dir, 'elsewhere.log'),
      });
      try {
        await restoreFromStore({
          store,
          technicalID,
          supervisor: elsewhere,
          stagingDir: join(dir, 'elsewhere-staging'),
          expectedLastRevision: fullOfFenced.lastRevision,
        });
        const restoredClient = new Etcd3({ hosts: elsewhere.clientUrl('private') });
        try {
          // Assess 3: the restore cleared the alarm the snapshot carried: it takes writes.
          expect(await alarms(elsewhere.clientUrl('private'))).toEqual([]);
          await restoredClient.put('after-restore').value('1');
        } finally {
          restoredClient.close();
        }
      } finally {
        await elsewhere.stop();
      }

      // Act 4 / Assess 4: serving again (an unfence) clears the alarm: writes are acknowledged.
      await supervisor.ensure('public');
      expect(await alarms(publicUrl)).toEqual([]);
      await client.put('again').value('1');
      expect(await client.get('again').string()).toBe('1');
    } finally {
      client.close();
      privateClient.close();
      await supervisor.stop();
    }
  }, 60_000);
});
