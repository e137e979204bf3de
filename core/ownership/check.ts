import { ValidationError } from '../errors.js';
import { ownerValueAdmits, parseOwnerValue, type OwnerCheckResult } from './owner-value.js';

export type { OwnerCheckResult };

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
export function checkOwner(input: {
  outcome: OwnerLookupOutcome;
  identity: string;
  /**
   * The etcd cluster ID (hex) of the member asking, which a live walk's value (`source+destination@cluster`,
   * owner-value.ts) needs; undefined when it cannot tell, which makes such a value `unknown`.
   */
  cluster?: string;
}): OwnerCheck {
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
      const results = values.map((v) => admits(v, identity, input.cluster));
      const mine = results.filter((r) => r === 'owner').length;
      if (mine === values.length)
        return { result: 'owner', reason: `owner record names this seed (${identity})`, observed: values };
      if (values.length === 1 && results[0] === 'unknown')
        return {
          result: 'unknown',
          reason: `owner record ${values[0]} admits members of one etcd cluster, and this member's cluster is not known`,
          observed: values,
        };
      if (results.every((r) => r === 'not-owner'))
        return {
          result: 'not-owner',
          reason: values.some((v) => names(v, identity))
            ? `owner record ${values.join(', ')} admits another etcd cluster than this member's (${input.cluster})`
            : `owner record names ${values.join(', ')}, not ${identity}`,
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

/** Whether the check of `outcome` needs the asking member's etcd cluster ID (a live walk's value). */
export function needsCluster(outcome: OwnerLookupOutcome): boolean {
  return outcome.kind === 'found' && outcome.values.some((v) => parseOwnerValue(v)?.kind === 'live');
}

function names(value: string, identity: string): boolean {
  const parsed = parseOwnerValue(value);
  return parsed?.kind === 'live' && (parsed.origin === identity || parsed.destination === identity);
}

/** A value that is not a live walk's is compared as it always was: this seed's identity or not. */
function admits(value: string, identity: string, cluster: string | undefined): OwnerCheckResult {
  const parsed = parseOwnerValue(value);
  if (parsed?.kind === 'live') return ownerValueAdmits(parsed, { identity, ...(cluster ? { cluster } : {}) });
  return value === identity ? 'owner' : 'not-owner';
}

/** Looks the owner record up and applies the three-valued check. */
export async function lookUpOwner(lookup: OwnerLookup, input: { name: string; identity: string }): Promise<OwnerCheck> {
  return checkOwner({ outcome: await lookup.lookup(input.name), identity: input.identity });
}
