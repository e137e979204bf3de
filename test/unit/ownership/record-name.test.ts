import { describe, expect, it } from 'vitest';
import { OwnerRecordNameError, ownerRecordName } from '../../../core/ownership/index.js';

describe('ownerRecordName', () => {
  it.each([
    [
      { shoot: 'api1', project: 'dev', internalDomain: 'internal.gardenless.example' },
      'owner.api1.dev.internal.gardenless.example',
    ],
    [{ shoot: 'api1', project: 'dev', internalDomain: 'Internal.Example.' }, 'owner.api1.dev.internal.example'],
    [{ shoot: 'a', project: 'b', internalDomain: 'c' }, 'owner.a.b.c'],
  ])('derives %o', (input, expected) => {
    expect(ownerRecordName(input)).toBe(expected);
  });

  it.each([
    ['an upper-case shoot', { shoot: 'Api1', project: 'dev', internalDomain: 'example' }, 'shoot'],
    ['a dot in the project', { shoot: 'api1', project: 'dev.x', internalDomain: 'example' }, 'project'],
    ['a shoot ending in "-"', { shoot: 'api1-', project: 'dev', internalDomain: 'example' }, 'shoot'],
    ['an empty internal domain', { shoot: 'api1', project: 'dev', internalDomain: '' }, 'internalDomain'],
    ['an empty label in the domain', { shoot: 'api1', project: 'dev', internalDomain: 'a..example' }, 'internalDomain'],
    [
      'a domain label over 63 characters',
      { shoot: 'api1', project: 'dev', internalDomain: `${'x'.repeat(64)}.example` },
      'internalDomain',
    ],
    [
      'a name over 253 characters',
      { shoot: 'api1', project: 'dev', internalDomain: Array(5).fill('x'.repeat(60)).join('.') },
      'internalDomain',
    ],
    ['an underscore', { shoot: 'api_1', project: 'dev', internalDomain: 'example' }, 'shoot'],
  ])('rejects %s', (_case, input, field) => {
    const error = (() => {
      try {
        ownerRecordName(input);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(OwnerRecordNameError);
    expect((error as OwnerRecordNameError).field).toBe(field);
  });
});
