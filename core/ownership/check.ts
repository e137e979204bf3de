import { ValidationError } from '../errors.js';

export type OwnerCheckResult = 'owner' | 'not-owner' | 'unknown';

/** Why a lookup gave no answer. All of them mean `unknown`: the name may well exist. */
export type OwnerLookupFailure = 'timeout' | 'servfail' | 'refused' | 'network' | 'throttled' | 'other';

/** What one lookup of the owner record saw, in DNS or API mode. */
export type OwnerLookupOutcome =
  /** TXT values found (each value's character strings already joined). */
  | { readonly kind: 'found'; readonly values: readonly string[] }
  /** The name authoritatively does not exist (NXDOMAIN) or has no TXT data (NODATA). */
  | { readonly kind: 'absent'; readonly reason: 'nxdomain' | 'nodata' }
  /** The lookup itself failed. */
  | {
      readonly kind: 'failed';
      readonly failure: OwnerLookupFailure;
      readonly message?: string;
      readonly cause?: unknown;
    };

export interface OwnerCheck {
  readonly result: OwnerCheckResult;
  /** Why, in words an operator can act on (logged and reported in heartbeats). */
  readonly reason: string;
  /** The values the lookup returned, when it returned any. */
  readonly observed?: readonly string[];
}

/**
 * Anything that can look up an owner record: DNS in steady state, the Route 53 API against the emulator.
 * `fresh`: the caller was told the record changed (an owner-change notice), so an answer this lookup
 * cached itself must not be reused; what resolvers on the way cache is theirs.
 */
export interface OwnerLookup {
  lookup(name: string, options?: { readonly fresh?: boolean }): Promise<OwnerLookupOutcome>;
  /**
   * How old an answer may be when this lookup gives it (ms): its own cache plus what caching resolvers on the
   * way may hold (the fence bound's `dnsCacheTTL`). Absent: none (it reads the records' API).
   */
  readonly staleness?: number;
}

/**
 * The three-valued owner check of docs/design.md section 4, as a pure function of one lookup outcome.
 * Only the orchestrator writes the record, with a single value; several values mean someone wrote it
 * by hand or a change is half applied. If they disagree about this seed, nothing proves either way, so
 * the answer is `unknown`: the seed keeps serving through the grace and fences after it, but takes no
 * final snapshot and can come back once the record is clean.
 */
export function checkOwner(input: { outcome: OwnerLookupOutcome; identity: string }): OwnerCheck {
  const { outcome, identity } = input;
  if (identity.length === 0) throw new ValidationError('seed identity must not be empty', { field: 'identity' });
  switch (outcome.kind) {
    case 'absent':
      return {
        result: 'not-owner',
        reason:
          outcome.reason === 'nxdomain' ? 'owner record does not exist (NXDOMAIN)' : 'owner record has no TXT data',
      };
    case 'failed':
      return {
        result: 'unknown',
        reason: `owner lookup failed (${outcome.failure})${outcome.message ? `: ${outcome.message}` : ''}`,
      };
    case 'found': {
      const values = outcome.values;
      if (values.length === 0) return { result: 'not-owner', reason: 'owner record has no TXT data', observed: values };
      const mine = values.filter((v) => v === identity).length;
      if (mine === values.length)
        return { result: 'owner', reason: `owner record names this seed (${identity})`, observed: values };
      if (mine === 0)
        return {
          result: 'not-owner',
          reason: `owner record names ${values.join(', ')}, not ${identity}`,
          observed: values,
        };
      return {
        result: 'unknown',
        reason: `owner record has ${values.length} conflicting values: ${values.join(', ')}`,
        observed: values,
      };
    }
  }
}

/** Looks the owner record up and applies the three-valued check. */
export async function lookUpOwner(lookup: OwnerLookup, input: { name: string; identity: string }): Promise<OwnerCheck> {
  return checkOwner({ outcome: await lookup.lookup(input.name), identity: input.identity });
}
