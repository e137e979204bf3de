import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EXTENSION_KINDS,
  failingActuators,
  memoryActuators,
  MemoryExtensionWorld,
  operate,
  OPERATION_ANNOTATION,
  type ExtensionResource,
} from '../../../core/extensions/index.js';

const NOW = new Date('2025-01-01T00:00:00Z');

const lastOperation = fc.option(
  fc.record({
    type: fc.constantFrom('Create', 'Reconcile', 'Migrate', 'Restore', 'Delete') as fc.Arbitrary<
      'Create' | 'Reconcile' | 'Migrate' | 'Restore' | 'Delete'
    >,
    state: fc.constantFrom('Processing', 'Succeeded', 'Error') as fc.Arbitrary<'Processing' | 'Succeeded' | 'Error'>,
    progress: fc.constant(0),
    description: fc.constant(''),
    lastUpdateTime: fc.constant(NOW.toISOString()),
  }),
  { nil: undefined },
);

const resources: fc.Arbitrary<ExtensionResource> = fc
  .record({
    kind: fc.constantFrom(...EXTENSION_KINDS),
    annotation: fc.option(fc.constantFrom('reconcile', 'migrate', 'restore', 'other'), { nil: undefined }),
    generation: fc.integer({ min: 1, max: 5 }),
    observed: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
    lastOperation,
    state: fc.option(fc.record({ externalId: fc.string({ minLength: 1, maxLength: 8 }) }), { nil: undefined }),
    deleting: fc.boolean(),
  })
  .map((r): ExtensionResource => ({
    apiVersion: 'extensions.gardenless.io/v1' as const,
    kind: r.kind,
    name: 'x',
    namespace: 'shoot--p--n',
    generation: r.generation,
    spec: {},
    status: {
      ...(r.state ? { state: r.state } : {}),
      ...(r.observed ? { observedGeneration: r.observed } : {}),
      ...(r.lastOperation ? { lastOperation: r.lastOperation } : {}),
    },
    annotations: r.annotation ? { [OPERATION_ANNOTATION]: r.annotation } : ({} as Record<string, string>),
    ...(r.deleting ? { deletionTimestamp: NOW.toISOString() } : {}),
  }));

describe('driver properties', () => {
  it('a failed migrate or restore never removes its annotation; a reconcile always does', async () => {
    await fc.assert(
      fc.asyncProperty(resources, fc.boolean(), async (resource, fails) => {
        // Prepare
        const actuators = fails
          ? failingActuators()
          : memoryActuators({ world: new MemoryExtensionWorld(), seed: 's' });

        // Act
        const outcome = await operate({ resource, actuators, now: NOW });

        // Assess
        const before = resource.annotations[OPERATION_ANNOTATION];
        const after = outcome.resource?.annotations[OPERATION_ANNOTATION];
        if ((outcome.action === 'migrate' || outcome.action === 'restore') && outcome.error) expect(after).toBe(before);
        if ((outcome.action === 'migrate' || outcome.action === 'restore') && !outcome.error)
          expect(after).toBeUndefined();
        if (outcome.action === 'reconcile') expect(after).toBeUndefined();
        if (outcome.action === 'skip' && outcome.resource) expect(outcome.resource).toBe(resource);
        if (outcome.error) expect(outcome.resource?.status.lastOperation?.state).toBe('Error');
      }),
      { numRuns: 500 },
    );
  });

  it('a failed operation never loses saved state', async () => {
    await fc.assert(
      fc.asyncProperty(resources, async (resource) => {
        // Act
        const outcome = await operate({ resource, actuators: failingActuators(), now: NOW });

        // Assess
        if (outcome.resource) expect(outcome.resource.status.state).toEqual(resource.status.state);
      }),
      { numRuns: 300 },
    );
  });
});
