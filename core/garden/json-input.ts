import { ValidationError } from '../errors.js';

/**
 * How deeply a request body may nest. No resource of this API goes deeper than 8 levels; the bound is
 * checked on the raw text before anything recursive (JSON.parse, the merge, validation) runs.
 */
export const MAX_JSON_DEPTH = 32;

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Parses a request body, refusing with 400 what would otherwise fail deeper inside: nesting beyond
 * MAX_JSON_DEPTH (`TooDeep`), text that is not JSON (`MalformedJSON`), and strings or member names that
 * are not valid Unicode, i.e. hold a lone UTF-16 surrogate (`InvalidUnicode`), which no store can keep.
 */
export function parseJsonBody(text: string): unknown {
  assertJsonDepth(text);
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (cause) {
    throw new ValidationError(`the body is not valid JSON: ${cause instanceof Error ? cause.message : String(cause)}`, {
      code: 'MalformedJSON',
      cause,
    });
  }
  assertWellFormed(value, '');
  return value;
}

/** Scans the raw text once, counting brackets outside strings. */
export function assertJsonDepth(text: string, max = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) throw new ValidationError(`the body nests deeper than ${max} levels`, { code: 'TooDeep' });
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
}

/** Whether a string is well-formed Unicode (no lone surrogate). */
export function isWellFormedText(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}

/** Refuses a value (of bounded depth) any string or member name of which holds a lone surrogate. */
export function assertWellFormed(value: unknown, path: string): void {
  if (typeof value === 'string') {
    if (!isWellFormedText(value)) throw invalidUnicode(path);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => assertWellFormed(v, path ? `${path}.${i}` : String(i)));
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const at = path ? `${path}.${k}` : k;
      if (!isWellFormedText(k)) throw invalidUnicode(path);
      assertWellFormed(v, at);
    }
  }
}

function invalidUnicode(path: string): ValidationError {
  return new ValidationError(`${path || 'body'}: not valid Unicode (a lone UTF-16 surrogate)`, {
    code: 'InvalidUnicode',
    ...(path ? { field: path.replace(/[\uD800-\uDFFF]/g, '\uFFFD') } : {}),
  });
}
