import { describe, expect, it } from 'vitest';
import {
  annotate,
  decide,
  failingActuators,
  memoryActuators,
  MemoryExtensionWorld,
  newExtension,
  operate,
  OPERATION_ANNOTATION,
  ActuatorMissingError,
  type ExtensionResource,
  type ExtensionStatus,
} from '../../../core/extensions/index.js';

const NOW = new Date('2025-01-01T00:00:00Z');
const ns = 'shoot--dev--api1';

function resource(
  options: { annotation?: string; status?: ExtensionStatus; generation?: number; deleting?: boolean } = {},
): ExtensionResource {
  const base = newExtension({ kind: 'Infrastructure', namespace: ns });
  return {
    ...base,
    generation: options.generation ?? 1,
    status: options.status ?? {},
    annotations: options.annotation === undefined ? {} : { [OPERATION_ANNOTATION]: options.annotation },
    ...(options.deleting ? { deletionTimestamp: NOW.toISOString() } : {}),
  };
}

const op = (
  type: 'Create' | 'Reconcile' | 'Migrate' | 'Restore' | 'Delete',
  state: 'Succeeded' | 'Error' | 'Processing',
) => ({
  type,
  state,
  progress: state === 'Succeeded' ? 100 : 0,
  description: '',
  lastUpdateTime: NOW.toISOString(),
});

describe('decide', () => {
  it.each([
    ['new resource', resource(), 'reconcile'],
    [
      'reconcile annotation',
      resource({
        annotation: 'reconcile',
        status: { observedGeneration: 1, lastOperation: op('Reconcile', 'Succeeded') },
      }),
      'reconcile',
    ],
    [
      'up to date, no annotation',
      resource({ status: { observedGeneration: 1, lastOperation: op('Reconcile', 'Succeeded') } }),
      'skip',
    ],
    [
      'new generation',
      resource({ generation: 2, status: { observedGeneration: 1, lastOperation: op('Reconcile', 'Succeeded') } }),
      'reconcile',
    ],
    [
      'last reconcile failed',
      resource({ status: { observedGeneration: 1, lastOperation: op('Reconcile', 'Error') } }),
      'reconcile',
    ],
    ['migrate annotation', resource({ annotation: 'migrate' }), 'migrate'],
    ['migrate annotation while deleting', resource({ annotation: 'migrate', deleting: true }), 'migrate'],
    ['deleting', resource({ deleting: true }), 'delete'],
    ['restore annotation', resource({ annotation: 'restore' }), 'restore'],
    [
      'restore after a successful migrate',
      resource({ annotation: 'restore', status: { lastOperation: op('Migrate', 'Succeeded') } }),
      'restore',
    ],
    ['migrated, no annotation', resource({ status: { lastOperation: op('Migrate', 'Succeeded') } }), 'skip'],
    [
      'migrated, reconcile annotation',
      resource({ annotation: 'reconcile', status: { lastOperation: op('Migrate', 'Succeeded') } }),
      'skip',
    ],
    ['migrated, deleting', resource({ deleting: true, status: { lastOperation: op('Migrate', 'Succeeded') } }), 'skip'],
    [
      'migrate failed before, annotation kept',
      resource({ annotation: 'migrate', status: { lastOperation: op('Migrate', 'Error') } }),
      'migrate',
    ],
    ['unknown annotation value', resource({ annotation: 'wake-up' }), 'reconcile'],
  ])('%s -> %s', (_name, input, action) => {
    // Act
    const decision = decide(input);

    // Assess
    expect(decision.action).toBe(action);
  });
});

