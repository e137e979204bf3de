import { ValidationError } from '../errors.js';
import { MAX_JSON_DEPTH } from './json-input.js';

/**
 * JSON merge patch (RFC 7386): objects merge recursively, `null` removes a member, anything else
 * replaces. Arrays replace as a whole, which is what Kubernetes does for merge patches too.
 *
 * The recursion is bounded (a patch deeper than MAX_JSON_DEPTH is a 400, never a stack overflow), and
 * members are defined, not assigned, so that a member named `__proto__` stays a member that validation
 * refuses instead of replacing the result's prototype.
 */
export function applyMergePatch(target: unknown, patch: unknown, depth = 0): unknown {
  if (!isPlainObject(patch)) return patch;
  if (depth >= MAX_JSON_DEPTH)
    throw new ValidationError(`the merge patch nests deeper than ${MAX_JSON_DEPTH} levels`, { code: 'TooDeep' });
  const result: Record<string, unknown> = {};
  if (isPlainObject(target)) for (const [key, value] of Object.entries(target)) define(result, key, value);
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else define(result, key, applyMergePatch(Object.hasOwn(result, key) ? result[key] : undefined, value, depth + 1));
  }
  return result;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function define(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}
