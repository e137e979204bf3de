import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Snapshotter, type SnapshotterEvent } from '../../seed/backup-restore/index.js';
import { cleanup, dump, newBucket, restoredContent, startedEtcd, unique } from './backup-restore-support.js';

/**
 * A snapshotter whose watch etcd cancels (it resumes where the store ends, and etcd compacted those
 * revisions away), against a real etcd and the emulator's S3: the cancelled watch delivers nothing ever
 * again, so the next delta tick must take a full snapshot rather than wait for events.
 */

afterAll(cleanup);

describe('backup-restore snapshotter: a watch etcd cancels', () => {
  it('resuming from the store after etcd compacted what the store lacks, the next tick takes a full snapshot, and deltas follow it', async () => {
    // Prepare: a full snapshot and a delta in the store, then writes it lacks, compacted away by etcd.
    const store = await newBucket('compaction');
    const technicalID = unique('shoot--dev--compaction');
    const { dir, supervisor, endpoint, client } = await startedEtcd('compaction', 'public');
    const options = {
      store,
      technicalID,
      endpoint: () => endpoint,
      stagingDir: join(dir, 'staging'),
      compression: 'none' as const,
    };
    let resumed: Snapshotter | undefined;
    try {
      const first = new Snapshotter(options);
      await first.start();
      for (let i = 0; i < 5; i++) await client.put(`a/${i}`).value(String(i));
      await expect.poll(() => first.status().pendingEvents).toBe(5);
      const delta = await first.takeDelta();
      first.stop();
      await client.put('b/0').value('0');
      const compactAt = Number((await client.put('b/1').value('1').exec()).header.revision);
      await client.kv.compact({ revision: String(compactAt), physical: true });

      // Act: a snapshotter that continues where the store ends (as a new leader's or a restarted sidecar's).
      const events: SnapshotterEvent[] = [];
      resumed = new Snapshotter({
        ...options,
        baseline: 'store',
        deltaSnapshotInterval: 300,
        onEvent: (e) => events.push(e),
      });
      await resumed.start();

      // Assess: it resumed after the delta, its watch was refused, and a full snapshot at etcd's revision followed.
      expect(events).toContainEqual(expect.objectContaining({ type: 'resumed', lastRevision: delta!.lastRevision }));
      await expect
        .poll(async () => (await store.list(technicalID)).filter((s) => s.kind === 'Full').map((s) => s.lastRevision), {
          timeout: 10_000,
        })
        .toContain(compactAt);
      expect(events.map((e) => e.type)).toContain('watch-error');
      await client.put('c/0').value('0');
      const last = Number((await client.put('c/1').value('1').exec()).header.revision);
      await expect
        .poll(async () => (await store.list(technicalID)).some((s) => s.kind === 'Incr' && s.lastRevision === last), {
          timeout: 10_000,
        })
        .toBe(true);
      resumed.stop();
      await resumed.idle();
      const restored = await restoredContent({ store, technicalID, expectedLastRevision: last });
      expect(restored.result).toMatchObject({ revision: last });
      expect(restored.kvs).toEqual(await dump(endpoint));
    } finally {
      resumed?.stop();
      client.close();
      await supervisor.stop();
    }
  }, 60_000);
});
