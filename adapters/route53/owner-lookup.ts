import { OwnerRecordsUnavailableError, type OwnerLookup, type OwnerLookupOutcome } from '../../core/ownership/index.js';
import type { Route53OwnerRecords } from './owner-records.js';

/**
 * API mode of the owner check, for the emulator (which serves no DNS): reads the TXT record set through
 * the Route 53 API, every value of it, so that a record with several values is `unknown` exactly as in
 * DNS mode. In AWS, seeds use DNS mode (`DnsOwnerLookup`): the Route 53 API allows a few requests per
 * second per account. Like `ownerLookupFromRecords`, any failure to read is no answer, never "not owner".
 */
export class Route53OwnerLookup implements OwnerLookup {
  constructor(private readonly records: Route53OwnerRecords) {}

  async lookup(name: string): Promise<OwnerLookupOutcome> {
    try {
      const set = await this.records.getTxt(name);
      if (set === undefined) return { kind: 'absent', reason: 'nxdomain' };
      return set.values.length === 0 ? { kind: 'absent', reason: 'nodata' } : { kind: 'found', values: set.values };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const throttled =
        error instanceof OwnerRecordsUnavailableError && /throttl|PriorRequestNotComplete|rate exceeded/i.test(message);
      return { kind: 'failed', failure: throttled ? 'throttled' : 'other', message, cause: error };
    }
  }
}
