import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../core/errors.js';
import { parseInput } from '../../../core/garden/validate.js';
import { heartbeatInput, seedInput } from '../../../core/model/seed.js';
import { shootInput } from '../../../core/model/shoot.js';
import { seedBody, shootBody } from './builders.js';

function failure(run: () => unknown): ValidationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('parseInput', () => {
  it.each<[string, () => unknown, string | undefined, string]>([
    ['an unknown top-level field', () => parseInput(seedInput, { ...seedBody(), bogus: 1 }), 'bogus', 'UnknownField'],
    [
      'an unknown field in spec',
      () => parseInput(seedInput, seedBody({ spec: { foo: 1 } })),
      'spec.foo',
      'UnknownField',
    ],
    [
      'a metadata field this API does not have',
      () => parseInput(seedInput, seedBody({ metadata: { managedFields: [] } })),
      'metadata.managedFields',
      'UnknownField',
    ],
    [
      'a date-time that is not RFC 3339',
      () => parseInput(seedInput, seedBody({ metadata: { creationTimestamp: '2025-02-30T00:00:00Z' } })),
      'metadata.creationTimestamp',
      'Invalid',
    ],
    [
      'an unknown field deep in an array',
      () => parseInput(seedInput, seedBody({ spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } })),
      'spec.taints.0.effect',
      'UnknownField',
    ],
    [
      'two unknown fields: the first is named',
      () => parseInput(seedInput, { ...seedBody(), bogus: 1, other: 2 }),
      'bogus',
      'UnknownField',
    ],
    [
      'a bad zone',
      () => parseInput(seedInput, seedBody({ spec: { provider: { type: 'aws', region: 'eu-west-1', zones: ['A'] } } })),
      'spec.provider.zones.0',
      'Invalid',
    ],
    [
      'a CIDR with host bits',
      () => parseInput(seedInput, seedBody({ spec: { networks: { pods: '10.1.0.1/16', services: '10.2.0.0/16' } } })),
      'spec.networks.pods',
      'Invalid',
    ],
    [
      'a refinement with its own path',
      () =>
        parseInput(
          seedInput,
          seedBody({ spec: { workerPools: [{ name: 'cp', zones: ['a'], minimum: 3, maximum: 1 }] } }),
        ),
      'spec.workerPools.0.maximum',
      'Invalid',
    ],
    ['a missing spec', () => parseInput(seedInput, {}), 'spec', 'Invalid'],
    [
      'a wrong type',
      () => parseInput(shootInput, shootBody({ spec: { hibernation: { enabled: 'yes' } } })),
      'spec.hibernation.enabled',
      'Invalid',
    ],
    [
      'a name that is not a DNS-1123 label',
      () => parseInput(shootInput, shootBody({ metadata: { name: 'Api_1' } })),
      'metadata.name',
      'Invalid',
    ],
    [
      'a condition status outside the enum',
      () => parseInput(heartbeatInput, { conditions: [{ type: 'Ready', status: 'Maybe' }] }),
      'conditions.0.status',
      'Invalid',
    ],
    ['an array instead of an object', () => parseInput(seedInput, []), undefined, 'Invalid'],
  ])('names the field of %s', (_name, run, field, code) => {
    // Act
    const error = failure(run);
    // Assess
    expect(error.field).toBe(field);
    expect(error.code).toBe(code);
    expect(error.message.startsWith(`${field ?? 'body'}: `)).toBe(true);
  });

  it('counts further issues in the message', () => {
    const error = failure(() => parseInput(seedInput, seedBody({ spec: { networks: { pods: 'x', services: 'y' } } })));
    expect(error.field).toBe('spec.networks.pods');
    expect(error.message).toMatch(/\(and 1 more\)$/);
  });

  it('returns the parsed value of valid input', () => {
    const body = seedBody();
    expect(parseInput(seedInput, body)).toEqual(body);
  });
});