describe('operate: the annotation', () => {
  it.each([
    // operation, actuator fails, annotation after
    ['reconcile', false, undefined],
    ['reconcile', true, undefined],
    ['migrate', false, undefined],
    ['migrate', true, 'migrate'],
    ['restore', false, undefined],
    ['restore', true, 'restore'],
  ] as const)('%s with failure=%s leaves annotation %s', async (operation, fails, after) => {
    // Prepare
    const world = new MemoryExtensionWorld();
    const working = memoryActuators({ world, seed: 'a' });
    const actuators = fails ? failingActuators() : working;
    const prepared = (await operate({ resource: resource(), actuators: working, now: NOW })).resource!;

    // Act
    const outcome = await operate({ resource: annotate(prepared, operation), actuators, now: NOW });

    // Assess
    expect(outcome.action).toBe(operation);
    expect(outcome.resource?.annotations[OPERATION_ANNOTATION]).toBe(after);
    expect(outcome.resource?.status.lastOperation?.state).toBe(fails ? 'Error' : 'Succeeded');
    expect(Boolean(outcome.error)).toBe(fails);
  });

  it('removes the reconcile annotation before the actuator runs', async () => {
    // Prepare
    let seen: Record<string, string> | undefined;
    const actuators = {
      Infrastructure: {
        kind: 'Infrastructure' as const,
        reconcile: async ({ resource: r }: { resource: ExtensionResource }) => ((seen = r.annotations), {}),
        delete: async () => undefined,
        migrate: async () => ({}),
        restore: async () => ({}),
      },
    };

    // Act
    await operate({ resource: resource({ annotation: 'reconcile' }), actuators, now: NOW });

    // Assess
    expect(seen).toEqual({});
  });

  it('keeps the migrate annotation while the actuator runs', async () => {
    // Prepare
    let seen: Record<string, string> | undefined;
    let processing: string | undefined;
    const actuators = {
      Infrastructure: {
        kind: 'Infrastructure' as const,
        reconcile: async () => ({}),
        delete: async () => undefined,
        migrate: async ({ resource: r }: { resource: ExtensionResource }) => (
          (seen = r.annotations),
          (processing = r.status.lastOperation?.state),
          {}
        ),
        restore: async () => ({}),
      },
    };

    // Act
    await operate({ resource: resource({ annotation: 'migrate' }), actuators, now: NOW });

    // Assess
    expect(seen).toEqual({ [OPERATION_ANNOTATION]: 'migrate' });
    expect(processing).toBe('Processing');
  });
});

describe('operate: status', () => {
  it('creates first, reconciles afterwards, and records the observed generation', async () => {
    // Prepare
    const actuators = memoryActuators({ world: new MemoryExtensionWorld(), seed: 'a' });

    // Act
    const created = (await operate({ resource: resource(), actuators, now: NOW })).resource!;
    const changed = { ...created, generation: 2 };
    const reconciled = (await operate({ resource: changed, actuators, now: NOW })).resource!;

    // Assess
    expect(created.status.lastOperation).toMatchObject({ type: 'Create', state: 'Succeeded', progress: 100 });
    expect(created.status.observedGeneration).toBe(1);
    expect(reconciled.status.lastOperation).toMatchObject({ type: 'Reconcile', state: 'Succeeded' });
    expect(reconciled.status.observedGeneration).toBe(2);
  });

  it('a failure says which resource and why, and keeps the saved state', async () => {
    // Prepare
    const working = memoryActuators({ world: new MemoryExtensionWorld(), seed: 'a' });
    const created = (await operate({ resource: resource(), actuators: working, now: NOW })).resource!;

    // Act
    const outcome = await operate({
      resource: annotate(created, 'migrate'),
      actuators: failingActuators({ message: 'cloud API down' }),
      now: NOW,
    });

    // Assess
    expect(outcome.error?.name).toBe('ExtensionOperationError');
    expect(outcome.error?.details).toEqual({ kind: 'Infrastructure', name: ns, namespace: ns, operation: 'migrate' });
    expect(outcome.resource?.status.lastOperation?.description).toContain('cloud API down');
    expect(outcome.resource?.status.state).toEqual(created.status.state);
  });

  it('an actuator that returns no state keeps the saved one', async () => {
    // Prepare
    const saved = { externalId: 'x' };
    const actuators = {
      Infrastructure: {
        kind: 'Infrastructure' as const,
        reconcile: async () => ({}),
        delete: async () => undefined,
        migrate: async () => ({}),
        restore: async () => ({}),
      },
    };

    // Act
    const outcome = await operate({
      resource: resource({ annotation: 'migrate', status: { state: saved } }),
      actuators,
      now: NOW,
    });

    // Assess
    expect(outcome.resource?.status.state).toEqual(saved);
  });

  it('a missing actuator is a configuration error, thrown', async () => {
    // Act / Assess
    await expect(operate({ resource: resource(), actuators: {}, now: NOW })).rejects.toBeInstanceOf(
      ActuatorMissingError,
    );
  });
});
