import type { ListResourceRecordSetsCommandInput, ListResourceRecordSetsCommandOutput } from '@aws-sdk/client-route-53';
import { describe, expect, it } from 'vitest';
import { Route53OwnerLookup } from '../../../adapters/route53/owner-lookup.js';
import { Route53OwnerRecords, type Route53Api } from '../../../adapters/route53/owner-records.js';
import { lookUpOwner, type OwnerLookupOutcome } from '../../../core/ownership/index.js';

const ME = 'aws-eu1-1111';
const NAME = 'owner.api1.dev.example';

/** A Route 53 API that answers ListResourceRecordSets from a table, or fails with the given error. */
function api(answer: { values?: string[]; error?: { name: string; message: string } }): Route53Api {
  return {
    changeResourceRecordSets: async () => {
      throw new Error('the lookup never writes');
    },
    listResourceRecordSets: async (
      input: ListResourceRecordSetsCommandInput,
    ): Promise<ListResourceRecordSetsCommandOutput> => {
      if (answer.error) throw Object.assign(new Error(answer.error.message), { name: answer.error.name });
      const sets = answer.values
        ? [
            {
              Name: `${input.StartRecordName}.`,
              Type: 'TXT' as const,
              TTL: 5,
              ResourceRecords: answer.values.map((v) => ({ Value: `"${v}"` })),
            },
          ]
        : [];
      return { ResourceRecordSets: sets, IsTruncated: false, MaxItems: 1, $metadata: {} };
    },
  };
}

describe('Route53OwnerLookup (API mode)', () => {
  it.each<[string, Parameters<typeof api>[0], OwnerLookupOutcome, 'owner' | 'not-owner' | 'unknown']>([
    ['a record naming this seed', { values: [ME] }, { kind: 'found', values: [ME] }, 'owner'],
    ['no record', {}, { kind: 'absent', reason: 'nxdomain' }, 'not-owner'],
    ['two values', { values: [ME, 'other'] }, { kind: 'found', values: [ME, 'other'] }, 'unknown'],
  ])('maps %s', async (_case, answer, outcome, result) => {
    const lookup = new Route53OwnerLookup(new Route53OwnerRecords({ hostedZoneId: 'Z1', api: api(answer) }));

    expect(await lookup.lookup(NAME)).toEqual(outcome);
    expect((await lookUpOwner(lookup, { name: NAME, identity: ME })).result).toBe(result);
  });

  it.each([
    ['Throttling', 'Rate exceeded', 'throttled'],
    ['AccessDenied', 'not allowed', 'other'],
  ])('a failing API (%s) is no answer, never "not owner"', async (name, message, failure) => {
    const lookup = new Route53OwnerLookup(
      new Route53OwnerRecords({ hostedZoneId: 'Z1', api: api({ error: { name, message } }) }),
    );

    const outcome = await lookup.lookup(NAME);

    expect(outcome).toMatchObject({ kind: 'failed', failure });
    expect((await lookUpOwner(lookup, { name: NAME, identity: ME })).result).toBe('unknown');
  });
});
