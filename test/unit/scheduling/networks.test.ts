import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCidr } from '../../../core/model/index.js';
import { parseCidrFast } from '../../../core/scheduling/index.js';

describe('parseCidrFast', () => {
  it.each([
    '10.0.0.0/8',
    '0.0.0.0/0',
    '255.255.255.255/32',
    '10.0.0.1/8',
    '256.0.0.0/8',
    '10.0.0/8',
    '10.0.0.0/33',
    '10.0.0.0/',
    '10.0.0.0',
    '1.2.3.4/032',
    '010.0.0.0/8',
    ' 10.0.0.0/8',
    '10.0.0.0/8 ',
    '1..2.3/4',
    'a.b.c.d/8',
  ])('agrees with the model parser on %j', (text) => {
    expect(parseCidrFast(text)).toEqual(parseCidr(text));
  });

  it('agrees with the model parser on generated CIDRs and near-CIDRs', () => {
    const octet = fc.oneof(fc.integer({ min: 0, max: 300 }).map(String), fc.constantFrom('', '00', '0255', 'x'));
    const text = fc
      .tuple(
        octet,
        octet,
        octet,
        octet,
        fc.oneof(fc.integer({ min: 0, max: 40 }).map(String), fc.constant('')),
        fc.constantFrom('.', '/', ':'),
      )
      .map(([a, b, c, d, prefix, sep]) => `${a}.${b}.${c}${sep === ':' ? ':' : '.'}${d}/${prefix}`);
    const aligned = fc
      .tuple(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 32 }))
      .map(([address, prefix]) => {
        const size = 2 ** (32 - prefix);
        const first = Math.floor(address / size) * size;
        return `${first >>> 24}.${(first >>> 16) & 255}.${(first >>> 8) & 255}.${first & 255}/${prefix}`;
      });
    fc.assert(
      fc.property(fc.oneof(text, aligned), (t) => {
        expect(parseCidrFast(t)).toEqual(parseCidr(t));
      }),
      { numRuns: 2000 },
    );
  });
});
