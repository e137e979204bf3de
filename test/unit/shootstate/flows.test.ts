import { describe, expect, it } from 'vitest';
import {
  failingActuators,
  memoryActuators,
  MemoryExtensionWorld,
  OPERATION_ANNOTATION,
  operateAll,
  RESTORE_ORDER,
  shootExtensions,
} from '../../../core/extensions/index.js';
import {
  BLOB_THRESHOLD_BYTES,
  InMemoryBlobStore,
  isBlobRef,
  migrateExtensions,
  restoreExtensions,
  type PackedShootState,
} from '../../../core/shootstate/index.js';

const NOW = () => new Date('2025-01-01T00:00:00Z');
const shoot = { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' };

async function onSource(world: MemoryExtensionWorld) {
  const created = await operateAll({
    resources: shootExtensions({ technicalID: shoot.technicalID }),
    actuators: memoryActuators({ world, seed: 'source' }),
    now: NOW,
    order: RESTORE_ORDER,
  });
  return created.resources;
}

describe('migrateExtensions and restoreExtensions', () => {
  it('move every extension from one seed to another through a packed ShootState', async () => {
    // Prepare
    const world = new MemoryExtensionWorld();
    const blobs = new InMemoryBlobStore('gl-state');
    const resources = await onSource(world);

    // Act
    const migrated = await migrateExtensions({
      shoot,
      resources,
      actuators: memoryActuators({ world, seed: 'source' }),
      blobs,
      seed: 'source',
      now: NOW,
    });
    const repeated = await migrateExtensions({
      shoot,
      resources: migrated.resources,
      actuators: memoryActuators({ world, seed: 'source' }),
      blobs,
      seed: 'source',
      now: NOW,
    });
    const restored = await restoreExtensions({
      shootState: (migrated as { shootState: PackedShootState }).shootState,
      blobs,
      actuators: memoryActuators({ world, seed: 'destination' }),
      now: NOW,
    });

    // Assess
    expect(migrated.ok).toBe(true);
    expect((repeated as { shootState: PackedShootState }).shootState).toEqual(
      (migrated as { shootState: PackedShootState }).shootState,
    );
    expect(repeated.resources).toEqual(migrated.resources);
    expect(repeated.outcomes.every((o) => o.action === 'skip')).toBe(true);
    expect(restored.error).toBeUndefined();
    expect(
      restored.resources.every(
        (r) => r.annotations[OPERATION_ANNOTATION] === undefined && r.status.lastOperation?.type === 'Restore',
      ),
    ).toBe(true);
    expect(world.seedObjects('source')).toEqual([]);
    expect(world.seedObjects('destination')).toHaveLength(resources.length);
  });

  it('a failed migrate collects nothing and leaves the annotation for the retry', async () => {
    // Prepare
    const world = new MemoryExtensionWorld();
    const resources = await onSource(world);

    // Act
    const result = await migrateExtensions({
      shoot,
      resources,
      actuators: failingActuators({ methods: ['migrate'] }),
      blobs: new InMemoryBlobStore(),
      seed: 'source',
      now: NOW,
    });

    // Assess
    expect(result.ok).toBe(false);
    expect(result.resources.every((r) => r.annotations[OPERATION_ANNOTATION] === 'migrate')).toBe(true);
  });

  it('keeps the answer within the inline budget by moving large states to the bucket', async () => {
    // Prepare
    const world = new MemoryExtensionWorld();
    const blobs = new InMemoryBlobStore();
    const resources = (await onSource(world)).map((r) =>
      r.kind === 'Worker' ? { ...r, spec: { ...r.spec, minimum: 3 } } : r,
    );
    const big = {
      kind: 'Infrastructure' as const,
      reconcile: async () => ({}),
      delete: async () => undefined,
      restore: async () => ({}),
      migrate: async () => ({ state: { tf: 'x'.repeat(BLOB_THRESHOLD_BYTES + 1) } }),
    };

    // Act
    const result = await migrateExtensions({
      shoot,
      resources,
      actuators: { ...memoryActuators({ world, seed: 'source' }), Infrastructure: big },
      blobs,
      seed: 'source',
      now: NOW,
    });

    // Assess
    const state = (result as { shootState: PackedShootState }).shootState;
    expect(state.extensions.filter((e) => e.state !== undefined && isBlobRef(e.state)).map((e) => e.kind)).toEqual([
      'Infrastructure',
    ]);
    expect(blobs.keys()).toHaveLength(1);
  });
});
