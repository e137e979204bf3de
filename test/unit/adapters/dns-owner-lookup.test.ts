import { describe, expect, it } from 'vitest';
import { DnsOwnerLookup } from '../../../adapters/dns/owner-lookup.js';
import { DEFAULT_OWNER_RECORD_TTL_SECONDS, ownershipTimings } from '../../../core/ownership/index.js';

describe('DnsOwnerLookup.staleness: how old an owner answer it may act on', () => {
  it.each([
    ['the defaults: its cache (the check interval) plus the record TTL a resolver may hold', {}, 5_000],
    ['a shorter cache', { ownerCheckInterval: 5_000, cacheTTL: 1_000 }, 1_000],
    ['no cache', { ownerCheckInterval: 500, cacheTTL: 0 }, 0],
  ])('%s', (_case, options, cache) => {
    expect(new DnsOwnerLookup(options).staleness).toBe(cache + DEFAULT_OWNER_RECORD_TTL_SECONDS * 1_000);
  });

  it("is the design's dnsCacheTTL at the defaults", () => {
    expect(new DnsOwnerLookup().staleness).toBe(ownershipTimings().dnsCacheTTL);
  });
});
