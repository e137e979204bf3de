import { promises as dns } from 'node:dns';
import { ValidationError } from '../../core/errors.js';
import {
  DEFAULT_OWNER_CHECK_INTERVAL_MS,
  DEFAULT_OWNER_RECORD_TTL_SECONDS,
  type OwnerLookup,
  type OwnerLookupFailure,
  type OwnerLookupOutcome,
} from '../../core/ownership/index.js';

/**
 * DNS mode of the owner check: seeds in steady state resolve the owner TXT record through DNS, so the
 * Route 53 API (a few requests per second per account) is never loaded by checks.
 */

export interface DnsOwnerLookupOptions {
  /** Name servers as `host`, `host:port` or `[v6]:port`. Default: the system's resolvers. */
  readonly servers?: readonly string[];
  /** Per try, ms. Default 1 s. */
  readonly timeout?: number;
  /** Tries per lookup before it reports `timeout`. Default 2. */
  readonly tries?: number;
  /** The owner check interval, ms. Default 5 s. The cache never outlives it. */
  readonly ownerCheckInterval?: number;
  /**
   * How long an answer (a value or an authoritative absence) is reused, ms. Default and maximum: the
   * check interval, which is what the fence bound's `dnsCacheTTL` assumes. Failures are never cached.
   */
  readonly cacheTTL?: number;
  /** A monotonic clock in ms; tests inject one. Default `performance.now`. */
  readonly now?: () => number;
}

interface CacheEntry {
  readonly outcome: OwnerLookupOutcome;
  readonly expiresAt: number;
}

/** c-ares error codes: an authoritative "no such record" is evidence; everything else is no answer. */
const ABSENT: Record<string, 'nxdomain' | 'nodata'> = { ENOTFOUND: 'nxdomain', ENODATA: 'nodata' };
const FAILURES: Record<string, OwnerLookupFailure> = {
  ETIMEOUT: 'timeout',
  ESERVFAIL: 'servfail',
  ECONNREFUSED: 'refused',
  EREFUSED: 'refused',
  ECONNRESET: 'network',
  EBADRESP: 'network',
  EOF: 'network',
  EFORMERR: 'network',
};

export class DnsOwnerLookup implements OwnerLookup {
  /** Its cache, plus the owner record's TTL, for which a caching resolver on the way may serve an old answer. */
  readonly staleness: number;
  private readonly resolver: dns.Resolver;
  private readonly cacheTTL: number;
  private readonly now: () => number;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<OwnerLookupOutcome>>();

  constructor(options: DnsOwnerLookupOptions = {}) {
    const interval = options.ownerCheckInterval ?? DEFAULT_OWNER_CHECK_INTERVAL_MS;
    const cacheTTL = options.cacheTTL ?? interval;
    const timeout = options.timeout ?? 1_000;
    const tries = options.tries ?? 2;
    if (!(interval > 0))
      throw new ValidationError(`ownerCheckInterval must be positive, got ${interval}`, {
        field: 'ownerCheckInterval',
      });
    if (!(cacheTTL >= 0) || cacheTTL > interval) {
      throw new ValidationError(
        `cacheTTL must be between 0 and the owner check interval (${interval} ms), got ${cacheTTL}`,
        { field: 'cacheTTL' },
      );
    }
    if (!Number.isInteger(timeout) || timeout < 1)
      throw new ValidationError(`timeout must be a positive whole number of ms, got ${timeout}`, { field: 'timeout' });
    if (!Number.isInteger(tries) || tries < 1)
      throw new ValidationError(`tries must be a positive integer, got ${tries}`, { field: 'tries' });
    this.resolver = new dns.Resolver({ timeout, tries });
    if (options.servers !== undefined) this.resolver.setServers([...options.servers]);
    this.cacheTTL = cacheTTL;
    this.staleness = cacheTTL + DEFAULT_OWNER_RECORD_TTL_SECONDS * 1_000;
    this.now = options.now ?? (() => performance.now());
  }

  async lookup(name: string, options: { readonly fresh?: boolean } = {}): Promise<OwnerLookupOutcome> {
    const key = name.toLowerCase().replace(/\.$/, '');
    if (!options.fresh) {
      const cached = this.cache.get(key);
      if (cached !== undefined && this.now() < cached.expiresAt) return cached.outcome;
    }
    // Concurrent checks of the same record share one query; a fresh one does not join a query sent before it was asked for.
    const pending = this.inFlight.get(key);
    if (pending !== undefined && !options.fresh) return pending;
    const query = this.resolve(key).finally(() => {
      if (this.inFlight.get(key) === query) this.inFlight.delete(key);
    });
    this.inFlight.set(key, query);
    return query;
  }

  /** Cancels queries in flight (they report `unknown`), for shutdown. */
  cancel(): void {
    this.resolver.cancel();
  }

  private async resolve(name: string): Promise<OwnerLookupOutcome> {
    const startedAt = this.now();
    let outcome: OwnerLookupOutcome;
    try {
      // A TXT record's value may be split into several character-strings; they form one value.
      const records = await this.resolver.resolveTxt(name);
      outcome = { kind: 'found', values: records.map((chunks) => chunks.join('')) };
    } catch (error) {
      outcome = classify(error);
    }
    // The TTL counts from the query, so an answer is never older than cacheTTL when it is reused.
    // An older query that answers after a fresh one must not replace the fresher answer.
    const expiresAt = startedAt + this.cacheTTL;
    if (outcome.kind !== 'failed' && !((this.cache.get(name)?.expiresAt ?? -Infinity) > expiresAt))
      this.cache.set(name, { outcome, expiresAt });
    return outcome;
  }
}

function classify(error: unknown): OwnerLookupOutcome {
  const code =
    typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : '';
  const absent = ABSENT[code];
  if (absent !== undefined) return { kind: 'absent', reason: absent };
  const message = error instanceof Error ? error.message : String(error);
  return { kind: 'failed', failure: FAILURES[code] ?? 'other', message, cause: error };
}
