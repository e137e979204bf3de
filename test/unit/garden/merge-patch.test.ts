import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyMergePatch, isPlainObject } from '../../../core/garden/merge-patch.js';

describe('applyMergePatch', () => {
  // RFC 7386, Appendix A: every example, in order.
  it.each<[unknown, unknown, unknown]>([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('RFC 7386 A: %j patched with %j is %j', (target, patch, expected) => {
    // Act
    const result = applyMergePatch(target, patch);
    // Assess
    expect(result).toEqual(expected);
  });

  it('leaves the target and the patch unchanged', () => {
    // Prepare
    const target = { spec: { region: 'eu-west-1', hibernation: { enabled: false } }, metadata: { labels: { a: '1' } } };
    const patch = { spec: { hibernation: { enabled: true } }, metadata: { labels: null } };
    const before = structuredClone({ target, patch });
    // Act
    const result = applyMergePatch(target, patch);
    // Assess
    expect(result).toEqual({ spec: { region: 'eu-west-1', hibernation: { enabled: true } }, metadata: {} });
    expect({ target, patch }).toEqual(before);
  });

  it('is idempotent: applying a patch twice is applying it once', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (target, patch) => {
        const once = applyMergePatch(target, patch);
        expect(applyMergePatch(once, patch)).toEqual(once);
      }),
    );
  });
});

describe('isPlainObject', () => {
  it.each<[unknown, boolean]>([
    [{}, true],
    [{ a: 1 }, true],
    [[], false],
    [null, false],
    ['x', false],
    [1, false],
    [undefined, false],
  ])('%j is a plain object: %s', (value, expected) => {
    expect(isPlainObject(value)).toBe(expected);
  });
});
