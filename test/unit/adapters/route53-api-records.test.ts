import type {
  Change,
  ChangeResourceRecordSetsCommandInput,
  ListResourceRecordSetsCommandInput,
  ResourceRecordSet,
} from '@aws-sdk/client-route-53';
import { describe, expect, it } from 'vitest';
import { Route53ApiRecords } from '../../../adapters/route53/api-records.js';
import type { Route53Api } from '../../../adapters/route53/route53-api.js';
import { ApiRecordConflictError, ApiRecordsUnavailableError } from '../../../core/dns/index.js';

const NAME = 'api.api1.dev.shoots.example';
const SOURCE = { type: 'A', value: '127.0.0.2' } as const;
const DESTINATION = { type: 'A', value: '127.0.0.3' } as const;

/**
 * A Route 53 zone with its change-batch rules: a DELETE must match the record set exactly, a CREATE must
 * find none of that name and type, and the batch applies as a whole or not at all (InvalidChangeBatch).
 * `before` runs before every change: a concurrent writer.
 */
function zone(options: { before?: (sets: Map<string, ResourceRecordSet>) => void; fail?: string } = {}) {
  const sets = new Map<string, ResourceRecordSet>();
  const key = (s: ResourceRecordSet) => `${s.Name!.replace(/\.$/, '')}.|${s.Type}`;
  const batches: Change[][] = [];
  const api: Route53Api = {
    changeResourceRecordSets: async (input: ChangeResourceRecordSetsCommandInput) => {
      if (options.fail) throw Object.assign(new Error('no'), { name: options.fail });
      options.before?.(sets);
      const next = new Map(sets);
      for (const change of input.ChangeBatch!.Changes!) {
        const k = key(change.ResourceRecordSet!);
        if (change.Action === 'DELETE') {
          if (
            JSON.stringify(next.get(k)) !==
            JSON.stringify({ ...change.ResourceRecordSet, Name: `${change.ResourceRecordSet!.Name}.` })
          )
            throw Object.assign(new Error('not found'), { name: 'InvalidChangeBatch' });
          next.delete(k);
        } else {
          if (next.has(k)) throw Object.assign(new Error('exists'), { name: 'InvalidChangeBatch' });
          next.set(k, { ...change.ResourceRecordSet!, Name: `${change.ResourceRecordSet!.Name}.` });
        }
      }
      sets.clear();
      for (const [k, v] of next) sets.set(k, v);
      batches.push(input.ChangeBatch!.Changes!);
      return { ChangeInfo: { Id: 'c', Status: 'PENDING', SubmittedAt: new Date() }, $metadata: {} };
    },
    listResourceRecordSets: async (input: ListResourceRecordSetsCommandInput) => {
      if (options.fail) throw Object.assign(new Error('no'), { name: options.fail });
      const sorted = [...sets.values()]
        .sort((a, b) => key(a).localeCompare(key(b)))
        .filter((s) => input.StartRecordName === undefined || s.Name! >= input.StartRecordName);
      return {
        ResourceRecordSets: sorted.slice(0, input.MaxItems ?? 300),
        IsTruncated: false,
        MaxItems: input.MaxItems ?? 300,
        $metadata: {},
      };
    },
  };
  return { api, sets, batches };
}

