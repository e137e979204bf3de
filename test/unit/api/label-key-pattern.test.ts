import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LABEL_KEY_PATTERN, isLabelKey, labelKey } from '../../../core/model/names.js';
import { openApiDocument } from '../../../functions/api/openapi.js';

// What the OpenAPI document states about label and annotation keys must be what the server decides
// (isLabelKey): schemathesis sends what the pattern admits and counts a refusal as a failure.
const pattern = new RegExp(LABEL_KEY_PATTERN);

const segment = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...'abcxyz0189-'), minLength: min, maxLength: max });
// Prefixes around a DNS subdomain's 253 characters, made of segments as long as a DNS label and longer.
const prefix = fc
  .array(segment(1, 70), { minLength: 1, maxLength: 6 })
  .chain((parts) =>
    fc.constantFrom(parts.join('.'), parts.join('.').padEnd(250, 'a'), parts.join('.').padStart(254, 'b')),
  );
const name = fc.string({ unit: fc.constantFrom(...'aZ09-_.'), minLength: 0, maxLength: 66 });
const key = fc.oneof(
  name,
  fc.tuple(prefix, name).map(([p, n]) => `${p}/${n}`),
  fc.string({ unit: fc.constantFrom(...'a/.-Z_'), maxLength: 20 }),
);

describe('the label key pattern of the OpenAPI document', () => {
  it('admits exactly the keys the server accepts', () => {
    fc.assert(
      fc.property(key, (k) => {
        expect(pattern.test(k)).toBe(isLabelKey(k));
      }),
      { numRuns: 5_000 },
    );
  });

  it('bounds the prefix to 253 characters (schemathesis generated a key with a 262-character prefix)', () => {
    const at = (n: number) => `${'a'.repeat(n - 4)}.b.c/name`;
    for (const [k, accepted] of [
      [at(253), true],
      [at(254), false],
      [`${'a'.repeat(63)}.`.repeat(5).slice(0, 262) + '/x', false],
    ] as const) {
      expect(pattern.test(k)).toBe(accepted);
      expect(isLabelKey(k)).toBe(accepted);
      expect(labelKey.safeParse(k).success).toBe(accepted);
    }
  });

  it('is the pattern the document states for the keys of every labels, annotations and matchLabels map', () => {
    const stated: { path: string; pattern: unknown }[] = [];
    const walk = (node: unknown, path: string): void => {
      if (typeof node !== 'object' || node === null) return;
      for (const [k, v] of Object.entries(node)) {
        if (
          ['labels', 'annotations', 'matchLabels'].includes(k) &&
          typeof v === 'object' &&
          v !== null &&
          'propertyNames' in v
        ) {
          stated.push({ path: `${path}/${k}`, pattern: (v.propertyNames as { pattern?: unknown }).pattern });
        }
        walk(v, `${path}/${k}`);
      }
    };
    walk(openApiDocument({ version: '0.0.0' }), '');
    expect(stated.length).toBeGreaterThan(0);
    for (const { path, pattern: p } of stated) expect(p, path).toBe(LABEL_KEY_PATTERN);
  });
});
