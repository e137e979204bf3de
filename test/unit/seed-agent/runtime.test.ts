import { describe, expect, it, vi } from 'vitest';
import { COMMAND_API_VERSION, type CommandOf, type SeedCommand } from '../../../core/commands/index.js';
import { MemoryExtensionWorld } from '../../../core/extensions/index.js';
import { hostedControlPlane } from '../../../core/model/seed.js';
import { generateShootSecrets } from '../../../core/pki/shoot-secrets.js';
import {
  InMemoryBlobStore,
  LocalDataKeys,
  openSecrets,
  sealSecrets,
  seedContext,
} from '../../../core/shootstate/index.js';
import { DEFAULT_SIDECAR_SETTINGS } from '../../../harness/fixtures/index.js';
import { InMemorySnapshotStore, makeSnapshot } from '../../../core/snapshots/index.js';
import type { OwnerCheckResult } from '../../../core/ownership/index.js';
import { ControlPlaneRuntime } from '../../../seed/agent/control-plane-runtime.js';
import { AgentCommandError } from '../../../seed/agent/errors.js';
import { FailingSeedRuntime } from '../../../seed/agent/failing-runtime.js';
import { MemoryHosting } from '../../../seed/agent/memory-hosting.js';
import type { ApiServerSpec } from '../../../seed/agent/components.js';
import { storeFullSnapshot } from './agent-fakes.js';

