import { describe, expect, it } from 'vitest';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { TABLE_INDEXES } from '../../../adapters/dynamodb/keys.js';
import { addCallReports, CallMeter, callsOf, emptyCallReport } from '../../../adapters/metering/call-meter.js';
import { dynamoReadUnits, dynamoWriteUnits, itemSize } from '../../../adapters/metering/dynamodb-units.js';
import { DynamoDbFake } from '../../harness/dynamodb-fake.js';

const INDEXES = Object.values(TABLE_INDEXES);

describe('DynamoDB capacity units from item sizes', () => {
  it.each<[string, Record<string, unknown>, number]>([
    ['a string: its bytes and the name', { name: { S: 'abc' } }, 4 + 3],
    ['a number: about a byte per two digits, plus one', { n: { N: '12345' } }, 1 + 4],
    ['a boolean', { ok: { BOOL: true } }, 2 + 1],
    ['a map: 3 bytes, its members, a byte each', { m: { M: { a: { S: 'xy' } } } }, 1 + 3 + (1 + 2) + 1],
    ['a list: 3 bytes, its elements, a byte each', { l: { L: [{ S: 'x' }, { S: 'yz' }] } }, 1 + 3 + (1 + 1) + (1 + 2)],
  ])('%s', (_name, item, bytes) => {
    expect(itemSize(item)).toBe(bytes);
  });

  it.each<[string, string, Record<string, unknown>, Record<string, unknown>, { items: number; units: number }]>([
    [
      'a consistent get of a 5 KB item',
      'GetItem',
      { ConsistentRead: true },
      { Item: { d: { S: 'x'.repeat(5000) } } },
      { items: 1, units: 2 },
    ],
    ['an eventually consistent get that finds nothing', 'GetItem', {}, {}, { items: 0, units: 0.5 }],
    [
      'a query sums its items before rounding',
      'Query',
      {},
      { Items: Array.from({ length: 10 }, () => ({ d: { S: 'x'.repeat(1000) } })) },
      { items: 10, units: 1.5 },
    ],
    [
      'a batch get rounds each item and charges keys it did not find',
      'BatchGetItem',
      { RequestItems: { t: { Keys: [{}, {}, {}], ConsistentRead: true } } },
      { Responses: { t: [{ d: { S: 'x'.repeat(100) } }, { d: { S: 'x'.repeat(4100) } }] } },
      { items: 2, units: 1 + 2 + 1 },
    ],
  ])('reads: %s', (_name, operation, input, output, expected) => {
    expect(dynamoReadUnits(operation, input, output)).toEqual(expected);
  });

  it('writes: a unit per KB, again for every index holding the item, twice in a transaction', () => {
    const shoot = {
      pk: { S: 'SHOOT#p#n' },
      sk: { S: 'SHOOT' },
      kind: { S: 'Shoot' },
      id: { S: 'p/n' },
      project: { S: 'p' },
      name: { S: 'n' },
      seedName: { S: 's' },
      doc: { S: 'x'.repeat(1500) },
    };
    expect(dynamoWriteUnits('PutItem', { Item: shoot }, {}, INDEXES)).toEqual({ items: 1, units: 2 * 4 });
    const { seedName: _unplaced, ...pending } = shoot;
    expect(dynamoWriteUnits('PutItem', { Item: pending }, {}, INDEXES)).toEqual({ items: 1, units: 2 * 3 });
    expect(
      dynamoWriteUnits(
        'TransactWriteItems',
        { TransactItems: [{ Put: { Item: shoot } }, { ConditionCheck: { Key: {} } }] },
        {},
        INDEXES,
      ),
    ).toEqual({ items: 1, units: 2 * 8 + 2 });
  });
});

describe('CallMeter', () => {
  it("counts a client's calls by operation, through the document client, until taken", async () => {
    // Prepare
    const fake = new DynamoDbFake(INDEXES);
    const meter = new CallMeter({ dynamodbIndexes: INDEXES });
    const doc = DynamoDBDocumentClient.from(meter.attach(fake.client(), 'DynamoDB'));

    // Act
    await doc.send(new PutCommand({ TableName: 't', Item: { pk: 'A', sk: 'A', v: 'x'.repeat(1500) } }));
    await doc.send(new GetCommand({ TableName: 't', Key: { pk: 'A', sk: 'A' }, ConsistentRead: true }));
    await doc.send(
      new QueryCommand({
        TableName: 't',
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'A' },
      }),
    );
    await doc.send(
      new TransactWriteCommand({ TransactItems: [{ Put: { TableName: 't', Item: { pk: 'B', sk: 'B' } } }] }),
    );
    const report = meter.take();

    // Assess
    expect(report.calls).toEqual({
      'DynamoDB.PutItem': 1,
      'DynamoDB.GetItem': 1,
      'DynamoDB.Query': 1,
      'DynamoDB.TransactWriteItems': 1,
    });
    expect(report.dynamodb).toEqual({ itemsRead: 2, itemsWritten: 2, readUnits: 1 + 0.5, writeUnits: 2 + 2 });
    expect(meter.take()).toEqual(emptyCallReport());
  });

  it('adds reports and sums a service', () => {
    const a = {
      calls: { 'DynamoDB.Query': 2, 'Route53.ListResourceRecordSets': 1 },
      dynamodb: { itemsRead: 3, itemsWritten: 0, readUnits: 1, writeUnits: 0 },
    };
    const b = {
      calls: { 'DynamoDB.Query': 1, 'DynamoDB.GetItem': 4 },
      dynamodb: { itemsRead: 4, itemsWritten: 1, readUnits: 2, writeUnits: 5 },
    };
    const sum = addCallReports(addCallReports(emptyCallReport(), a), b);
    expect(callsOf(sum, 'DynamoDB')).toBe(7);
    expect(callsOf(sum, 'Route53')).toBe(1);
    expect(sum.dynamodb).toEqual({ itemsRead: 7, itemsWritten: 1, readUnits: 3, writeUnits: 5 });
  });
});
