import { ValidationError } from '../../core/errors.js';

/** Opaque `continue` tokens: the DynamoDB LastEvaluatedKey, checked on the way back in. */
export function encodeToken(key: Record<string, unknown> | undefined): string | undefined {
  return key ? Buffer.from(JSON.stringify(key)).toString('base64url') : undefined;
}

export function decodeToken(token: string | undefined, expectedKeys: readonly string[]): Record<string, string> | undefined {
  if (token === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch (error) {
    throw new ValidationError('continue: not a token this API returned', { field: 'continue', cause: error });
  }
  const ok =
    typeof value === 'object' && value !== null && !Array.isArray(value) &&
    Object.keys(value).length === expectedKeys.length &&
    expectedKeys.every((k) => typeof (value as Record<string, unknown>)[k] === 'string' && ((value as Record<string, string>)[k] ?? '').length <= 512);
  if (!ok) throw new ValidationError('continue: not a token this API returned', { field: 'continue' });
  return value as Record<string, string>;
}