const shoot = { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' };
let serial = 0;
function cmd<T extends SeedCommand['type']>(type: T, fields: Record<string, unknown> = {}): CommandOf<T> {
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
const controlPlane = { hibernated: false, backup: { bucket: 'gl-backup-seed-a' } };

function setup(options: { owner?: OwnerCheckResult; hosting?: MemoryHosting } = {}) {
  const hosting = options.hosting ?? new MemoryHosting();
  const snapshots = new InMemorySnapshotStore();
  const blobs = new InMemoryBlobStore();
  let owner: OwnerCheckResult = options.owner ?? 'owner';
  const runtime = new ControlPlaneRuntime({
    seed: 'seed-a',
    hosting,
    blobStore: () => blobs,
    snapshotStore: () => snapshots,
    ownerCheck: async () => owner,
  });
  return { hosting, snapshots, runtime, setOwner: (o: OwnerCheckResult) => (owner = o) };
}

describe('ControlPlaneRuntime on MemoryHosting', () => {
  it('creates a control plane: extensions reconciled, etcd and kube-apiserver started, reported in the heartbeat', async () => {
    // Prepare
    const { runtime, hosting } = setup();

    // Act
    const result = await runtime.execute(cmd('create-control-plane', { controlPlane }));
    const [plane] = await runtime.controlPlanes();

    // Assess
    expect(result.etcdReady).toBe(true);
    expect(result.extensions.length).toBeGreaterThan(0);
    expect(hosting.calls).toEqual(['start-etcd shoot--dev--api1', 'start-apiserver shoot--dev--api1']);
    expect(plane).toMatchObject({
      technicalID: shoot.technicalID,
      active: true,
      etcdReady: true,
      internalProbe: 'Success',
      ownerCheck: 'owner',
    });
    expect(plane?.externalUrl).toMatch(/^http:/);
    expect(plane?.components?.['kube-controller-manager']).toEqual({ replicas: 1 });
  });

  it("reports what its sidecars run with, in the heartbeat's shape, when the hosting says it (nothing otherwise)", async () => {
    const settings = DEFAULT_SIDECAR_SETTINGS;
    const reporting = setup({ hosting: new MemoryHosting({ sidecarSettings: settings }) });
    await reporting.runtime.execute(cmd('create-control-plane', { controlPlane }));
    const [plane] = await reporting.runtime.controlPlanes();
    expect(plane?.sidecarSettings).toEqual(settings);
    expect(hostedControlPlane.parse(plane)).toMatchObject({ sidecarSettings: settings });

    const silent = setup();
    await silent.runtime.execute(cmd('create-control-plane', { controlPlane }));
    expect((await silent.runtime.controlPlanes())[0]).not.toHaveProperty('sidecarSettings');
  });

  it('a broken load balancer leaves the internal probe Success; a broken internal address crash-loops the dependents', async () => {
    const { runtime, hosting } = setup();
    await runtime.execute(cmd('create-control-plane', { controlPlane }));

    hosting.breakExternal(shoot.technicalID);
    const [external] = await runtime.controlPlanes();
    expect(external?.internalProbe).toBe('Success');
    expect(external?.pods?.every((p) => p.state === 'Running')).toBe(true);

    hosting.breakInternal(shoot.technicalID);
    const [internal] = await runtime.controlPlanes();
    expect(internal?.internalProbe).toBe('Failure');
    const kcm = internal?.pods?.find((p) => p.labels.app === 'kube-controller-manager');
    expect(kcm?.state).toBe('CrashLoopBackOff');

    hosting.breakInternal(shoot.technicalID, false);
    const restart = await runtime.execute(cmd('restart', { pod: kcm!.name, dependency: 'kube-apiserver' }));
    expect(restart).toEqual({ pod: kcm!.name, restarted: true });
    const [after] = await runtime.controlPlanes();
    // Only the restarted pod is back: the weeder restarts each crash-looping dependent itself.
    expect(after?.pods?.find((p) => p.labels.app === 'kube-controller-manager')?.state).toBe('Running');
    expect(after?.pods?.find((p) => p.labels.app === 'kube-scheduler')?.state).toBe('CrashLoopBackOff');
  });

  it('scale holds a component down through a later reconcile', async () => {
    const { runtime } = setup();
    await runtime.execute(cmd('create-control-plane', { controlPlane }));

    expect(await runtime.execute(cmd('scale', { component: 'kube-controller-manager', replicas: 0 }))).toEqual({
      component: 'kube-controller-manager',
      previousReplicas: 1,
      replicas: 0,
    });
    await runtime.execute(cmd('reconcile', { controlPlane }));

    expect(runtime.model(shoot.technicalID)?.replicas['kube-controller-manager']).toBe(0);
    expect(await runtime.execute(cmd('scale', { component: 'kube-controller-manager', replicas: 1 }))).toMatchObject({
      previousReplicas: 0,
      replicas: 1,
    });
  });

  it('migrate then delete: the plane goes inactive, then away; a repeated delete answers deleted false', async () => {
    const { runtime, hosting } = setup();
    await runtime.execute(cmd('create-control-plane', { controlPlane }));

    const migrated = await runtime.execute(cmd('migrate', { stateBucket: 'state' }));
    expect(migrated.shootState.extensions.length).toBeGreaterThan(0);
    expect((await runtime.controlPlanes())[0]?.active).toBe(false);

    expect(
      await runtime.execute(cmd('delete-control-plane', { keepBackups: true, keepExternalResources: true })),
    ).toMatchObject({ deleted: true });
    expect(
      await runtime.execute(cmd('delete-control-plane', { keepBackups: true, keepExternalResources: true })),
    ).toEqual({ deleted: false, extensionsDropped: 0 });
    expect(await runtime.controlPlanes()).toEqual([]);
    expect(hosting.calls.slice(-2)).toEqual(['stop-apiserver shoot--dev--api1', 'stop-etcd shoot--dev--api1']);
  });

  it('a create or reconcile fails NotOwner while the owner record names another seed, whether or not the seed hosts the plane; an unknown owner does not refuse', async () => {
    // Prepare: a seed the shoot moved away from (a command queued before the move reaches it late).
    const { runtime, hosting, setOwner } = setup({ owner: 'not-owner' });
    // Act / Assess
    for (const type of ['create-control-plane', 'reconcile'] as const) {
      await expect(
        runtime.execute(cmd(type, { controlPlane: { ...controlPlane, hibernated: true } })),
      ).rejects.toMatchObject({ failure: 'NotOwner' });
    }
    expect(await runtime.controlPlanes()).toEqual([]);
    expect(hosting.calls).toEqual([]);
    setOwner('owner');
    await runtime.execute(cmd('create-control-plane', { controlPlane }));
    const calls = hosting.calls.length;
    setOwner('not-owner');
    // Hosted here but moved away (a Hibernate or wake-up queued before a bad-case move): left as it is for the release.
    await expect(
      runtime.execute(cmd('reconcile', { controlPlane: { ...controlPlane, hibernated: true } })),
    ).rejects.toMatchObject({ failure: 'NotOwner' });
    expect(hosting.calls.length).toBe(calls);
    expect(runtime.model(shoot.technicalID)?.hibernated).toBe(false);
    setOwner('unknown');
    expect(
      await runtime.execute(cmd('reconcile', { controlPlane: { ...controlPlane, hibernated: true } })),
    ).toMatchObject({ etcdReady: false });
  });

  it('restore: NotOwner until the owner record names the seed; then etcd from the bucket and the extensions from the ShootState', async () => {
    // Prepare: a source migrates, its snapshots are in the destination's bucket.
    const source = setup();
    await source.runtime.execute(cmd('create-control-plane', { controlPlane }));
    const { shootState } = await source.runtime.execute(cmd('migrate', { stateBucket: 'state' }));
    const destination = setup({ owner: 'not-owner' });
    await storeFullSnapshot(destination.snapshots, { technicalID: shoot.technicalID, lastRevision: 42, final: true });
    const restore = cmd('restore', {
      hibernated: false,
      etcd: { bucket: 'gl-backup-seed-b', expectedLastRevision: 42, final: true },
    });

    // Act / Assess
    await expect(destination.runtime.execute(restore)).rejects.toMatchObject({ failure: 'NotOwner' });
    destination.setOwner('owner');
    expect(await destination.runtime.execute(restore)).toEqual({
      etcd: { restoredRevision: 42, snapshots: 1, final: true },
    });
    const extensions = await destination.runtime.execute(
      cmd('restore', { hibernated: false, extensions: { shootState, shootStateVersion: 1, stateBucket: 'state' } }),
    );
    expect(extensions.extensions?.length).toBeGreaterThan(0);
    expect(destination.hosting.calls).toContain('restore-etcd shoot--dev--api1');
    expect((await destination.runtime.controlPlanes())[0]).toMatchObject({ active: true, internalProbe: 'Success' });
  });

  it('a restore reports the plane active only once kube-apiserver started behind etcd, never while it starts', async () => {
    // Prepare: a hosting whose kube-apiserver start waits until the test has taken a heartbeat.
    let release!: () => void;
    const started = new Promise<void>((resolve) => (release = resolve));
    let starting!: () => void;
    const reached = new Promise<void>((resolve) => (starting = resolve));
    class SlowApiServer extends MemoryHosting {
      override async startApiServer(technicalID: string): Promise<void> {
        starting();
        await started;
        return super.startApiServer(technicalID);
      }
    }
    const destination = setup({ hosting: new SlowApiServer() });
    await storeFullSnapshot(destination.snapshots, { technicalID: shoot.technicalID, lastRevision: 42, final: true });

    // Act: a heartbeat while etcd serves and kube-apiserver starts, and one after the restore.
    const restore = destination.runtime.execute(
      cmd('restore', {
        hibernated: false,
        etcd: { bucket: 'gl-backup-seed-b', expectedLastRevision: 42, final: true },
      }),
    );
    await reached;
    const [during] = await destination.runtime.controlPlanes();
    release();
    await restore;
    const [after] = await destination.runtime.controlPlanes();

    // Assess: the switch of the API record never sees an active plane without its load balancer.
    expect(during).toMatchObject({ active: false, etcdReady: true });
    expect(during?.externalUrl).toBeUndefined();
    expect(after).toMatchObject({ active: true, internalProbe: 'Success' });
    expect(after?.externalUrl).toMatch(/^http:/);
  });

  it('a restore answers once kube-apiserver is ready, and fails RuntimeUnavailable where it never is', async () => {
    // Prepare: a hosting whose kube-apiserver is ready when the test says so, or never.
    let ready: ((outcome: Error | undefined) => void) | undefined;
    class SlowReady extends MemoryHosting {
      override async apiServerReady(): Promise<void> {
        const outcome = await new Promise<Error | undefined>((resolve) => (ready = resolve));
        if (outcome) throw outcome;
      }
    }
    const destination = setup({ hosting: new SlowReady() });
    await storeFullSnapshot(destination.snapshots, { technicalID: shoot.technicalID, lastRevision: 42, final: true });
    const restore = () =>
      destination.runtime.execute(
        cmd('restore', {
          hibernated: false,
          etcd: { bucket: 'gl-backup-seed-b', expectedLastRevision: 42, final: true },
        }),
      );

    // Act, Assess: not answered while kube-apiserver starts; answered once it is ready.
    let answered = false;
    const first = restore().then(() => (answered = true));
    await vi.waitFor(() => expect(ready).toBeTypeOf('function'));
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false);
    ready!(undefined);
    await first;
    ready = undefined;

    // Act, Assess: a kube-apiserver that is never ready fails the restore.
    const second = restore();
    await vi.waitFor(() => expect(ready).toBeTypeOf('function'));
    ready!(new Error('kube-apiserver was not ready within 120000 ms'));
    await expect(second).rejects.toMatchObject({ failure: 'RuntimeUnavailable' });
  });

  it("reports its own owner check for a fenced plane whose hosting does not see the sidecar's, and none for a stopped one", async () => {
    // Prepare: a hosting that reads workloads, not sidecars (as the kubernetes hosting does).
    class WorkloadsOnly extends MemoryHosting {
      override async etcd(technicalID: string) {
        const { ownerCheck: _unseen, ...view } = await super.etcd(technicalID);
        return view;
      }
    }
    const hosting = new WorkloadsOnly();
    const { runtime, setOwner } = setup({ hosting });
    await runtime.execute(cmd('create-control-plane', { controlPlane }));
    const serving = (await runtime.controlPlanes())[0];

    // Act: another seed owns the shoot now and its etcd fenced; then it is stopped.
    setOwner('not-owner');
    hosting.setEtcdAvailable(shoot.technicalID, false);
    const fenced = (await runtime.controlPlanes())[0];
    await hosting.stopEtcd(shoot.technicalID);
    const stopped = (await runtime.controlPlanes())[0];

    // Assess: the garden can release the fenced plane (releasable needs not-owner); nothing asked for the others.
    expect(serving).not.toHaveProperty('ownerCheck');
    expect(fenced).toMatchObject({ active: false, ownerCheck: 'not-owner' });
    expect(stopped).not.toHaveProperty('ownerCheck');
  });

  it('a restore ahead prepares a standby without an owner check; the restore catches it up once the seed owns the shoot', async () => {
    // Prepare: the source still owns the shoot; its full snapshot is copied ahead (the hosting restores what a plan would).
    const destination = setup({
      owner: 'not-owner',
      hosting: new MemoryHosting({ restoreRevision: (spec) => spec.restore?.expectedLastRevision ?? 40 }),
    });
    const full = makeSnapshot({
      technicalID: shoot.technicalID,
      kind: 'Full',
      startRevision: 0,
      lastRevision: 40,
      createdOn: 1,
      compressionSuffix: '',
      final: false,
    });
    await destination.snapshots.put(full.key, new Uint8Array([1]));

    // Act 1: the restore ahead.
    const ahead = await destination.runtime.execute(
      cmd('restore', { hibernated: false, etcd: { bucket: 'gl-backup-seed-b', final: false, ahead: true } }),
    );

    // Assess 1: a standby, reported inactive with this seed's own owner check, not crash-looping anything.
    expect(ahead).toEqual({ etcd: { restoredRevision: 40, snapshots: 1, final: false, ahead: true } });
    expect(destination.hosting.calls).toEqual(['restore-etcd-ahead shoot--dev--api1']);
    const [standby] = await destination.runtime.controlPlanes();
    expect(standby).toMatchObject({ active: false, ownerCheck: 'not-owner', etcdReady: false });
    expect(JSON.stringify(standby)).not.toContain('CrashLoop');

    // Act 2: the second round (a delta copied since): the standby is refreshed, still without an owner check.
    const delta = makeSnapshot({
      technicalID: shoot.technicalID,
      kind: 'Incr',
      startRevision: 41,
      lastRevision: 41,
      createdOn: 2,
      compressionSuffix: '',
      final: false,
    });
    await destination.snapshots.put(delta.key, new Uint8Array([1]));
    const refreshed = await destination.runtime.execute(
      cmd('restore', { hibernated: false, etcd: { bucket: 'gl-backup-seed-b', final: false, ahead: true } }),
    );
    expect(refreshed).toEqual({
      etcd: { restoredRevision: 40, snapshots: 2, final: false, ahead: true, aheadRevision: 40 },
    });
    expect((await destination.runtime.controlPlanes())[0]).toMatchObject({
      active: false,
      ownerCheck: 'not-owner',
      etcdReady: false,
    });

    // Act 3: the final delta is copied, the owner record names the seed, the restore comes.
    const final = makeSnapshot({
      technicalID: shoot.technicalID,
      kind: 'Incr',
      startRevision: 42,
      lastRevision: 42,
      createdOn: 3,
      compressionSuffix: '',
      final: true,
    });
    await destination.snapshots.put(final.key, new Uint8Array([1]));
    destination.setOwner('owner');
    const restored = await destination.runtime.execute(
      cmd('restore', {
        hibernated: false,
        etcd: { bucket: 'gl-backup-seed-b', expectedLastRevision: 42, final: true },
      }),
    );

    // Assess 3: caught up from the standby, serving.
    expect(restored).toEqual({ etcd: { restoredRevision: 42, snapshots: 3, final: true, aheadRevision: 40 } });
    expect(destination.hosting.calls.slice(0, 3)).toEqual([
      'restore-etcd-ahead shoot--dev--api1',
      'refresh-etcd-ahead shoot--dev--api1',
      'catch-up-etcd shoot--dev--api1',
    ]);
    expect((await destination.runtime.controlPlanes())[0]).toMatchObject({ active: true, ownerCheck: 'owner' });
  });

  it.each([
    ['a hibernated shoot', { hibernated: true }, false],
    [
      'an HA shoot (its members restore together)',
      {
        hibernated: false,
        controlPlane: { hibernated: false, failureTolerance: 'zone', backup: { bucket: 'gl-backup-seed-a' } },
      },
      false,
    ],
    ['a plane that runs here', { hibernated: false }, true],
  ])('a restore ahead of %s does nothing and answers ahead false', async (_case, fields, running) => {
    const { runtime, snapshots, hosting } = setup({ owner: 'owner' });
    const full = makeSnapshot({
      technicalID: shoot.technicalID,
      kind: 'Full',
      startRevision: 0,
      lastRevision: 7,
      createdOn: 1,
      compressionSuffix: '',
      final: false,
    });
    await snapshots.put(full.key, new Uint8Array([1]));
    if (running) await runtime.execute(cmd('create-control-plane', { controlPlane }));
    const calls = hosting.calls.length;

    const result = await runtime.execute(
      cmd('restore', { ...fields, etcd: { bucket: 'gl-backup-seed-a', final: false, ahead: true } }),
    );

    expect(result.etcd).toMatchObject({ ahead: false });
    expect(hosting.calls.slice(calls)).toEqual([]);
  });

  it('restore of snapshots short of the expected revision fails EtcdRestoreFailed before starting anything', async () => {
    const { runtime, snapshots, hosting } = setup();
    const full = makeSnapshot({
      technicalID: shoot.technicalID,
      kind: 'Full',
      startRevision: 0,
      lastRevision: 10,
      createdOn: 1,
      compressionSuffix: '',
      final: false,
    });
    await snapshots.put(full.key, new Uint8Array([1]));

    const failure = await runtime
      .execute(cmd('restore', { hibernated: false, etcd: { bucket: 'b', expectedLastRevision: 50, final: false } }))
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AgentCommandError);
    expect((failure as AgentCommandError).failure).toBe('EtcdRestoreFailed');
    expect(hosting.calls).toEqual([]);
  });

  it.each(['scale', 'restart', 'migrate'] as const)('%s of an unknown shoot is ControlPlaneNotFound', async (type) => {
    const { runtime } = setup();
    const fields = {
      scale: { component: 'cluster-autoscaler', replicas: 0 },
      restart: { pod: 'p', dependency: 'etcd' },
      migrate: { stateBucket: 'state' },
    }[type];
    await expect(runtime.execute(cmd(type, fields))).rejects.toMatchObject({ failure: 'ControlPlaneNotFound' });
  });

  it('the failing runtime fails every command RuntimeUnavailable', async () => {
    await expect(
      new FailingSeedRuntime().execute(cmd('scale', { component: 'cluster-autoscaler', replicas: 0 })),
    ).rejects.toMatchObject({ failure: 'RuntimeUnavailable' });
  });
});

