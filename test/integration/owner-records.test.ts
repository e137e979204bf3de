import { ChangeResourceRecordSetsCommand, CreateHostedZoneCommand, Route53Client } from '@aws-sdk/client-route-53';
import { beforeAll, describe, expect, it } from 'vitest';
import { Route53OwnerLookup } from '../../adapters/route53/owner-lookup.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { lookUpOwner, OwnerRecordConflictError, ownerRecordName } from '../../core/ownership/index.js';
import { deployed, unique } from './support/aws.js';

describe('Route 53 owner records on the emulator', () => {
  let client: Route53Client;
  let records: Route53OwnerRecords;
  let domain: string;
  let zoneId: string;

  beforeAll(async () => {
    client = new Route53Client(deployed().awsConfig);
    domain = `${unique('it')}.gardenless.test`;
    const zone = await client.send(new CreateHostedZoneCommand({ Name: domain, CallerReference: unique('ref') }));
    zoneId = zone.HostedZone!.Id!;
    records = new Route53OwnerRecords({ hostedZoneId: zoneId, api: route53Api(client) });
  });

  const name = (shoot: string) => ownerRecordName({ shoot, project: 'dev', internalDomain: domain });

  it('sets, conditionally replaces and deletes an owner record, with quoted TXT values', async () => {
    const record = name('api1');
    expect(await records.get(record)).toBeUndefined();

    // Create only if absent, then again (a retried step): both succeed, the second changes nothing.
    expect(await records.set({ name: record, value: 'seed-a-1', expected: null })).toEqual({
      name: record,
      value: 'seed-a-1',
      ttl: 5,
    });
    expect(await records.set({ name: record, value: 'seed-a-1', expected: null })).toMatchObject({ value: 'seed-a-1' });
    await expect(records.set({ name: record, value: 'seed-b-1', expected: null })).rejects.toBeInstanceOf(
      OwnerRecordConflictError,
    );

    // Move ownership only from the expected owner; the failed condition carries the current record.
    const stale = await records.set({ name: record, value: 'seed-c-1', expected: 'seed-x-1' }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(OwnerRecordConflictError);
    expect((stale as OwnerRecordConflictError).current).toMatchObject({ value: 'seed-a-1' });
    await records.set({ name: record, value: 'seed-b-1', expected: 'seed-a-1' });
    expect(await records.get(record)).toEqual({ name: record, value: 'seed-b-1', ttl: 5 });
    expect((await records.getTxt(record))?.values).toEqual(['seed-b-1']);

    // Values with quotes and backslashes survive the round trip.
    await records.set({ name: record, value: 'odd "seed" \\ 1' });
    expect((await records.get(record))?.value).toBe('odd "seed" \\ 1');

    await expect(records.delete({ name: record, expected: 'seed-b-1' })).rejects.toBeInstanceOf(
      OwnerRecordConflictError,
    );
    expect(await records.delete({ name: record, expected: 'odd "seed" \\ 1' })).toBe(true);
    expect(await records.delete({ name: record })).toBe(false);
    expect(await records.get(record)).toBeUndefined();
  });

  it('lists 650 owner records in pages of at most 300 with an opaque cursor', async () => {
    const names = Array.from({ length: 650 }, (_, i) => name(`page-${String(i).padStart(4, '0')}`));
    // Prepare in one change batch per 500 records (the test's setup, not the adapter, which changes one record at a time).
    for (let i = 0; i < names.length; i += 500) {
      await client.send(
        new ChangeResourceRecordSetsCommand({
          HostedZoneId: zoneId,
          ChangeBatch: {
            Changes: names.slice(i, i + 500).map((n, j) => ({
              Action: 'CREATE',
              ResourceRecordSet: { Name: n, Type: 'TXT', TTL: 5, ResourceRecords: [{ Value: `"seed-${i + j}"` }] },
            })),
          },
        }),
      );
    }
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    let calls = 0;
    do {
      const page = await records.list(cursor === undefined ? {} : { cursor });
      calls += 1;
      sizes.push(page.records.length);
      seen.push(...page.records.map((r) => r.name));
      cursor = page.next;
    } while (cursor !== undefined);
    expect(calls).toBe(3);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(300);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((n) => n.startsWith('owner.page-')).sort()).toEqual([...names].sort());
    await expect(records.list({ cursor: 'not-a-cursor' })).rejects.toThrow(/cursor/);
  });

  it('answers the three-valued check in API mode', async () => {
    const lookup = new Route53OwnerLookup(records);
    const record = name('check1');
    await records.set({ name: record, value: 'seed-a-1' });
    expect((await lookUpOwner(lookup, { name: record, identity: 'seed-a-1' })).result).toBe('owner');
    expect((await lookUpOwner(lookup, { name: record, identity: 'seed-b-1' })).result).toBe('not-owner');
    expect((await lookUpOwner(lookup, { name: name('nobody'), identity: 'seed-a-1' })).result).toBe('not-owner');
    const broken = new Route53OwnerLookup(
      new Route53OwnerRecords({ hostedZoneId: 'Z0000000NOSUCHZONE', api: route53Api(client) }),
    );
    expect((await lookUpOwner(broken, { name: record, identity: 'seed-a-1' })).result).toBe('unknown');
  });
});
