import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { currentFinalSnapshot } from '../../core/snapshots/index.js';
import { Etcd3 } from 'etcd3';
import { sleep, Snapshotter } from '../../seed/backup-restore/index.js';
import { freePort } from '../../seed/ports.js';
import {
  cleanup,
  dump,
  newBucket,
  ownerZone,
  readiness,
  startedEtcd,
  startSidecar,
  unique,
  until,
} from './backup-restore-support.js';

/**
 * Restore ahead and catch-up (pre-copy) with real etcds and the emulator's S3 and Route 53: a source etcd
 * whose snapshots land in the bucket; a sidecar restored ahead from them that serves nothing, whatever the
 * owner record says, until it is caught up; then only the final delta is replayed and it serves.
 */

const ME = 'seed-b-2222';
const SOURCE = 'seed-a-1111';
const intervals = {
  ownerCheckInterval: 500,
  initialRetryDelay: 200,
  deltaSnapshotInterval: 1_000,
  fullSnapshotInterval: 60_000,
};

afterAll(cleanup);

describe('backup-restore sidecar: restore ahead', () => {
  it('stays unserved (its kube-apiserver only reads) through a refresh until the catch-up, each replays only what came since, then serves every acknowledged write', async () => {
    // Prepare: the source's etcd (3 MB of values: the dump below reads them in one gRPC message) with a full snapshot and a delta in the bucket.
    const [store, zone] = [await newBucket('ahead'), await ownerZone()];
    const technicalID = unique('shoot--dev--ahead');
    await zone.records.set({ name: zone.recordName, value: SOURCE });
    const { dir, supervisor: source, endpoint: sourceUrl, client } = await startedEtcd('ahead-source', 'private');
    try {
      const snapshotter = new Snapshotter({
        store,
        technicalID,
        endpoint: () => sourceUrl,
        stagingDir: join(dir, 'staging'),
        compression: 'none',
      });
      for (let i = 0; i < 48; i++) await client.put(`big/${i}`).value('x'.repeat(64 * 1024));
      await snapshotter.takeFull();
      await snapshotter.start();
      for (let i = 0; i < 20; i++) await client.put(`a/${i}`).value(String(i));
      await expect.poll(() => snapshotter.status().pendingEvents).toBe(20);
      const delta = (await snapshotter.takeDelta())!;

      // Act 1: the destination's sidecar restores ahead while the source still owns the shoot.
      const apiServerPort = await freePort();
      const { sidecar, log } = await startSidecar({
        technicalID,
        store,
        owner: { lookup: zone.lookupThrough(), recordName: zone.recordName, identity: ME },
        ...intervals,
        restore: { ahead: true },
        etcd: { apiServerPort },
      });
      const kubeApiServer = new Etcd3({ hosts: `http://127.0.0.1:${apiServerPort}` });

      // Assess 1: standby at the delta's revision; etcd private, nothing uploaded, no owner check.
      expect(sidecar.status()).toMatchObject({
        standby: true,
        ready: false,
        restore: { revision: delta.lastRevision },
        etcd: { fenced: true },
      });
      expect(await readiness(sidecar.statusUrl)).toBe(503);
      // The kube-apiserver's address alone is open, to read the standby: every write refused (the fence's alarm).
      expect(sidecar.status().etcd.apiServerGate).toBe('open');
      expect(await kubeApiServer.get('a/19').string()).toBe('19');
      await expect(kubeApiServer.put('kube/lease').value('x')).rejects.toThrow(/corrupt/);

      // Act 2: the second round: the source goes on, a delta arrives, the standby is refreshed.
      for (let i = 0; i < 15; i++) await client.put(`r/${i}`).value(String(i));
      await expect.poll(() => snapshotter.status().pendingEvents).toBe(15);
      const second = (await snapshotter.takeDelta())!;
      const uploadedAhead = (await store.list(technicalID)).length;
      const refresh = await fetch(`${sidecar.statusUrl}/restore/refresh`, { method: 'POST' });
      const refreshed = (await refresh.json()) as {
        restore: { caughtUp: boolean; aheadRevision: number; revision: number; transactions: number };
      };

      // Assess 2: only the new delta replayed, still standby: private, unserved, nothing uploaded.
      expect(refresh.status).toBe(200);
      expect(refreshed.restore).toMatchObject({
        caughtUp: true,
        aheadRevision: delta.lastRevision,
        revision: second.lastRevision,
        transactions: 15,
      });
      expect(sidecar.status()).toMatchObject({
        standby: true,
        ready: false,
        restore: { revision: second.lastRevision },
        etcd: { fenced: true },
      });
      expect(await readiness(sidecar.statusUrl)).toBe(503);
      expect((await store.list(technicalID)).length).toBe(uploadedAhead);
      expect(sidecar.status().etcd.apiServerGate).toBe('open');
      expect(await kubeApiServer.get('r/14').string()).toBe('14');
      await expect(kubeApiServer.put('kube/lease').value('x')).rejects.toThrow(/corrupt/);

      // Act 3: the source goes on, then is fenced (no more writes) and takes its final snapshot; the owner record moves.
      snapshotter.stop();
      for (let i = 0; i < 7; i++) await client.put(`b/${i}`).value(String(i));
      const final = await snapshotter.takeFinal({ endpoint: sourceUrl });
      await zone.records.set({ name: zone.recordName, value: ME, expected: SOURCE });
      await sleep(3 * intervals.ownerCheckInterval);

      // Assess 3: no owner watchdog runs in standby, so the record naming this seed serves nothing yet.
      expect(sidecar.status()).toMatchObject({ standby: true, ready: false, owner: { checks: 0 } });
      expect((await store.list(technicalID)).length).toBe(uploadedAhead + 1);

      // Act 4: the migration's restore: the catch-up.
      const res = await fetch(`${sidecar.statusUrl}/restore/catch-up?expectedLastRevision=${final.lastRevision}`, {
        method: 'POST',
      });
      const body = (await res.json()) as {
        restore: { caughtUp: boolean; aheadRevision: number; revision: number; transactions: number; final: boolean };
      };

      // Assess 4: only the final delta replayed, from where the refresh left it; serving as owner with the source's data, history begun with a marker.
      expect(res.status).toBe(200);
      expect(body.restore).toMatchObject({
        caughtUp: true,
        aheadRevision: second.lastRevision,
        revision: final.lastRevision,
        transactions: 7,
        final: true,
      });
      await until('readiness 200', async () => (await readiness(sidecar.statusUrl)) === 200, { timeoutMs: 10_000 });
      expect(await dump(sidecar.clientUrl)).toEqual(await dump(sourceUrl));
      const listing = await store.list(technicalID);
      expect(
        listing.filter(
          (s) =>
            s.kind === 'Incr' &&
            !s.final &&
            s.startRevision === final.lastRevision &&
            s.lastRevision === final.lastRevision,
        ),
      ).toHaveLength(1);
      expect(currentFinalSnapshot(listing)).toBeUndefined();
      await until('the full snapshot after serving', () => sidecar.status().snapshots.lastFullSnapshot !== null, {
        timeoutMs: 20_000,
      });
      expect(log.map((e) => e.event)).toEqual(
        expect.arrayContaining(['restored-ahead', 'refreshed-ahead', 'caught-up']),
      );

      // A repeat answers the same; a refresh of a sidecar that serves is refused.
      expect((await fetch(`${sidecar.statusUrl}/restore/catch-up`, { method: 'POST' })).status).toBe(200);
      expect((await fetch(`${sidecar.statusUrl}/restore/refresh`, { method: 'POST' })).status).toBe(409);

      // Serving, the kube-apiserver writes through its own address, onto the source's data.
      expect(sidecar.status().etcd.apiServerGate).toBe('open');
      await kubeApiServer.put('kube/lease').value('x');
      expect(await kubeApiServer.get('b/6').string()).toBe('6');
      kubeApiServer.close();
    } finally {
      client.close();
      await source.stop();
    }
  }, 90_000);

  it('refuses a catch-up and a refresh where nothing was restored ahead (409)', async () => {
    const [store, zone] = [await newBucket('ahead-none'), await ownerZone()];
    const technicalID = unique('shoot--dev--none');
    await zone.records.set({ name: zone.recordName, value: ME });
    const { sidecar } = await startSidecar({
      technicalID,
      store,
      owner: { lookup: zone.lookupThrough(), recordName: zone.recordName, identity: ME },
      ...intervals,
    });
    await until('readiness 200', async () => (await readiness(sidecar.statusUrl)) === 200);
    for (const path of ['/restore/catch-up?expectedLastRevision=5', '/restore/refresh']) {
      const res = await fetch(`${sidecar.statusUrl}${path}`, { method: 'POST' });
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({ name: 'CatchUpRefusedError' });
    }
  });
});
