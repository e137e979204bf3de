import { afterAll, describe, expect, it } from 'vitest';
import { currentFinalSnapshot, latestFinalSnapshot, planRestore } from '../../core/snapshots/index.js';
import { sleep } from '../../seed/backup-restore/index.js';
import { clusterIdOf } from '../../seed/backup-restore/etcd-gateway.js';
import {
  cleanup,
  emulatorProxy,
  newBucket,
  ownerZone,
  readiness,
  restoredContent,
  startSidecar,
  startWriter,
  unique,
  until,
} from './backup-restore-support.js';

/**
 * The sidecar's owner watchdog against the emulator's Route 53 (API mode) and S3, with a real etcd and a
 * writer that records what etcd acknowledged. Intervals are short so the suite takes seconds.
 */

const ME = 'seed-a-1111';
const OTHER = 'seed-b-2222';
const intervals = {
  ownerCheckInterval: 500,
  initialRetryDelay: 200,
  deltaSnapshotInterval: 1_000,
  fullSnapshotInterval: 60_000,
};

afterAll(cleanup);

/** A sidecar serving as the owner the record in a new zone names, its store a new bucket. */
async function servingSidecar(label: string) {
  const [store, zone] = [await newBucket(label), await ownerZone()];
  const technicalID = unique(`shoot--dev--${label}`);
  await zone.records.set({ name: zone.recordName, value: ME });
  const { sidecar, log } = await startSidecar({
    technicalID,
    store,
    owner: { lookup: zone.lookupThrough(), recordName: zone.recordName, identity: ME },
    ...intervals,
    unknownGrace: 5_000,
  });
  await until('readiness 200', async () => (await readiness(sidecar.statusUrl)) === 200);
  return { store, zone, technicalID, sidecar, log };
}