describe('ControlPlaneRuntime between two seeds', () => {
  function seeds() {
    const world = new MemoryExtensionWorld();
    const blobs = new InMemoryBlobStore('gl-state');
    const backups = new InMemorySnapshotStore();
    const common = { world, blobStore: () => blobs, snapshotStore: () => backups };
    return {
      world,
      backups,
      source: new ControlPlaneRuntime({ seed: 'src', hosting: new MemoryHosting(), ...common }),
      destination: new ControlPlaneRuntime({ seed: 'dst', hosting: new MemoryHosting(), ...common }),
    };
  }

  it('migrates on the source, deletes there, and restores on the destination adopting the same external resources', async () => {
    // Prepare
    const { world, backups, source, destination } = seeds();
    await source.execute(cmd('create-control-plane', { seed: 'src', controlPlane }));
    await backups.put(
      makeSnapshot({
        technicalID: shoot.technicalID,
        kind: 'Full',
        startRevision: 0,
        lastRevision: 101,
        createdOn: 1,
        compressionSuffix: '',
        final: true,
      }).key,
      new Uint8Array([1]),
    );

    // Act
    const migrated = await source.execute(
      cmd('migrate', { seed: 'src', commandId: 'm/migrate-extensions', stateBucket: 'gl-state' }),
    );
    const again = await source.execute(
      cmd('migrate', { seed: 'src', commandId: 'm/migrate-extensions', stateBucket: 'gl-state' }),
    );
    const deleted = await source.execute(
      cmd('delete-control-plane', { seed: 'src', keepBackups: true, keepExternalResources: true }),
    );
    const deletedAgain = await source.execute(
      cmd('delete-control-plane', { seed: 'src', keepBackups: true, keepExternalResources: true }),
    );
    const restored = await destination.execute(
      cmd('restore', {
        seed: 'dst',
        hibernated: false,
        etcd: { bucket: 'gl-backup-dst', expectedLastRevision: 101, final: true },
        extensions: { shootState: migrated.shootState, shootStateVersion: 1, stateBucket: 'gl-state' },
      }),
    );

    // Assess
    expect(migrated.shootState.extensions).toHaveLength(9);
    expect(migrated.extensions.every((e) => e.action === 'migrate')).toBe(true);
    expect(again.shootState.extensions).toEqual(migrated.shootState.extensions);
    expect(deleted).toEqual({ deleted: true, extensionsDropped: 9 });
    expect(deletedAgain).toEqual({ deleted: false, extensionsDropped: 0 });
    expect(restored.etcd).toEqual({ restoredRevision: 101, snapshots: 1, final: true });
    expect(restored.extensions?.every((e) => e.action === 'restore')).toBe(true);
    // The source created its shoot's 9 external resources (the DNSRecord's too) once; the restore adopted them instead of recreating.
    expect(world.externalKeys()).toHaveLength(9);
    expect(world.externalKeys().every((k) => world.externalResource(k)?.creations === 1)).toBe(true);
    expect(world.seedObjects('src')).toEqual([]);
    expect(world.seedObjects('dst')).toHaveLength(9);
    expect(await source.controlPlanes()).toEqual([]);
    expect(await destination.controlPlanes()).toEqual([
      expect.objectContaining({ technicalID: shoot.technicalID, active: true, etcdReady: true }),
    ]);
  });

  it('refuses a migrate for an unknown control plane; a delete of a never-known one leaves nothing behind', async () => {
    const { source } = seeds();
    await source.execute(cmd('delete-control-plane', { seed: 'src', keepBackups: true, keepExternalResources: true }));
    await source.execute(
      cmd('create-control-plane', {
        seed: 'src',
        shoot: { project: 'dev', name: 'other', technicalID: 'shoot--dev--other' },
        controlPlane,
      }),
    );

    await expect(source.execute(cmd('migrate', { seed: 'src', stateBucket: 'gl-state' }))).rejects.toMatchObject({
      failure: 'ControlPlaneNotFound',
    });
    expect((await source.controlPlanes()).map((p) => p.technicalID)).toEqual(['shoot--dev--other']);
  });
});

