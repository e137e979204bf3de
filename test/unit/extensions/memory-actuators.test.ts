import { describe, expect, it } from 'vitest';
import {
  annotate,
  externalKey,
  fakeState,
  MIGRATE_ORDER,
  memoryActuators,
  MemoryExtensionWorld,
  operateAll,
  RESTORE_ORDER,
  shootExtensions,
  type ExtensionResource,
} from '../../../core/extensions/index.js';

const NOW = () => new Date('2025-01-01T00:00:00Z');
const technicalID = 'shoot--dev--api1';

async function created(world: MemoryExtensionWorld, seed: string): Promise<ExtensionResource[]> {
  const out = await operateAll({
    resources: shootExtensions({ technicalID }),
    actuators: memoryActuators({ world, seed }),
    now: NOW,
    order: RESTORE_ORDER,
  });
  expect(out.error).toBeUndefined();
  return out.resources;
}

/** What a ShootState carries over: the saved status, on fresh objects in the destination. */
function carriedOver(resources: readonly ExtensionResource[]): ExtensionResource[] {
  return resources.map((r) =>
    annotate(
      {
        ...r,
        status: {
          ...(r.status.state === undefined ? {} : { state: r.status.state }),
          ...(r.status.resources ? { resources: r.status.resources } : {}),
        },
      },
      'restore',
    ),
  );
}

describe('memory actuators', () => {
  it('give every kind a deterministic state', async () => {
    // Act
    const first = await created(new MemoryExtensionWorld(), 'a');
    const second = await created(new MemoryExtensionWorld(), 'b');

    // Assess
    expect(first.map((r) => r.status.state)).toEqual(second.map((r) => r.status.state));
    for (const r of first) expect(r.status.state).toMatchObject({ kind: r.kind, generation: 1 });
    expect(first.find((r) => r.kind === 'Infrastructure')?.status.state).toEqual(
      fakeState(
        first.find((r) => r.kind === 'Infrastructure')!,
        (first.find((r) => r.kind === 'Infrastructure')!.status.state as { externalId: string }).externalId,
      ),
    );
  });

  it('migrate cleans up the seed and leaves external resources in place; restore adopts them elsewhere', async () => {
    // Prepare
    const world = new MemoryExtensionWorld();
    const onSource = await created(world, 'source');
    const externalBefore = world.externalKeys();

    // Act
    const migrated = await operateAll({
      resources: onSource.map((r) => annotate(r, 'migrate')),
      actuators: memoryActuators({ world, seed: 'source' }),
      now: NOW,
      order: MIGRATE_ORDER,
    });
    const restored = await operateAll({
      resources: carriedOver(migrated.resources),
      actuators: memoryActuators({ world, seed: 'destination' }),
      now: NOW,
      order: RESTORE_ORDER,
    });

    // Assess
    expect(migrated.error).toBeUndefined();
    expect(world.seedObjects('source')).toEqual([]);
    expect(world.externalKeys()).toEqual(externalBefore);
    expect(restored.error).toBeUndefined();
    expect(world.seedObjects('destination')).toEqual(externalBefore);
    for (const key of externalBefore) expect(world.externalResource(key)?.creations).toBe(1);
    expect(restored.resources.map((r) => r.status.state)).toEqual(onSource.map((r) => r.status.state));
    expect(restored.resources.every((r) => r.annotations['gardener.cloud/operation'] === undefined)).toBe(true);
  });

  it('refuses to restore a stateful kind without state, and stops the flow there', async () => {
    // Prepare
    const world = new MemoryExtensionWorld();
    const fresh = shootExtensions({ technicalID }).map((r) => annotate(r, 'restore'));

    // Act
    const restored = await operateAll({
      resources: fresh,
      actuators: memoryActuators({ world, seed: 'destination' }),
      now: NOW,
      order: RESTORE_ORDER,
    });

    // Assess
    expect(restored.error?.details.kind).toBe('Infrastructure');
    expect(restored.error?.cause).toMatchObject({ name: 'MissingExtensionStateError' });
    const untouched = restored.resources.filter((r) => r.kind === 'Worker' || r.kind === 'ControlPlane');
    expect(
      untouched.every(
        (r) => r.annotations['gardener.cloud/operation'] === 'restore' && r.status.lastOperation === undefined,
      ),
    ).toBe(true);
  });

  it('deleting a migrated resource drops it without touching external resources', async () => {
    // Prepare
    const world = new MemoryExtensionWorld();
    const onSource = await created(world, 'source');
    const migrated = await operateAll({
      resources: onSource.map((r) => annotate(r, 'migrate')),
      actuators: memoryActuators({ world, seed: 'source' }),
      now: NOW,
      order: MIGRATE_ORDER,
    });

    // Act
    const deleted = await operateAll({
      resources: migrated.resources.map((r) => ({ ...r, deletionTimestamp: NOW().toISOString() })),
      actuators: memoryActuators({ world, seed: 'source' }),
      now: NOW,
      order: MIGRATE_ORDER,
    });

    // Assess
    expect(deleted.resources).toEqual([]);
    expect(deleted.outcomes.every((o) => o.action === 'skip')).toBe(true);
    expect(world.externalKeys()).toHaveLength(onSource.length);
  });

  it('deleting a live resource removes the external resource too', async () => {
    // Prepare
    const world = new MemoryExtensionWorld();
    const onSource = await created(world, 'source');
    const infrastructure = onSource.find((r) => r.kind === 'Infrastructure')!;

    // Act
    await operateAll({
      resources: [{ ...infrastructure, deletionTimestamp: NOW().toISOString() }],
      actuators: memoryActuators({ world, seed: 'source' }),
      now: NOW,
      order: MIGRATE_ORDER,
    });

    // Assess
    expect(world.externalResource(externalKey(infrastructure))).toBeUndefined();
  });
});
