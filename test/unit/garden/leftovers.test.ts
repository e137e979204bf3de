import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { releasable } from '../../../core/garden/leftovers.js';
import type { HostedControlPlane } from '../../../core/model/seed.js';
import type { Shoot } from '../../../core/model/shoot.js';

const ID = 'shoot--dev--api1';

function plane(overrides: Partial<HostedControlPlane> = {}): HostedControlPlane {
  return {
    technicalID: ID,
    shoot: { project: 'dev', name: 'api1' },
    active: false,
    ownerCheck: 'not-owner',
    ...overrides,
  };
}

function shoot(seedName: string | undefined, migration?: string): Shoot {
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Shoot',
    metadata: {
      project: 'dev',
      name: 'api1',
      resourceVersion: '3',
      uid: 'u',
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    spec: { provider: { type: 'local' }, region: 'local' },
    status: {
      technicalID: ID,
      ...(seedName ? { seedName } : {}),
      ...(migration ? { migration: { state: migration } } : {}),
      conditions: [],
      constraints: [],
    },
  };
}

describe('releasable leftovers', () => {
  it.each<[string, HostedControlPlane, Shoot | undefined, boolean]>([
    ['placed elsewhere, record names another seed, inactive', plane(), shoot('seed-b'), true],
    ['its shoot is gone', plane(), undefined, true],
    ['placed here (a migration back, or a failed one)', plane(), shoot('seed-a'), false],
    ['a migration runs', plane(), shoot('seed-b', 'Running'), false],
    ['after a migration that ended in Error elsewhere', plane(), shoot('seed-b', 'Error'), true],
    ['the sidecar sees itself owner', plane({ ownerCheck: 'owner' }), shoot('seed-b'), false],
    ['the sidecar cannot tell', plane({ ownerCheck: 'unknown' }), shoot('seed-b'), false],
    ['no owner check reported', plane({ ownerCheck: undefined }), shoot('seed-b'), false],
    ['it still serves', plane({ active: true }), shoot('seed-b'), false],
    ['an agent that does not name the shoot', plane({ shoot: undefined }), shoot('seed-b'), false],
    ['the shoot is unscheduled', plane(), shoot(undefined), false],
  ])('%s: %s', (_name, p, s, expected) => {
    const released = releasable({ seed: 'seed-a', planes: [p], shoots: new Map([[ID, s]]) });
    expect(released.length > 0).toBe(expected);
    if (expected) expect(released[0]).toEqual({ technicalID: ID, reason: expect.any(String) });
  });

  it('never releases a plane of a shoot placed on the seed, or one the sidecar does not see as not-owner (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          active: fc.boolean(),
          ownerCheck: fc.constantFrom('owner', 'not-owner', 'unknown', undefined),
          placedOn: fc.constantFrom('seed-a', 'seed-b', undefined),
          migration: fc.constantFrom('Running', 'Succeeded', undefined),
          exists: fc.boolean(),
        }),
        (c) => {
          const p = plane({
            active: c.active,
            ...(c.ownerCheck
              ? { ownerCheck: c.ownerCheck as HostedControlPlane['ownerCheck'] }
              : { ownerCheck: undefined }),
          });
          const released = releasable({
            seed: 'seed-a',
            planes: [p],
            shoots: new Map([[ID, c.exists ? shoot(c.placedOn, c.migration) : undefined]]),
          });
          if (released.length === 0) return;
          expect(c.ownerCheck).toBe('not-owner');
          expect(c.active).toBe(false);
          if (c.exists) {
            expect(c.placedOn).toBe('seed-b');
            expect(c.migration).not.toBe('Running');
          }
        },
      ),
    );
  });
});
