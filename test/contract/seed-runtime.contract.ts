import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_API_VERSION, type CommandOf, type SeedCommand } from '../../core/commands/index.js';
import { SCALE_DOWN_ORDER } from '../../core/dwd/components.js';
import { COMPONENTS, type ComponentName } from '../../core/ha/layout.js';
import type { HostedControlPlane } from '../../core/model/seed.js';
import { generateShootSecrets } from '../../core/pki/shoot-secrets.js';
import {
  InMemoryBlobStore,
  LocalDataKeys,
  openSecrets,
  sealSecrets,
  seedContext,
  type SealedSecrets,
  type ShootSecrets,
} from '../../core/shootstate/index.js';
import { InMemorySnapshotStore, makeSnapshot } from '../../core/snapshots/index.js';
import type { SeedRuntime } from '../../seed/agent/runtime.js';
import { until } from '../../harness/until.js';

/**
 * The contract every seed runtime (`memory`, `local`, `kubernetes`) keeps, seen only through the
 * `SeedRuntime` interface: the protocol's answers and the heartbeat's report. A fixture supplies what a
 * runtime cannot do itself: the owner record and the seed's backups.
 */
export interface RuntimeFixture {
  runtime: SeedRuntime;
  seed: string;
  /** The seed's backup bucket, named in the commands. */
  bucket: string;
  /** The garden's state bucket, for a migrate's large extension states. */
  stateBucket: string;
  /** Makes the owner record of the shoot name this seed (true) or another one (false). */
  setOwner(shoot: SeedCommand['shoot'], owned: boolean): Promise<void>;
  /**
   * Makes sure the bucket holds a full snapshot of the shoot's etcd and returns its last revision (a
   * runtime whose etcd really runs waits for its sidecar's; the others write one), and `short` writes
   * one that does not reach `expected` (no real etcd needed).
   */
  backups(shoot: SeedCommand['shoot']): Promise<number>;
  /** How long an observation may take to show (a real API server's controllers, a real etcd's start). */
  settleMs: number;
  /** The shoot's secrets sealed for this seed, which create, reconcile and restore carry (a runtime that starts real components needs them). */
  seal?(shoot: SeedCommand['shoot']): Promise<SealedSecrets>;
  /** What a failure should show (process logs). */
  diagnostics?(): string;
  close?(): Promise<void>;
}

export interface ContractOptions {
  /** Runs once, before every case; a fixture may start processes. */
  fixture: () => Promise<RuntimeFixture>;
  /** Prefix of the shoot names, so that runs on a shared seed do not meet. */
  project?: string;
}

/**
 * The fixture parts of a runtime whose etcd does not really run (memory, kubernetes on kwok): buckets in
 * memory, an owner record as a set, and a backup written on demand.
 */
export function inMemoryOwnersAndBuckets() {
  const snapshots = new InMemorySnapshotStore();
  const blobs = new InMemoryBlobStore();
  const owned = new Set<string>();
  return {
    blobStore: () => blobs,
    snapshotStore: () => snapshots,
    ownerCheck: async (shoot: SeedCommand['shoot']) =>
      owned.has(shoot.technicalID) ? ('owner' as const) : ('not-owner' as const),
    setOwner: async (shoot: SeedCommand['shoot'], yes: boolean) =>
      void (yes ? owned.add(shoot.technicalID) : owned.delete(shoot.technicalID)),
    backups: async (shoot: SeedCommand['shoot']) => {
      const full = makeSnapshot({
        technicalID: shoot.technicalID,
        kind: 'Full',
        startRevision: 0,
        lastRevision: 42,
        createdOn: 1,
        compressionSuffix: '',
        final: false,
      });
      await snapshots.put(full.key, new Uint8Array([1]));
      return 42;
    },
  };
}

/**
 * One set for every shoot of a run, whichever seed it is sealed for: making them is the slow part, the
 * contract compares none, and a shoot's seeds must share them as the garden's copies do (its members
 * trust each other only by its etcd peer CA).
 */
let generated: Promise<ShootSecrets> | undefined;

/**
 * Shoots' secrets as the garden would send them to `seed`, and the agent's side that opens them: a key
 * service in memory instead of KMS (`openSecrets` goes into the runtime's options).
 */
export function contractSecrets(seed: string) {
  const keys = new LocalDataKeys();
  return {
    seal: async (shoot: SeedCommand['shoot']) =>
      sealSecrets(await (generated ??= generateShootSecrets(new Date())), keys, seedContext(shoot.technicalID, seed)),
    openSecrets: (sealed: SealedSecrets, shoot: SeedCommand['shoot']) =>
      openSecrets(sealed, keys, seedContext(shoot.technicalID, seed)),
  };
}

