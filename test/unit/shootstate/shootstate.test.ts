import { describe, expect, it } from 'vitest';
import {
  annotate,
  memoryActuators,
  MemoryExtensionWorld,
  MIGRATE_ORDER,
  OPERATION_ANNOTATION,
  operateAll,
  RESTORE_ORDER,
  shootExtensions,
} from '../../../core/extensions/index.js';
import {
  applyShootState,
  BLOB_THRESHOLD_BYTES,
  BlobIntegrityError,
  BlobNotFoundError,
  BlobStoreError,
  blobKey,
  collectShootState,
  FailingBlobStore,
  FailingShootStateStore,
  InMemoryBlobStore,
  InMemoryShootStateStore,
  isBlobRef,
  loadShootState,
  packShootState,
  persistShootState,
  sha256Hex,
  ShootStateCollectError,
  ShootStateConflictError,
  ShootStateStoreError,
  stateBytes,
  unpackShootState,
  type ShootState,
} from '../../../core/shootstate/index.js';

const NOW = new Date('2025-01-01T00:00:00Z');
const shoot = { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' };

/** A JSON state whose encoding is exactly `bytes` long. */
function stateOfSize(bytes: number): string {
  return 'x'.repeat(bytes - 2);
}

function aState(states: unknown[]): ShootState {
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'ShootState',
    shoot,
    collectedAt: NOW.toISOString(),
    collectedAfter: 'migrate',
    extensions: states.map((state, i) => ({
      kind: 'Infrastructure' as const,
      name: `e${i}`,
      ...(state === undefined ? {} : { state }),
    })),
  };
}

async function migratedResources() {
  const world = new MemoryExtensionWorld();
  const created = await operateAll({
    resources: shootExtensions({ technicalID: shoot.technicalID }),
    actuators: memoryActuators({ world, seed: 's' }),
    now: () => NOW,
    order: RESTORE_ORDER,
  });
  const migrated = await operateAll({
    resources: created.resources.map((r) => annotate(r, 'migrate')),
    actuators: memoryActuators({ world, seed: 's' }),
    now: () => NOW,
    order: MIGRATE_ORDER,
  });
  return { created: created.resources, migrated: migrated.resources, world };
}

describe('collectShootState', () => {
  it('collects kind, name, purpose, state and resources of every migrated extension', async () => {
    // Prepare
    const { migrated } = await migratedResources();

    // Act
    const state = collectShootState({ shoot, resources: migrated, now: NOW, seed: 's' });

    // Assess
    expect(state.extensions).toHaveLength(migrated.length);
    expect(state.extensions.find((e) => e.purpose === 'exposure')).toMatchObject({
      kind: 'ControlPlane',
      name: `${shoot.technicalID}-exposure`,
    });
    for (const e of state.extensions) expect(e.state).toMatchObject({ kind: e.kind });
    expect(state).toMatchObject({ collectedAfter: 'migrate', seed: 's', collectedAt: NOW.toISOString() });
  });

  it.each([
    ['a resource that was not migrated', 'created', 'migrate', /has been migrated.*never operated|not every extension/],
    ['after reconcile, reconciled resources', 'created', 'reconcile', undefined],
    ['after migrate, migrated resources', 'migrated', 'migrate', undefined],
  ] as const)('%s', async (_name, which, after, error) => {
    // Prepare
    const resources = await migratedResources();

    // Act
    const collect = () => collectShootState({ shoot, resources: resources[which], now: NOW, after });

    // Assess
    if (error) expect(collect).toThrow(ShootStateCollectError);
    else expect(collect().extensions).toHaveLength(resources[which].length);
  });

  it('refuses duplicates and foreign namespaces', async () => {
    // Prepare
    const { migrated } = await migratedResources();

    // Act / Assess
    expect(() => collectShootState({ shoot, resources: [...migrated, migrated[0]!], now: NOW })).toThrow(
      /appears twice/,
    );
    expect(() =>
      collectShootState({ shoot: { ...shoot, technicalID: 'shoot--x--y' }, resources: migrated, now: NOW }),
    ).toThrow(/namespace/);
  });
});

describe('applyShootState', () => {
  it('puts each saved state onto its resource and asks for a restore', async () => {
    // Prepare
    const { migrated } = await migratedResources();
    const state = collectShootState({ shoot, resources: migrated, now: NOW });
    const desired = shootExtensions({ technicalID: shoot.technicalID });

    // Act
    const applied = applyShootState({ state, resources: desired });

    // Assess
    expect(applied).toHaveLength(desired.length);
    for (const r of applied) {
      expect(r.annotations[OPERATION_ANNOTATION]).toBe('restore');
      expect(r.status.state).toEqual(
        migrated.find((m) => m.kind === r.kind && m.name === r.name && m.purpose === r.purpose)?.status.state,
      );
      expect(r.status.lastOperation).toBeUndefined();
    }
  });

  it('recreates resources that only the ShootState knows', async () => {
    // Prepare
    const { migrated } = await migratedResources();
    const state = collectShootState({ shoot, resources: migrated, now: NOW });

    // Act
    const applied = applyShootState({ state });

    // Assess
    expect(applied.map((r) => `${r.kind}/${r.name}/${r.purpose ?? ''}`).sort()).toEqual(
      migrated.map((r) => `${r.kind}/${r.name}/${r.purpose ?? ''}`).sort(),
    );
    expect(applied.every((r) => r.namespace === shoot.technicalID)).toBe(true);
  });
});

