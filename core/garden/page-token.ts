import { ValidationError } from '../errors.js';

/**
 * Opaque `continue` tokens bound to the list they came from. A token names its list (`seeds`,
 * `shoots/<project>`, `shoots`) and the sort key of the last item returned; a token of another list,
 * or one this API did not make, is refused with 400 before any store sees it. Repositories rebuild
 * their own start keys from `after`, so that nothing a client sends reaches the store unchecked.
 */
export interface PageTokenContent {
  list: string;
  after: string;
}

const MAX_AFTER = 512;
const TOKEN_ERROR = 'continue: not a token this API returned for this list';

export function listIdentity(kind: 'seeds' | 'shoots', project?: string): string {
  return project === undefined ? kind : `${kind}/${project}`;
}

/** The list of the shoots placed on one seed. */
export function seedShootsListIdentity(seed: string): string {
  return `seeds/${seed}/shoots`;
}

export function encodePageToken(content: PageTokenContent): string {
  return Buffer.from(JSON.stringify({ l: content.list, a: content.after })).toString('base64url');
}

/** The `after` key of a token made for `list`; ValidationError (400) for anything else. */
export function decodePageToken(
  token: string | undefined,
  list: string,
  validAfter: (after: string) => boolean = () => true,
): string | undefined {
  if (token === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch (error) {
    throw new ValidationError(TOKEN_ERROR, { field: 'continue', cause: error });
  }
  const record =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  const after = record?.a;
  const ok =
    record !== undefined &&
    Object.keys(record).length === 2 &&
    record.l === list &&
    typeof after === 'string' &&
    after.length > 0 &&
    after.length <= MAX_AFTER &&
    validAfter(after);
  if (!ok) throw new ValidationError(TOKEN_ERROR, { field: 'continue' });
  return after as string;
}
