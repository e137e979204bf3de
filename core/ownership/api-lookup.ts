import type { OwnerLookup, OwnerLookupOutcome } from './check.js';
import type { OwnerRecords } from './owner-records.js';

/**
 * API mode: looks the owner record up through the `OwnerRecords` seam. For the emulator, which serves
 * no DNS; in AWS it would load Route 53's control-plane rate limit, so seeds use DNS mode there.
 */
export function ownerLookupFromRecords(records: OwnerRecords): OwnerLookup {
  return {
    async lookup(name: string): Promise<OwnerLookupOutcome> {
      try {
        const record = await records.get(name);
        return record === undefined ? { kind: 'absent', reason: 'nxdomain' } : { kind: 'found', values: [record.value] };
      } catch (error) {
        // Any failure to read is "no answer", never "not owner": a throttled API must not fence a healthy seed.
        return { kind: 'failed', failure: 'other', message: error instanceof Error ? error.message : String(error), cause: error };
      }
    },
  };
}