describe("ControlPlaneRuntime and the shoot's secrets", () => {
  it('opens the secrets a command carries under its own seed and hands them to the hosting before anything starts', async () => {
    // Prepare
    const keys = new LocalDataKeys();
    const secrets = await generateShootSecrets(new Date());
    const sealed = await sealSecrets(secrets, keys, seedContext(shoot.technicalID, 'seed-a'));
    const hosting = new MemoryHosting();
    const runtime = new ControlPlaneRuntime({
      seed: 'seed-a',
      hosting,
      blobStore: () => new InMemoryBlobStore(),
      snapshotStore: () => new InMemorySnapshotStore(),
      openSecrets: (s, ref) => openSecrets(s, keys, seedContext(ref.technicalID, 'seed-a')),
    });

    // Act
    await runtime.execute(cmd('create-control-plane', { controlPlane, secrets: sealed }));
    const forOther = await sealSecrets(secrets, keys, seedContext(shoot.technicalID, 'seed-b'));
    const refused = await runtime
      .execute(cmd('reconcile', { controlPlane, secrets: forOther }))
      .catch((e: unknown) => e);

    // Assess
    expect(hosting.secrets.get(shoot.technicalID)).toEqual(secrets);
    expect(refused).toBeInstanceOf(AgentCommandError);
    expect((refused as AgentCommandError).failure).toBe('ShootStateUnavailable');
    expect((refused as Error).message).toContain('seed-a');
  });

  it("a restore ahead hands the secrets to the hosting before etcd starts: its peers take TLS from the shoot's etcd peer CA", async () => {
    // Prepare: a hosting that notes, at each etcd start, whether it holds the shoot's secrets.
    const keys = new LocalDataKeys();
    const secrets = await generateShootSecrets(new Date());
    const sealed = await sealSecrets(secrets, keys, seedContext(shoot.technicalID, 'seed-a'));
    const withSecrets: boolean[] = [];
    class NotingHosting extends MemoryHosting {
      override async startEtcd(spec: Parameters<MemoryHosting['startEtcd']>[0]) {
        withSecrets.push(this.secrets.get(spec.shoot.technicalID)?.etcdPeerCA !== undefined);
        return super.startEtcd(spec);
      }
    }
    const snapshots = new InMemorySnapshotStore();
    const runtime = new ControlPlaneRuntime({
      seed: 'seed-a',
      hosting: new NotingHosting(),
      blobStore: () => new InMemoryBlobStore(),
      snapshotStore: () => snapshots,
      ownerCheck: async () => 'not-owner',
      openSecrets: (s, ref) => openSecrets(s, keys, seedContext(ref.technicalID, 'seed-a')),
    });
    await storeFullSnapshot(snapshots, { technicalID: shoot.technicalID, lastRevision: 40, final: false });

    // Act
    await runtime.execute(
      cmd('restore', {
        hibernated: false,
        secrets: sealed,
        etcd: { bucket: 'gl-backup-seed-b', final: false, ahead: true },
      }),
    );

    // Assess
    expect(withSecrets).toEqual([true]);
  });

  it('a restore ahead with the secrets starts kube-apiserver alone on the standby, reports only its load balancer; the restore keeps it', async () => {
    // Prepare: a destination that does not own the shoot yet, its secrets sealed for it, a full snapshot copied ahead.
    const keys = new LocalDataKeys();
    const sealed = await sealSecrets(
      await generateShootSecrets(new Date()),
      keys,
      seedContext(shoot.technicalID, 'seed-a'),
    );
    const starts: ApiServerSpec[] = [];
    class RecordingHosting extends MemoryHosting {
      override async startApiServer(technicalID: string, options: ApiServerSpec = {}): Promise<void> {
        starts.push(options);
        return super.startApiServer(technicalID);
      }
    }
    const hosting = new RecordingHosting({ restoreRevision: (spec) => spec.restore?.expectedLastRevision ?? 40 });
    const snapshots = new InMemorySnapshotStore();
    let owner: OwnerCheckResult = 'not-owner';
    const runtime = new ControlPlaneRuntime({
      seed: 'seed-a',
      hosting,
      blobStore: () => new InMemoryBlobStore(),
      snapshotStore: () => snapshots,
      ownerCheck: async () => owner,
      openSecrets: (s, ref) => openSecrets(s, keys, seedContext(ref.technicalID, 'seed-a')),
    });
    await storeFullSnapshot(snapshots, { technicalID: shoot.technicalID, lastRevision: 40, final: false });
    const apiDomain = 'api.api1.dev.shoots.example.com';

    // Act 1: the restore ahead.
    await runtime.execute(
      cmd('restore', {
        hibernated: false,
        secrets: sealed,
        apiDomain,
        etcd: { bucket: 'gl-backup-seed-b', final: false, ahead: true },
      }),
    );
    const [standby] = await runtime.controlPlanes();

    // Assess 1: kube-apiserver alone (its controllers at 0), under the API domain; the heartbeat tells only
    // the load balancer it will serve behind (the hand-over's target), no probe of a kube-apiserver that serves no one.
    expect(hosting.calls).toEqual(['restore-etcd-ahead shoot--dev--api1', 'start-apiserver shoot--dev--api1']);
    expect(starts).toEqual([{ apiDomain, standby: true }]);
    expect(standby).toMatchObject({ active: false, etcdReady: false });
    expect(standby?.internalProbe).toBeUndefined();
    expect(standby?.externalUrl).toBe('http://memory.invalid/shoot--dev--api1');

    // Act 2: the seed owns the shoot, the final delta is copied, the restore comes.
    await storeFullSnapshot(snapshots, { technicalID: shoot.technicalID, lastRevision: 42, final: true });
    owner = 'owner';
    await runtime.execute(
      cmd('restore', {
        hibernated: false,
        secrets: sealed,
        apiDomain,
        etcd: { bucket: 'gl-backup-seed-b', expectedLastRevision: 42, final: true },
      }),
    );

    // Assess 2: the same kube-apiserver (never stopped), now with its controllers; the plane is active.
    expect(hosting.calls).not.toContain('stop-apiserver shoot--dev--api1');
    expect(starts.at(-1)).toEqual({ apiDomain, replicas: 1 });
    expect(hosting.calls).toContain('scale kube-controller-manager shoot--dev--api1 1');
    expect((await runtime.controlPlanes())[0]).toMatchObject({ active: true, internalProbe: 'Success' });
  });
});
