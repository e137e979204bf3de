import { describe, expect, it } from 'vitest';
import { itemSize } from '../../../adapters/dynamodb/item-size.js';

describe("itemSize: DynamoDB's measure of an item", () => {
  it.each<[string, Record<string, unknown>, number]>([
    ['a string by its UTF-8 bytes, beside its name', { pk: 'SEED#a' }, 2 + 6],
    ['a multi-byte string', { n: 'é€' }, 1 + 5],
    ['a number by half its significant digits, plus one', { n: 12_345 }, 1 + 4],
    ['a number without its leading and trailing zeros', { n: 1_000 }, 1 + 2],
    ['a boolean and a null as one byte', { b: true, z: null }, 2 + 2],
    ['a map as three bytes and one a member', { m: { ab: 'x' } }, 1 + 3 + 1 + 2 + 1],
    ['a list as three bytes and one a member', { l: ['x', 'yz'] }, 1 + 3 + 2 + 3],
    ['an undefined attribute as nothing', { a: 'x', u: undefined }, 2],
  ])('counts %s', (_, item, size) => {
    expect(itemSize(item)).toBe(size);
  });
});