describe('Route53ApiRecords', () => {
  it('creates an A record on condition that none exists; a retried create changes nothing', async () => {
    const z = zone();
    const records = new Route53ApiRecords({ hostedZoneId: '/hostedzone/Z1', api: z.api });
    expect(await records.set({ name: NAME, target: SOURCE, ttl: 30, expected: null })).toEqual({
      name: NAME,
      ...SOURCE,
      ttl: 30,
    });
    await records.set({ name: NAME, target: SOURCE, ttl: 30, expected: null });
    expect(z.batches).toHaveLength(1);
    expect(await records.get(`${NAME}.`)).toEqual({ name: NAME, ...SOURCE, ttl: 30 });
  });

  it('switches in one batch that deletes exactly what it read, also across record types', async () => {
    const z = zone();
    const records = new Route53ApiRecords({ hostedZoneId: 'Z1', api: z.api });
    await records.set({ name: NAME, target: SOURCE });
    await records.set({ name: NAME, target: { type: 'CNAME', value: 'lb.example.com' }, expected: SOURCE });
    expect(
      z.batches[1]!.map(
        (c) => `${c.Action} ${c.ResourceRecordSet!.Type} ${c.ResourceRecordSet!.ResourceRecords![0]!.Value}`,
      ),
    ).toEqual(['DELETE A 127.0.0.2', 'CREATE CNAME lb.example.com']);
    expect(await records.get(NAME)).toMatchObject({ type: 'CNAME', value: 'lb.example.com' });
  });

  it('refuses a switch from a target the record does not hold, carrying the current record', async () => {
    const z = zone();
    const records = new Route53ApiRecords({ hostedZoneId: 'Z1', api: z.api });
    await records.set({ name: NAME, target: SOURCE });
    const error = await records
      .set({ name: NAME, target: { type: 'AAAA', value: '2001:db8::1' }, expected: DESTINATION })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiRecordConflictError);
    expect((error as ApiRecordConflictError).current).toMatchObject(SOURCE);
  });

  it('loses a race to a concurrent writer as a conflict, never overwriting its change', async () => {
    let raced = false;
    const z = zone({
      before: (sets) => {
        if (raced) return;
        raced = true;
        // Another writer moves the record between our read and our change.
        sets.set(`${NAME}.|A`, { Name: `${NAME}.`, Type: 'A', TTL: 60, ResourceRecords: [{ Value: '127.0.0.9' }] });
      },
    });
    const records = new Route53ApiRecords({ hostedZoneId: 'Z1', api: z.api });
    z.sets.set(`${NAME}.|A`, { Name: `${NAME}.`, Type: 'A', TTL: 60, ResourceRecords: [{ Value: '127.0.0.2' }] });
    const error = await records.set({ name: NAME, target: DESTINATION, expected: SOURCE }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiRecordConflictError);
    expect((await records.get(NAME))?.value).toBe('127.0.0.9');
  });

  it('deletes on condition; a record already gone is false', async () => {
    const z = zone();
    const records = new Route53ApiRecords({ hostedZoneId: 'Z1', api: z.api });
    await records.set({ name: NAME, target: SOURCE });
    await expect(records.delete({ name: NAME, expected: DESTINATION })).rejects.toBeInstanceOf(ApiRecordConflictError);
    expect(await records.delete({ name: NAME, expected: SOURCE })).toBe(true);
    expect(await records.delete({ name: NAME })).toBe(false);
  });

  it('lists the API records of the zone, leaving other records out', async () => {
    const z = zone();
    const records = new Route53ApiRecords({ hostedZoneId: 'Z1', api: z.api });
    await records.set({ name: NAME, target: SOURCE });
    await records.set({ name: 'api.other.dev.shoots.example', target: { type: 'AAAA', value: '2001:db8::1' } });
    z.sets.set('owner.api1.dev.shoots.example.|TXT', {
      Name: 'owner.api1.dev.shoots.example.',
      Type: 'TXT',
      TTL: 5,
      ResourceRecords: [{ Value: '"x"' }],
    });
    expect((await records.list()).map((r) => `${r.name} ${r.type}`).sort()).toEqual([
      `${NAME} A`,
      'api.other.dev.shoots.example AAAA',
    ]);
  });

  it.each(['Throttling', 'PriorRequestNotComplete', 'NoSuchHostedZone', 'AccessDenied'])(
    'turns %s into ApiRecordsUnavailable',
    async (name) => {
      const records = new Route53ApiRecords({ hostedZoneId: 'Z1', api: zone({ fail: name }).api });
      await expect(records.get(NAME)).rejects.toBeInstanceOf(ApiRecordsUnavailableError);
      await expect(records.set({ name: NAME, target: SOURCE })).rejects.toMatchObject({
        code: 'ApiRecordsUnavailable',
      });
    },
  );
});
