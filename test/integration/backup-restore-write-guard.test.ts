import { afterAll, describe, expect, it } from 'vitest';
import { SnapshotStoreError, type SnapshotBody, type SnapshotStore } from '../../core/snapshots/index.js';
import { alarms, put, range } from '../../seed/backup-restore/etcd-gateway.js';
import { join } from 'node:path';
import { EtcdSupervisor, restoreFromStore, sleep } from '../../seed/backup-restore/index.js';
import {
  cleanup,
  dump,
  etcdPorts,
  newBucket,
  ownerZone,
  readiness,
  startSidecar,
  startWriter,
  tempDir,
  unique,
  until,
} from './backup-restore-support.js';

/**
 * The sidecar's write guard (docs/design.md section 4) with a real etcd on the emulator's S3: uploads of
 * delta snapshots fail for a while (a store that refuses them, as a cut S3 does), and the sidecar must
 * make etcd refuse puts once the oldest unuploaded write is older than its limit, keep reads and readiness,
 * and take puts again by itself once an upload succeeds.
 */

const ME = 'seed-a-1111';
const DELTA_MS = 500;
const LIMIT_MS = 1_500;
/** The reaction the tests allow the guard (as in test/integration/scenarios.test.ts). */
const REACTION_MS = 500;

afterAll(cleanup);

/** The emulator's store, except that puts of delta snapshots fail while `down` (full snapshots go through). */
function deltasFailWhile(store: SnapshotStore, down: () => boolean): SnapshotStore {
  return {
    list: (id) => store.list(id),
    get: (key) => store.get(key),
    fetch: (key) => store.fetch(key),
    head: (key) => store.head(key),
    delete: (key) => store.delete(key),
    put: (key: string, body: SnapshotBody) =>
      down() && key.includes('/Incr-')
        ? Promise.reject(new SnapshotStoreError(`put ${key}: store down`, 'Unavailable'))
        : store.put(key, body),
  };
}

describe('backup-restore sidecar: write guard', () => {
  it('refuses puts (NOSPACE) once the backup lags beyond the limit, keeps reads and readiness, resumes by itself; a restore clears the alarm a snapshot carries', async () => {
    // Prepare: a serving sidecar and a steady writer.
    const [bucket, zone] = [await newBucket('guard'), await ownerZone()];
    let down = false;
    const store = deltasFailWhile(bucket, () => down);
    const technicalID = unique('shoot--dev--guard');
    await zone.records.set({ name: zone.recordName, value: ME });
    const { sidecar, log } = await startSidecar({
      technicalID,
      store,
      owner: { lookup: zone.lookupThrough(), recordName: zone.recordName, identity: ME },
      ownerCheckInterval: 500,
      unknownGrace: 5_000,
      deltaSnapshotInterval: DELTA_MS,
      fullSnapshotInterval: 600_000,
      backupLagLimit: LIMIT_MS,
    });
    await until('readiness 200', async () => (await readiness(sidecar.statusUrl)) === 200);
    const writer = startWriter({ clientUrl: sidecar.clientUrl });
    await sleep(1_500);
    expect(sidecar.status().writeGuard).toMatchObject({ stalled: false, stalls: 0, limitMs: LIMIT_MS });

    // Act 1: delta uploads fail.
    const downAt = performance.now();
    down = true;
    await until('the write guard to stall', () => sidecar.status().writeGuard.stalled, { timeoutMs: 10_000 });
    const stalledAt = performance.now();
    await sleep(300);

    // Assess 1: puts refused with etcd's NOSPACE answer; reads, readiness and ownership untouched.
    await expect(put(sidecar.clientUrl, { key: 'guard/probe', value: 'x' })).rejects.toThrow(/database space exceeded/);
    expect((await range(sidecar.clientUrl, { key: 'guard/', prefix: true })).header.revision).toBeDefined();
    expect(await readiness(sidecar.statusUrl)).toBe(200);
    const status = sidecar.status();
    expect(status.etcd.fenced).toBe(false);
    expect(status.owner.mode).not.toBe('lost');
    expect(status.writeGuard.stalls).toBe(1);
    expect((await alarms(sidecar.clientUrl)).map((a) => a.alarm)).toEqual(['NOSPACE']);
    // Nothing sent once the guard had stalled (plus its reaction) was acknowledged; the writer kept trying.
    const ackedAfterStall = writer.acknowledged().filter((w) => w.sentAt > stalledAt + REACTION_MS);
    expect(ackedAfterStall).toEqual([]);
    expect(writer.refused().filter((w) => w.sentAt > stalledAt).length).toBeGreaterThan(0);
    // The guard bit within the limit plus its reaction of the first write the store lacked.
    expect(stalledAt - downAt).toBeLessThan(DELTA_MS + LIMIT_MS + REACTION_MS);

    // Act 2: while puts are refused, a full snapshot goes through: it carries the alarm (and clears the lag).
    const full = await sidecar.snapshotter.takeFull();

    // Assess 2: the guard resumes by itself (the lag is gone), puts are acknowledged again.
    await until('the write guard to resume', () => !sidecar.status().writeGuard.stalled, { timeoutMs: 5_000 });
    await until(
      'a put to be acknowledged',
      async () =>
        await put(sidecar.clientUrl, { key: 'guard/after', value: 'y' }).then(
          () => true,
          () => false,
        ),
      { timeoutMs: 5_000 },
    );
    expect(log.some((e) => e.event === 'write-resume')).toBe(true);

    // Act 3: the store comes back; the writer stops once its last writes are uploaded.
    down = false;
    await sleep(3 * DELTA_MS);
    await writer.stop();
    await until(
      'every acknowledged write uploaded',
      () => sidecar.status().snapshots.pendingEvents === 0 && sidecar.status().snapshots.backupLagMs === 0,
      { timeoutMs: 10_000 },
    );
    const stallEvent = log.find((e) => e.event === 'write-stall');
    console.log(
      `write guard: ${JSON.stringify({ downToStallMs: Math.round(stalledAt - downAt), stall: stallEvent, refused: writer.refused().length, acknowledged: writer.acknowledged().length })}`,
    );

    // Assess 3: a restore from the full snapshot taken during the stall replays the later deltas (puts)
    // and serves puts: the restorer cleared the alarm the snapshot carried. Every acknowledged write is in the store.
    const listing = await bucket.list(technicalID);
    expect(listing.filter((x) => x.kind === 'Incr' && x.startRevision > full.lastRevision).length).toBeGreaterThan(0);
    const dir = tempDir('guard-restore');
    const supervisor = new EtcdSupervisor({
      dataDir: join(dir, 'data'),
      ...(await etcdPorts()),
      logFile: join(dir, 'etcd.log'),
    });
    try {
      const result = await restoreFromStore({
        store: bucket,
        technicalID,
        supervisor,
        stagingDir: join(dir, 'staging'),
      });
      expect(result.fullKey).toBe(full.key);
      expect(result.revision).toBeGreaterThan(full.lastRevision);
      const restored = supervisor.clientUrl('private');
      expect(await alarms(restored)).toEqual([]);
      await put(restored, { key: 'guard/restored', value: 'z' });
      const kvs = await dump(restored);
      const missing = writer.acknowledged().filter((w) => kvs.get(w.key)?.value !== w.value);
      expect(missing).toEqual([]);
    } finally {
      await supervisor.stop();
    }
  }, 90_000);
});