describe('packShootState', () => {
  it.each([
    ['small', 100, false],
    ['exactly at the threshold', BLOB_THRESHOLD_BYTES, false],
    ['one byte above the threshold', BLOB_THRESHOLD_BYTES + 1, true],
    ['a megabyte', 1024 * 1024, true],
  ])('%s state (%i bytes): blob=%s', async (_name, size, blob) => {
    // Prepare
    const blobs = new InMemoryBlobStore('gl-state');
    const value = stateOfSize(size);

    // Act
    const packed = await packShootState({ state: aState([value]), blobs });

    // Assess
    const stored = packed.extensions[0]!.state!;
    expect(isBlobRef(stored)).toBe(blob);
    if (isBlobRef(stored)) {
      const bytes = stateBytes(value);
      expect(stored.ref).toEqual({
        bucket: 'gl-state',
        key: blobKey(shoot, sha256Hex(bytes)),
        sha256: sha256Hex(bytes),
        size,
      });
      expect(blobs.keys()).toEqual([stored.ref.key]);
    } else {
      expect(stored).toEqual({ inline: value });
      expect(blobs.keys()).toEqual([]);
    }
  });

  it('moves the largest inline states to the bucket until the rest fits the budget', async () => {
    // Prepare
    const blobs = new InMemoryBlobStore();
    const sizes = [90_000, 60_000, 30_000, 10];

    // Act
    const packed = await packShootState({ state: aState(sizes.map(stateOfSize)), blobs, inlineBudgetBytes: 100_000 });

    // Assess
    expect(packed.extensions.map((e) => isBlobRef(e.state!))).toEqual([true, false, false, false]);
  });

  it('keeps stateless entries stateless and writes equal states once', async () => {
    // Prepare
    const blobs = new InMemoryBlobStore();
    const big = stateOfSize(BLOB_THRESHOLD_BYTES * 2);

    // Act
    const packed = await packShootState({ state: aState([undefined, big, big]), blobs });
    const again = await packShootState({ state: aState([undefined, big, big]), blobs });

    // Assess
    expect('state' in packed.extensions[0]!).toBe(false);
    expect(blobs.keys()).toHaveLength(1);
    expect(again).toEqual(packed);
  });
});

describe('unpackShootState', () => {
  it('refuses a blob whose content does not match its sha256', async () => {
    // Prepare
    const blobs = new InMemoryBlobStore();
    const packed = await packShootState({ state: aState([stateOfSize(BLOB_THRESHOLD_BYTES + 10)]), blobs });
    blobs.corrupt(blobs.keys()[0]!);

    // Act / Assess
    await expect(unpackShootState({ state: packed, blobs })).rejects.toBeInstanceOf(BlobIntegrityError);
  });

  it.each([
    ['a missing blob', () => new InMemoryBlobStore(), BlobNotFoundError],
    ['a failing store', () => new FailingBlobStore({ reason: 'Throttled' }), BlobStoreError],
  ])('%s fails by name', async (_name, store, error) => {
    // Prepare
    const packed = await packShootState({
      state: aState([stateOfSize(BLOB_THRESHOLD_BYTES + 10)]),
      blobs: new InMemoryBlobStore(),
    });

    // Act / Assess
    await expect(unpackShootState({ state: packed, blobs: store() })).rejects.toBeInstanceOf(error);
  });
});

describe('ShootStateStore (in memory)', () => {
  it('versions every save and makes saves conditional on the version read', async () => {
    // Prepare
    const store = new InMemoryShootStateStore();
    const blobs = new InMemoryBlobStore();
    const state = aState(['a']);

    // Act
    const first = await persistShootState({ state, blobs, store, expectedVersion: 0 });
    const second = await persistShootState({ state, blobs, store, expectedVersion: 1 });
    const stale = persistShootState({ state, blobs, store, expectedVersion: 1 });
    const exists = persistShootState({ state, blobs, store, expectedVersion: 0 });
    const unconditional = await persistShootState({ state, blobs, store });

    // Assess
    expect([first.version, second.version, unconditional.version]).toEqual([1, 2, 3]);
    await expect(stale).rejects.toBeInstanceOf(ShootStateConflictError);
    await expect(exists).rejects.toMatchObject({
      name: 'ShootStateConflictError',
      code: 'ShootStateConflict',
      current: 2,
      details: { expectedVersion: 0, currentVersion: 2 },
    });
    expect(await loadShootState({ ...shoot, store, blobs })).toEqual({ state, version: 3 });
  });

  it('deletes conditionally, and loads nothing afterwards', async () => {
    // Prepare
    const store = new InMemoryShootStateStore();
    await persistShootState({ state: aState(['a']), blobs: new InMemoryBlobStore(), store });

    // Act
    const wrong = store.delete({ ...shoot, expectedVersion: 7 });
    await store.delete({ ...shoot, expectedVersion: 1 });

    // Assess
    await expect(wrong).rejects.toBeInstanceOf(ShootStateConflictError);
    expect(await store.load(shoot)).toBeUndefined();
  });

  it('a failing store fails every call by name', async () => {
    // Prepare
    const store = new FailingShootStateStore();

    // Act / Assess
    await expect(store.load(shoot)).rejects.toBeInstanceOf(ShootStateStoreError);
    await expect(
      store.save({ ...shoot, state: await packShootState({ state: aState([]), blobs: new InMemoryBlobStore() }) }),
    ).rejects.toBeInstanceOf(ShootStateStoreError);
  });
});
