import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COMMAND_API_VERSION, type CommandOf, type SeedCommand } from '../../../core/commands/index.js';
import { InMemoryBlobStore } from '../../../core/shootstate/index.js';
import { InMemorySnapshotStore, makeSnapshot } from '../../../core/snapshots/index.js';
import { SeedAgent } from '../../../seed/agent/agent.js';
import { ControlPlaneRuntime } from '../../../seed/agent/control-plane-runtime.js';
import { MemoryHosting } from '../../../seed/agent/memory-hosting.js';
import {
  FilePlaneStore,
  MemoryPlaneStore,
  type PlaneRecord,
  type PlaneStore,
} from '../../../seed/agent/plane-store.js';
import { agentFakes } from './agent-fakes.js';
import { untilWith } from '../../../harness/until.js';

const shootA = { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' };
const shootB = { project: 'dev', name: 'api2', technicalID: 'shoot--dev--api2' };
let serial = 0;
function cmd<T extends SeedCommand['type']>(
  type: T,
  shoot: SeedCommand['shoot'],
  fields: Record<string, unknown> = {},
): CommandOf<T> {
  serial += 1;
  return {
    apiVersion: COMMAND_API_VERSION,
    commandId: `c/${serial}`,
    shoot,
    seed: 'seed-a',
    issuedAt: new Date().toISOString(),
    type,
    ...fields,
  } as unknown as CommandOf<T>;
}
const controlPlane = (hibernated = false) => ({ hibernated, backup: { bucket: 'gl-backup-seed-a' } });

/** One agent's runtime: a new hosting is a new process (nothing runs), the store is what is on disk. */
function runtimeOn(store: PlaneStore, hosting = new MemoryHosting(), snapshots = new InMemorySnapshotStore()) {
  const runtime = new ControlPlaneRuntime({
    seed: 'seed-a',
    hosting,
    blobStore: () => new InMemoryBlobStore(),
    snapshotStore: () => snapshots,
    ownerCheck: async () => 'owner',
    planeStore: store,
  });
  return { runtime, hosting };
}

describe('plane records: a restarted agent finds its control planes again', () => {
  it('every command that changes a plane updates its record; a delete removes it', async () => {
    // Prepare
    const store = new MemoryPlaneStore();
    const { runtime } = runtimeOn(store);
    // Act + Assess
    await runtime.execute(cmd('create-control-plane', shootA, { controlPlane: controlPlane() }));
    const [created] = await store.list();
    expect(created).toMatchObject({
      shoot: shootA,
      backupBucket: 'gl-backup-seed-a',
      hibernated: false,
      migrated: false,
    });
    expect(created!.extensions.length).toBeGreaterThan(0);
    await runtime.execute(
      cmd('reconcile', shootA, { controlPlane: { ...controlPlane(true), failureTolerance: 'zone' } }),
    );
    expect(await store.list()).toMatchObject([{ hibernated: true, failureTolerance: 'zone' }]);
    await runtime.execute(cmd('delete-control-plane', shootA, { keepBackups: true, keepExternalResources: false }));
    expect(await store.list()).toEqual([]);
  });

  it('a new agent adopts what the old one recorded: a serving plane is started again from its data, a hibernated or migrated one is not', async () => {
    // Prepare: the old agent hosted a serving plane and a hibernated one, then died with its processes.
    const store = new MemoryPlaneStore();
    const old = runtimeOn(store);
    await old.runtime.execute(cmd('create-control-plane', shootA, { controlPlane: controlPlane() }));
    await old.runtime.execute(cmd('create-control-plane', shootB, { controlPlane: controlPlane(true) }));
    const next = runtimeOn(store);
    // Act
    const recorded = await next.runtime.recorded();
    const adopted = await Promise.all(recorded.map((id) => next.runtime.adopt(id)));
    // Assess: not a restore (the data is here), and only the serving plane's processes.
    expect(recorded.sort()).toEqual([shootA.technicalID, shootB.technicalID]);
    expect(adopted).toEqual([true, true]);
    expect(next.hosting.calls).toEqual([`start-etcd ${shootA.technicalID}`, `start-apiserver ${shootA.technicalID}`]);
    const planes = await next.runtime.controlPlanes();
    expect(planes.find((p) => p.technicalID === shootA.technicalID)).toMatchObject({
      shoot: { project: 'dev', name: 'api1' },
      active: true,
      etcdReady: true,
    });
    expect(planes.find((p) => p.technicalID === shootB.technicalID)).toMatchObject({
      shoot: { project: 'dev', name: 'api2' },
      active: false,
      etcdReady: false,
    });
    // Known now: neither listed nor adopted twice; a plane never recorded is not adopted.
    expect(await next.runtime.recorded()).toEqual([]);
    expect(await next.runtime.adopt(shootA.technicalID)).toBe(false);
    expect(await next.runtime.adopt('shoot--dev--never')).toBe(false);
  });

  it('keeps what the dependency watchdog holds down across a new agent, until the watchdog scales it up', async () => {
    // Prepare: the old agent's plane with kube-controller-manager held at 0 (it had 1).
    const store = new MemoryPlaneStore();
    const old = runtimeOn(store);
    await old.runtime.execute(cmd('create-control-plane', shootA, { controlPlane: controlPlane() }));
    await old.runtime.execute(cmd('scale', shootA, { component: 'kube-controller-manager', replicas: 0 }));
    expect((await store.list())[0]?.remembered).toEqual({ 'kube-controller-manager': 1 });
    const next = runtimeOn(store);
    // Act
    await next.runtime.adopt(shootA.technicalID);
    // Assess: started again without it, the hold as it was; a reconcile keeps it down too.
    const model = () => next.runtime.model(shootA.technicalID)!;
    expect(model().replicas['kube-controller-manager']).toBe(0);
    expect(model().hold).toEqual({ scaledDown: true, rememberedReplicas: { 'kube-controller-manager': 1 } });
    await next.runtime.execute(cmd('reconcile', shootA, { controlPlane: controlPlane() }));
    expect(model().replicas['kube-controller-manager']).toBe(0);
    // The watchdog's scale-up releases it, and the record with it.
    await next.runtime.execute(cmd('scale', shootA, { component: 'kube-controller-manager', replicas: 1 }));
    expect(model().replicas['kube-controller-manager']).toBe(1);
    expect((await store.list())[0]?.remembered).toBeUndefined();
  });

  it('a plane migrated away is adopted without processes, so the garden can release it', async () => {
    const store = new MemoryPlaneStore();
    const snapshots = new InMemorySnapshotStore();
    const old = runtimeOn(store, new MemoryHosting(), snapshots);
    await old.runtime.execute(cmd('create-control-plane', shootA, { controlPlane: controlPlane() }));
    await old.runtime.execute(cmd('migrate', shootA, { stateBucket: 'gl-state' }));
    expect(await store.list()).toMatchObject([{ migrated: true }]);
    const next = runtimeOn(store);
    expect(await next.runtime.adopt(shootA.technicalID)).toBe(true);
    expect(next.hosting.calls).toEqual([]);
    expect(await next.runtime.controlPlanes()).toMatchObject([{ technicalID: shootA.technicalID, active: false }]);
  });
});

/** Memory hosting whose restores fail (a download that broke off), as an agent killed mid-restore leaves it. */
class FailingRestoreHosting extends MemoryHosting {
  override async startEtcd(spec: Parameters<MemoryHosting['startEtcd']>[0]) {
    if (spec.restore) throw new Error('the download broke off');
    return super.startEtcd(spec);
  }
}

describe('a restore that never finished', () => {
  it('is adopted without starting etcd (its data dir is no copy of anything); the retried restore starts it', async () => {
    // Prepare: a destination whose restore failed half-way.
    const store = new MemoryPlaneStore();
    const snapshots = new InMemorySnapshotStore();
    const full = makeSnapshot({
      technicalID: shootA.technicalID,
      kind: 'Full',
      startRevision: 0,
      lastRevision: 42,
      createdOn: 1,
      compressionSuffix: '',
      final: true,
    });
    await snapshots.put(full.key, new Uint8Array([1]));
    const restore = cmd('restore', shootA, {
      hibernated: false,
      etcd: { bucket: 'gl-backup-seed-a', expectedLastRevision: 42, final: true },
    });
    await expect(
      runtimeOn(store, new FailingRestoreHosting(), snapshots).runtime.execute(restore),
    ).rejects.toMatchObject({ failure: 'RuntimeUnavailable' });
    expect(await store.list()).toMatchObject([{ restoring: true }]);
    // Act: a new agent adopts it.
    const next = runtimeOn(store, new MemoryHosting(), snapshots);
    expect(await next.runtime.adopt(shootA.technicalID)).toBe(true);
    // Assess: nothing started, reported not ready; the migration's retry restores and clears the mark.
    expect(next.hosting.calls).toEqual([]);
    expect(await next.runtime.controlPlanes()).toMatchObject([
      { technicalID: shootA.technicalID, active: false, etcdReady: false },
    ]);
    expect(await next.runtime.execute(restore)).toMatchObject({ etcd: { restoredRevision: 42 } });
    expect(next.hosting.calls).toContain(`restore-etcd ${shootA.technicalID}`);
    expect((await store.list())[0]?.restoring).toBeUndefined();
  });
});

/** Memory hosting whose etcd start waits for the test: an adoption still starting its plane. */
class SlowStartHosting extends MemoryHosting {
  release: (() => void) | undefined;
  override async startEtcd(spec: Parameters<MemoryHosting['startEtcd']>[0]) {
    await new Promise<void>((resolve) => (this.release = resolve));
    return super.startEtcd(spec);
  }
}

const agents: SeedAgent[] = [];
const held: SlowStartHosting[] = [];
afterEach(async () => {
  for (const h of held.splice(0)) h.release?.();
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

const until = untilWith({ timeoutMs: 4_000, intervalMs: 5 });

describe('SeedAgent after a restart', () => {
  it('adopts its recorded planes before running a queued command of the same shoot, and reports them', async () => {
    // Prepare: what the old agent left, and a Delete for that shoot already in the queue.
    const store = new MemoryPlaneStore();
    await runtimeOn(store).runtime.execute(cmd('create-control-plane', shootA, { controlPlane: controlPlane() }));
    const f = agentFakes();
    const hosting = new SlowStartHosting();
    held.push(hosting);
    f.inbox.push(
      JSON.stringify({
        ...cmd('delete-control-plane', shootA, { keepBackups: true, keepExternalResources: false }),
        taskToken: 'tok-delete',
      }),
    );
    const agent = new SeedAgent({
      seed: 'seed-a',
      garden: f.garden,
      inbox: () => f.inbox,
      answers: f.answers,
      heartbeatIntervalMs: 50,
      runtime: () => runtimeOn(store, hosting).runtime,
    });
    agents.push(agent);
    // Act
    await agent.start();
    await until('the etcd start to be held', () => hosting.release !== undefined);
    // Assess: the delete waits for the adoption's start; the heartbeat already names the plane.
    await until('a heartbeat naming the plane', () =>
      f.heartbeats.some((h) => h.controlPlanes.some((p) => p.technicalID === shootA.technicalID)),
    );
    expect(f.answered).toEqual([]);
    hosting.release!();
    await until('one answer', () => f.answered.length === 1);
    expect(f.answered).toMatchObject([{ token: 'tok-delete', kind: 'success' }]);
    expect(hosting.calls).toEqual([
      `start-etcd ${shootA.technicalID}`,
      `start-apiserver ${shootA.technicalID}`,
      `stop-apiserver ${shootA.technicalID}`,
      `stop-etcd ${shootA.technicalID}`,
    ]);
    expect(await store.list()).toEqual([]);
  });
});

describe('FilePlaneStore', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const workDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'plane-store-'));
    dirs.push(d);
    return d;
  };
  const record = (shoot: PlaneRecord['shoot']): PlaneRecord => ({
    shoot,
    backupBucket: 'b',
    hibernated: false,
    migrated: false,
    extensions: [],
  });

  it('keeps a record per plane next to its data, replaces it whole, and removes it', async () => {
    const dir = workDir();
    const store = new FilePlaneStore({ workDir: dir });
    await store.save(record(shootA));
    await store.save({ ...record(shootA), hibernated: true });
    await store.save(record(shootB));
    expect(await store.list()).toEqual([{ ...record(shootA), hibernated: true }, record(shootB)]);
    expect(readdirSync(join(dir, shootA.technicalID))).toEqual(['plane.json']);
    await store.remove(shootA.technicalID);
    expect(await store.list()).toEqual([record(shootB)]);
  });

  it('skips and reports a record that does not parse or names another plane; a missing work dir has none', async () => {
    const dir = workDir();
    const logged: Record<string, unknown>[] = [];
    const store = new FilePlaneStore({ workDir: dir, log: (e) => logged.push(e) });
    for (const [name, text] of [
      ['shoot--x--torn', '{"shoot": {"technicalID"'],
      ['shoot--x--other', JSON.stringify(record(shootA))],
      ['shoot--x--logs', undefined],
    ] as const) {
      mkdirSync(join(dir, name));
      if (text) writeFileSync(join(dir, name, 'plane.json'), text);
    }
    expect(await store.list()).toEqual([]);
    expect(logged.map((e) => e.technicalID).sort()).toEqual(['shoot--x--other', 'shoot--x--torn']);
    expect(await new FilePlaneStore({ workDir: join(dir, 'absent') }).list()).toEqual([]);
  });
});