let serial = 0;

export function seedRuntimeContract(name: string, options: ContractOptions): void {
  describe(`the SeedRuntime contract on ${name}`, () => {
    let f: RuntimeFixture;
    const project = options.project ?? 'contract';
    const shoots: SeedCommand['shoot'][] = [];

    // A fixture may wait for the test seed's build on a fresh machine (test/harness/kube/sequencer.ts).
    beforeAll(async () => {
      f = await options.fixture();
    }, 600_000);
    afterAll(async () => {
      await Promise.all(
        shoots.map(async (shoot) =>
          f?.runtime
            .execute(await cmd(shoot, 'delete-control-plane', { keepBackups: true, keepExternalResources: true }))
            .catch(() => undefined),
        ),
      );
      await f?.close?.();
    });

    function newShoot(label: string): SeedCommand['shoot'] {
      serial += 1;
      const shootName = `${label}${serial}`;
      const shoot = { project, name: shootName, technicalID: `shoot--${project}--${shootName}` };
      shoots.push(shoot);
      return shoot;
    }
    async function cmd<T extends SeedCommand['type']>(
      shoot: SeedCommand['shoot'],
      type: T,
      fields: Record<string, unknown>,
    ): Promise<CommandOf<T>> {
      serial += 1;
      const starts = type === 'create-control-plane' || type === 'reconcile' || type === 'restore';
      return {
        apiVersion: COMMAND_API_VERSION,
        commandId: `contract/${serial}`,
        shoot,
        seed: f.seed,
        issuedAt: new Date().toISOString(),
        type,
        ...(starts && f.seal
          ? { secrets: await f.seal(shoot), apiDomain: `api.${shoot.name}.${shoot.project}.contract.gardenless.test` }
          : {}),
        ...fields,
      } as unknown as CommandOf<T>;
    }
    const controlPlane = (extra: Record<string, unknown> = {}) => ({
      controlPlane: { hibernated: false, backup: { bucket: f.bucket }, ...extra },
    });

    async function reported(shoot: SeedCommand['shoot']): Promise<HostedControlPlane | undefined> {
      return (await f.runtime.controlPlanes()).find((p) => p.technicalID === shoot.technicalID);
    }
    /** Polls the heartbeat report until `check` holds; fails with the last report (and the fixture's diagnostics). */
    async function eventually(
      shoot: SeedCommand['shoot'],
      what: string,
      check: (p: HostedControlPlane | undefined) => boolean,
    ): Promise<HostedControlPlane | undefined> {
      let last: HostedControlPlane | undefined;
      await until(
        what,
        async () => {
          last = await reported(shoot);
          return check(last);
        },
        {
          timeoutMs: f.settleMs,
          intervalMs: 200,
          explain: () => `last report: ${JSON.stringify(last)}\n${f.diagnostics?.() ?? ''}`,
        },
      );
      return last;
    }
    const replicasOf = (p: HostedControlPlane | undefined, c: ComponentName) => p?.components?.[c]?.replicas;
    const allReplicas = (p: HostedControlPlane | undefined) =>
      Object.fromEntries(COMPONENTS.map((c) => [c, replicasOf(p, c)]));
    async function created(label: string, extra: Record<string, unknown> = {}) {
      const shoot = newShoot(label);
      await f.setOwner(shoot, true);
      const result = await f.runtime.execute(await cmd(shoot, 'create-control-plane', controlPlane(extra)));
      return { shoot, result };
    }

    it('create: the control plane is reported active with etcd ready, one replica of every component (no HA)', async () => {
      const { shoot, result } = await created('plain');
      expect(result.extensions.length).toBeGreaterThan(0);
      const plane = await eventually(
        shoot,
        'active with etcd ready',
        (p) => p?.active === true && p.etcdReady === true,
      );
      expect(allReplicas(plane)).toEqual(Object.fromEntries(COMPONENTS.map((c) => [c, 1])));
    });

    it('create with failure tolerance node: the GEP-20 replicas (etcd, kube-apiserver, GRM 3; the others 2)', async () => {
      const { shoot } = await created('ha', { failureTolerance: 'node' });
      const plane = await eventually(shoot, 'active', (p) => p?.active === true);
      expect(allReplicas(plane)).toEqual({
        etcd: 3,
        'kube-apiserver': 3,
        'gardener-resource-manager': 3,
        'kube-controller-manager': 2,
        'kube-scheduler': 2,
        'machine-controller-manager': 2,
        'cluster-autoscaler': 2,
      });
    });

    it('create of what exists is a reconcile: same answer, same replicas', async () => {
      const { shoot } = await created('again');
      const again = await f.runtime.execute(await cmd(shoot, 'create-control-plane', controlPlane()));
      expect(again.extensions.map((e) => e.action).every((a) => a === 'skip' || a === 'reconcile')).toBe(true);
      const plane = await eventually(shoot, 'active', (p) => p?.active === true);
      expect(replicasOf(plane, 'kube-apiserver')).toBe(1);
    });

    it.each(SCALE_DOWN_ORDER)(
      "the watchdog's scale of %s to 0 holds through a reconcile; its scale-up restores it",
      async (component) => {
        const { shoot } = await created('hold');
        expect(await f.runtime.execute(await cmd(shoot, 'scale', { component, replicas: 0 }))).toEqual({
          component,
          previousReplicas: 1,
          replicas: 0,
        });
        // A repeated scale-down must not remember 0.
        expect(await f.runtime.execute(await cmd(shoot, 'scale', { component, replicas: 0 }))).toEqual({
          component,
          previousReplicas: 0,
          replicas: 0,
        });
        await f.runtime.execute(await cmd(shoot, 'reconcile', controlPlane()));
        expect(replicasOf(await reported(shoot), component)).toBe(0);
        expect(replicasOf(await reported(shoot), 'kube-apiserver')).toBe(1);

        expect(await f.runtime.execute(await cmd(shoot, 'scale', { component, replicas: 1 }))).toEqual({
          component,
          previousReplicas: 0,
          replicas: 1,
        });
        await f.runtime.execute(await cmd(shoot, 'reconcile', controlPlane()));
        expect(replicasOf(await reported(shoot), component)).toBe(1);
      },
    );

    it('hibernation scales every component to 0 and etcd stops serving; waking brings the layout back', async () => {
      const { shoot } = await created('sleep');
      await eventually(shoot, 'active', (p) => p?.active === true);
      const asleep = await f.runtime.execute(await cmd(shoot, 'reconcile', controlPlane({ hibernated: true })));
      expect(asleep.etcdReady).toBe(false);
      const hibernated = await eventually(shoot, 'etcd not serving', (p) => p?.etcdReady === false);
      expect(allReplicas(hibernated)).toEqual(Object.fromEntries(COMPONENTS.map((c) => [c, 0])));
      expect(hibernated?.active).toBe(false);

      await f.runtime.execute(await cmd(shoot, 'reconcile', controlPlane()));
      const awake = await eventually(shoot, 'active again', (p) => p?.active === true);
      expect(allReplicas(awake)).toEqual(Object.fromEntries(COMPONENTS.map((c) => [c, 1])));
    });

    it('migrate: the ShootState carries every extension, and the plane is no longer active here', async () => {
      const { shoot, result } = await created('move');
      const migrated = await f.runtime.execute(await cmd(shoot, 'migrate', { stateBucket: f.stateBucket }));
      expect(migrated.shootState.extensions.map((e) => e.kind).sort()).toEqual(
        result.extensions.map((e) => e.kind).sort(),
      );
      expect(migrated.extensions.every((e) => e.action === 'migrate')).toBe(true);
      expect((await reported(shoot))?.active).toBe(false);
      // A repeated migrate collects the same state again.
      const again = await f.runtime.execute(await cmd(shoot, 'migrate', { stateBucket: f.stateBucket }));
      expect(again.shootState.extensions.length).toBe(migrated.shootState.extensions.length);
    });

    it('delete: the control plane is gone from the heartbeat; a repeat answers deleted false', async () => {
      const { shoot } = await created('gone');
      await f.runtime.execute(await cmd(shoot, 'migrate', { stateBucket: f.stateBucket }));
      const deleted = await f.runtime.execute(
        await cmd(shoot, 'delete-control-plane', { keepBackups: true, keepExternalResources: true }),
      );
      expect(deleted.deleted).toBe(true);
      expect(deleted.extensionsDropped).toBeGreaterThan(0);
      expect(await reported(shoot)).toBeUndefined();
      expect(
        await f.runtime.execute(
          await cmd(shoot, 'delete-control-plane', { keepBackups: true, keepExternalResources: true }),
        ),
      ).toEqual({ deleted: false, extensionsDropped: 0 });
    });

    it('restore: NotOwner while the owner record names another seed; then etcd from the bucket and the extensions from the ShootState', async () => {
      // Prepare: the shoot ran here, has backups, migrated its extensions and was deleted.
      const { shoot } = await created('back');
      await eventually(shoot, 'active', (p) => p?.active === true);
      const revision = await f.backups(shoot);
      const { shootState } = await f.runtime.execute(await cmd(shoot, 'migrate', { stateBucket: f.stateBucket }));
      await f.runtime.execute(
        await cmd(shoot, 'delete-control-plane', { keepBackups: true, keepExternalResources: true }),
      );
      await f.setOwner(shoot, false);
      const etcd = { bucket: f.bucket, expectedLastRevision: revision, final: false };

      // Act / Assess
      await expect(f.runtime.execute(await cmd(shoot, 'restore', { hibernated: false, etcd }))).rejects.toMatchObject({
        failure: 'NotOwner',
      });
      expect(await reported(shoot)).toBeUndefined();
      await f.setOwner(shoot, true);
      const restored = await f.runtime.execute(await cmd(shoot, 'restore', { hibernated: false, etcd }));
      expect(restored.etcd?.restoredRevision).toBeGreaterThanOrEqual(revision);
      expect(restored.etcd?.snapshots).toBeGreaterThan(0);
      const extensions = await f.runtime.execute(
        await cmd(shoot, 'restore', {
          hibernated: false,
          extensions: { shootState, shootStateVersion: 1, stateBucket: f.stateBucket },
        }),
      );
      expect(extensions.extensions?.map((e) => e.action).every((a) => a === 'restore')).toBe(true);
      const plane = await eventually(shoot, 'active again', (p) => p?.active === true && p.etcdReady === true);
      expect(replicasOf(plane, 'kube-controller-manager')).toBe(1);
    });

    it('restore of snapshots short of the expected revision is EtcdRestoreFailed, and nothing is created', async () => {
      const shoot = newShoot('short');
      await f.setOwner(shoot, true);
      const failure = await f.runtime
        .execute(
          await cmd(shoot, 'restore', {
            hibernated: false,
            etcd: { bucket: f.bucket, expectedLastRevision: 1_000_000, final: false },
          }),
        )
        .catch((e: unknown) => e);
      expect(failure).toMatchObject({ failure: 'EtcdRestoreFailed' });
      expect(await reported(shoot)).toBeUndefined();
    });

    it.each(['scale', 'restart', 'migrate'] as const)(
      '%s of a shoot the seed does not host is ControlPlaneNotFound',
      async (type) => {
        const shoot = newShoot('none');
        const fields = {
          scale: { component: 'cluster-autoscaler', replicas: 0 },
          restart: { pod: 'p', dependency: 'etcd' },
          migrate: { stateBucket: 'state' },
        }[type];
        await expect(f.runtime.execute(await cmd(shoot, type, fields))).rejects.toMatchObject({
          failure: 'ControlPlaneNotFound',
        });
      },
    );

    it('check-owner of a shoot the seed does not host tells no sidecar and is no failure (a late notice)', async () => {
      const shoot = newShoot('gone');
      expect(await f.runtime.execute(await cmd(shoot, 'check-owner', { change: 'deleted' }))).toEqual({
        sidecars: 0,
        notified: 0,
      });
    });

    it('restart of a pod that is not crash-looping answers restarted false', async () => {
      const { shoot } = await created('calm');
      // etcd's pods: in the local runtime's model a dependent stays CrashLoopBackOff once a heartbeat saw its kube-apiserver fail a probe.
      const plane = await eventually(shoot, 'an etcd pod reported Running', (p) =>
        (p?.pods ?? []).some((pod) => pod.labels.app === 'etcd' && pod.state === 'Running'),
      );
      const pod = plane!.pods!.find((p) => p.labels.app === 'etcd' && p.state === 'Running')!;
      expect(pod.labels['gardener.cloud/role']).toBe('controlplane');
      expect(await f.runtime.execute(await cmd(shoot, 'restart', { pod: pod.name, dependency: 'etcd' }))).toEqual({
        pod: pod.name,
        restarted: false,
      });
      expect(
        await f.runtime.execute(await cmd(shoot, 'restart', { pod: 'no-such-pod', dependency: 'kube-apiserver' })),
      ).toEqual({ pod: 'no-such-pod', restarted: false });
    });
  });
}
