import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../../core/errors.js';
import {
  checkOwner,
  formatOwnerValue,
  ownerValueAdmits,
  parseOwnerValue,
  type OwnerValue,
} from '../../../core/ownership/index.js';

const A = 'seed-a-3f2c9d1e-0b7a-4c55-9e21-6d8f0a1b2c3d';
const B = 'seed-b-9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const CLUSTER = '8e9e05c52164694d';
const LIVE: OwnerValue = { kind: 'live', origin: A, destination: B, cluster: CLUSTER };

describe('owner values', () => {
  it('a seed identity reads as the seed, as every record written before the live path', () => {
    expect(parseOwnerValue(A)).toEqual({ kind: 'seed', seed: A });
    expect(formatOwnerValue({ kind: 'seed', seed: A })).toBe(A);
  });

  it('a live value names both seeds and the cluster', () => {
    expect(formatOwnerValue(LIVE)).toBe(`${A}+${B}@8e9e05c52164694d`);
    expect(parseOwnerValue(formatOwnerValue(LIVE))).toEqual(LIVE);
  });

  it('text of neither form means nothing', () => {
    for (const text of ['', `${A}+${A}@1`, `${A}+${B}`, `${A}+${B}@XYZ`, `${A}@1`, `a b`, `${A}+${B}@1@2`, '+@'])
      expect(parseOwnerValue(text), text).toBeUndefined();
  });

  it('refuses to write a value it would not read back', () => {
    expect(() => formatOwnerValue({ ...LIVE, destination: A })).toThrow(ValidationError);
    expect(() => formatOwnerValue({ ...LIVE, cluster: 'nope' })).toThrow(ValidationError);
    expect(() => formatOwnerValue({ kind: 'seed', seed: 'a+b' })).toThrow(ValidationError);
  });

  it('round-trips every value it writes', () => {
    const identity = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,40}$/);
    fc.assert(
      fc.property(identity, identity, fc.stringMatching(/^[0-9a-f]{1,16}$/), (origin, destination, cluster) => {
        fc.pre(origin !== destination);
        const value: OwnerValue = { kind: 'live', origin, destination, cluster };
        expect(parseOwnerValue(formatOwnerValue(value))).toEqual(value);
      }),
    );
  });

  it('a seed value admits every member on that seed and nothing elsewhere, as checkOwner does', () => {
    const value = parseOwnerValue(A);
    expect(ownerValueAdmits(value, { identity: A })).toBe('owner');
    expect(ownerValueAdmits(value, { identity: B, cluster: '1' })).toBe('not-owner');
    for (const identity of [A, B])
      expect(ownerValueAdmits(value, { identity })).toBe(
        checkOwner({ outcome: { kind: 'found', values: [A] }, identity }).result,
      );
  });

  it('a live value admits only members of its cluster, on either seed', () => {
    for (const identity of [A, B]) {
      expect(ownerValueAdmits(LIVE, { identity, cluster: CLUSTER })).toBe('owner');
      // A standby restored ahead, or a leftover of an earlier attempt, is another cluster.
      expect(ownerValueAdmits(LIVE, { identity, cluster: '1' })).toBe('not-owner');
      expect(ownerValueAdmits(LIVE, { identity })).toBe('unknown');
    }
    expect(ownerValueAdmits(LIVE, { identity: 'seed-c', cluster: CLUSTER })).toBe('not-owner');
    expect(ownerValueAdmits(undefined, { identity: A })).toBe('unknown');
  });
});
