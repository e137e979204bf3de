import { ConflictError } from '../errors.js';
import { checkOwner, type OwnerCheck, type OwnerLookup } from './check.js';
import { OwnerRecordsUnavailableError } from './errors.js';

/** The owner record does not name the expected seed: a state machine must not proceed as if it did. */
export class OwnershipAssertionError extends ConflictError<readonly string[]> {
  constructor(
    message: string,
    readonly recordName: string,
    readonly expected: string,
    options: { observed: readonly string[]; cause?: unknown },
  ) {
    super(message, { code: 'OwnershipAssertionFailed', current: options.observed, cause: options.cause });
  }
}

/**
 * "Assert that the owner is X": the check's `owner` is the result, `not-owner` is
 * `OwnershipAssertionError` (do not retry: someone else owns it), `unknown` is
 * `OwnerRecordsUnavailableError` (retry later).
 */
export async function assertOwner(input: { lookup: OwnerLookup; name: string; identity: string }): Promise<OwnerCheck> {
  const check = checkOwner({ outcome: await input.lookup.lookup(input.name), identity: input.identity });
  if (check.result === 'owner') return check;
  if (check.result === 'unknown')
    throw new OwnerRecordsUnavailableError(`owner of ${input.name} unknown: ${check.reason}`);
  throw new OwnershipAssertionError(`${input.name}: ${check.reason}`, input.name, input.identity, {
    observed: check.observed ?? [],
  });
}