describe('backup-restore sidecar: owner watchdog', () => {
  it('on not-owner fences first: no write acknowledged after the fence, every acknowledged write in the final snapshot', async () => {
    // Prepare: a serving sidecar and a steady writer.
    const { store, zone, technicalID, sidecar, log } = await servingSidecar('fence');
    const writer = startWriter({ clientUrl: sidecar.clientUrl });
    await sleep(2_500);

    // Act: the orchestrator gives the shoot to another seed.
    await zone.records.set({ name: zone.recordName, value: OTHER, expected: ME });
    await until('the final snapshot', () => sidecar.status().owner.finalSnapshot === 'taken');
    await sleep(300);
    await writer.stop();

    // Assess: fenced for good, readiness 503.
    const status = sidecar.status();
    expect(status.owner).toMatchObject({ mode: 'lost', fencedBecause: 'not-owner', lastResult: 'not-owner' });
    expect(status.etcd.fenced).toBe(true);
    expect(await readiness(sidecar.statusUrl)).toBe(503);
    const fence = status.etcd.lastFence!;
    expect(fence.refusingAt - fence.signalledAt).toBeLessThan(1_000);
    // Writes refused by etcd's alarm before it stopped; the final delta read in between, not after a restart.
    expect(fence.by).toBe('alarm');
    expect(fence.refusingAt).toBeLessThanOrEqual(fence.stoppedAt);
    expect(log.find((l) => l.event === 'fenced')).toMatchObject({ by: 'alarm', finalPrepared: true });

    // No write sent after etcd was gone was acknowledged; the writer did keep trying.
    const acked = writer.acknowledged();
    expect(acked.length).toBeGreaterThan(50);
    expect(acked.filter((w) => w.sentAt > fence.refusingAt)).toEqual([]);
    expect(writer.refused().filter((w) => w.sentAt > fence.refusingAt).length).toBeGreaterThan(0);

    // The final snapshot ends the history and holds every acknowledged write at its revision.
    const listing = await store.list(technicalID);
    const final = currentFinalSnapshot(listing)!;
    expect(final).toBeDefined();
    const maxAcked = Math.max(...acked.map((w) => w.revision!));
    expect(final.lastRevision).toBeGreaterThanOrEqual(maxAcked);
    const { result, kvs } = await restoredContent({ store, technicalID, expectedLastRevision: maxAcked });
    // A final delta of what the store lacked ends the restore (the full snapshot is the one taken at the start).
    expect(final.kind).toBe('Incr');
    expect(result.deltaKeys.at(-1)).toBe(final.key);
    expect(result).toMatchObject({ final: true, revision: final.lastRevision });
    const missing = acked.filter(
      (w) => kvs.get(w.key)?.value !== w.value || kvs.get(w.key)?.modRevision !== w.revision,
    );
    expect(missing).toEqual([]);
  });

  it('under a live walk serves as a member of the walking cluster, and fences when the value names another', async () => {
    const { zone, sidecar } = await servingSidecar('live');
    const cluster = await clusterIdOf(sidecar.clientUrl);
    const live = `${ME}+${OTHER}@${cluster}`;
    await zone.records.set({ name: zone.recordName, value: live, expected: ME });
    const checks = sidecar.status().owner.checks;
    await until('three checks of the live value', () => sidecar.status().owner.checks >= checks + 3);
    expect(sidecar.status().owner).toMatchObject({ mode: 'serving', lastResult: 'owner' });
    expect(await readiness(sidecar.statusUrl)).toBe(200);

    // The value names both seeds, but another cluster (a bad path restored one elsewhere): this one fences.
    await zone.records.set({ name: zone.recordName, value: `${ME}+${OTHER}@beef`, expected: live });
    await until('the final snapshot', () => sidecar.status().owner.finalSnapshot === 'taken');
    expect(sidecar.status().owner).toMatchObject({ mode: 'lost', fencedBecause: 'not-owner' });
    expect(await readiness(sidecar.statusUrl)).toBe(503);
  });

  it('rides out an outage shorter than the grace; fences after a longer one and unfences when the record names it again', async () => {
    // Prepare
    const [store, zone, proxy] = [await newBucket('unknown'), await ownerZone(), await emulatorProxy()];
    const technicalID = unique('shoot--dev--unknown');
    await zone.records.set({ name: zone.recordName, value: ME });
    const grace = 2_000;
    const { sidecar } = await startSidecar({
      technicalID,
      store,
      owner: { lookup: zone.lookupThrough(proxy), recordName: zone.recordName, identity: ME },
      ...intervals,
      unknownGrace: grace,
    });
    await until('readiness 200', async () => (await readiness(sidecar.statusUrl)) === 200);
    const writer = startWriter({ clientUrl: sidecar.clientUrl });
    const probes: { at: number; status: number }[] = [];
    let probing = true;
    const prober = (async () => {
      while (probing) {
        probes.push({ at: performance.now(), status: await readiness(sidecar.statusUrl).catch(() => 0) });
        await sleep(50);
      }
    })();
    await sleep(1_000);

    // Act 1: Route 53 unreachable for half the grace.
    const shortCut = performance.now();
    proxy.cut();
    await until('an unknown check', () => sidecar.status().owner.lastResult === 'unknown', { timeoutMs: 5_000 });
    await sleep(grace / 2);
    proxy.heal();
    await until('an owner check again', () => sidecar.status().owner.lastResult === 'owner', { timeoutMs: 5_000 });
    await sleep(500);

    // Assess 1: nothing went down.
    const shortEnd = performance.now();
    expect(probes.filter((p) => p.at >= shortCut && p.at <= shortEnd).every((p) => p.status === 200)).toBe(true);
    expect(writer.refused()).toEqual([]);
    expect(writer.acknowledged().filter((w) => w.sentAt >= shortCut && w.doneAt <= shortEnd).length).toBeGreaterThan(
      20,
    );
    expect(sidecar.status().etcd.lastFence).toBeNull();

    // Act 2: unreachable for longer than the grace.
    const longCut = performance.now();
    proxy.cut();
    await until(
      'the unknown fence',
      () => sidecar.status().owner.fencedBecause === 'unknown' && sidecar.status().etcd.lastFence !== null,
      { timeoutMs: grace + 5_000 },
    );
    const fencedAt = sidecar.status().etcd.lastFence!.refusingAt;
    await sleep(800);

    // Assess 2: fenced without a final snapshot; writes refused; not before the grace had passed.
    expect(fencedAt - longCut).toBeGreaterThanOrEqual(grace);
    expect(await readiness(sidecar.statusUrl)).toBe(503);
    expect(writer.acknowledged().filter((w) => w.sentAt > fencedAt)).toEqual([]);
    expect(writer.refused().length).toBeGreaterThan(0);
    expect(latestFinalSnapshot(await store.list(technicalID))).toBeUndefined();

    // Act 3: the record answers again and still names this seed.
    const healedAt = performance.now();
    proxy.heal();
    await until('readiness 200 again', async () => (await readiness(sidecar.statusUrl)) === 200, { timeoutMs: 5_000 });
    const servingAgain = performance.now();
    await sleep(1_500);
    probing = false;
    await prober;
    await writer.stop();

    // Assess 3: serving and snapshotting again, and the store restores without a gap up to the last acknowledged write.
    expect(servingAgain - healedAt).toBeLessThan(3_000);
    expect(sidecar.status().owner).toMatchObject({ mode: 'serving', lastResult: 'owner' });
    const acked = writer.acknowledged();
    expect(acked.filter((w) => w.sentAt > servingAgain).length).toBeGreaterThan(20);
    const maxAcked = Math.max(...acked.map((w) => w.revision!));
    await until('a delta up to the last write', () => (sidecar.status().snapshots.lastRevision ?? 0) >= maxAcked, {
      timeoutMs: 5_000,
    });
    expect(planRestore(await store.list(technicalID)).lastRevision).toBeGreaterThanOrEqual(maxAcked);
  });

  it('fenced on unknown, then finds the record moved away when it reconnects: final snapshot, fenced for good', async () => {
    // Prepare
    const [store, zone, proxy] = [await newBucket('reconnect'), await ownerZone(), await emulatorProxy()];
    const technicalID = unique('shoot--dev--reconnect');
    await zone.records.set({ name: zone.recordName, value: ME });
    const { sidecar } = await startSidecar({
      technicalID,
      store,
      owner: { lookup: zone.lookupThrough(proxy), recordName: zone.recordName, identity: ME },
      ...intervals,
      unknownGrace: 1_000,
    });
    await until('readiness 200', async () => (await readiness(sidecar.statusUrl)) === 200);
    const writer = startWriter({ clientUrl: sidecar.clientUrl });
    await sleep(1_000);

    // Act: cut off, fenced after the grace; meanwhile the orchestrator moves the record; then reconnect.
    proxy.cut();
    await until(
      'the unknown fence',
      () => sidecar.status().owner.fencedBecause === 'unknown' && sidecar.status().etcd.lastFence !== null,
      { timeoutMs: 6_000 },
    );
    await zone.records.set({ name: zone.recordName, value: OTHER, expected: ME });
    await sleep(500);
    expect(latestFinalSnapshot(await store.list(technicalID))).toBeUndefined();
    proxy.heal();
    await until('the final snapshot', () => sidecar.status().owner.finalSnapshot === 'taken', { timeoutMs: 6_000 });
    await sleep(1_200);
    await writer.stop();

    // Assess: fenced for good, and the final snapshot holds every acknowledged write.
    expect(sidecar.status().owner).toMatchObject({ mode: 'lost', fencedBecause: 'not-owner' });
    expect(sidecar.status().etcd.fenced).toBe(true);
    expect(await readiness(sidecar.statusUrl)).toBe(503);
    const fence = sidecar.status().etcd.lastFence!;
    expect(writer.acknowledged().filter((w) => w.sentAt > fence.refusingAt)).toEqual([]);
    const final = currentFinalSnapshot(await store.list(technicalID))!;
    const maxAcked = Math.max(...writer.acknowledged().map((w) => w.revision!));
    expect(final.lastRevision).toBeGreaterThanOrEqual(maxAcked);
    const { kvs } = await restoredContent({ store, technicalID, expectedLastRevision: maxAcked });
    expect(writer.acknowledged().filter((w) => kvs.get(w.key)?.value !== w.value)).toEqual([]);
  });
});
