import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { Readable } from 'node:stream';
import { DYNAMODB_LIMITS, itemSize } from '../../adapters/dynamodb/item-size.js';

type Item = Record<string, Record<string, unknown>>;

/** One DynamoDB call as the table saw it: the operation (`Query`, `GetItem`, ...) and its request. */
export interface RecordedCall {
  operation: string;
  input: Record<string, unknown>;
}

/**
 * A DynamoDB table in memory behind a real `DynamoDBClient` (its HTTP handler answers instead of the
 * network), recording every call: for adapter unit tests that look at which operations a code path makes.
 * It keeps items and answers reads by key, by partition and by index partition, in sort-key order with
 * `Limit` and `ExclusiveStartKey`; writes apply their items and the `SET`/`REMOVE` updates the adapters
 * use. Of the conditions only two forms are evaluated, `attribute_not_exists(pk)` and `<attribute> = :value`
 * (others pass): a fake for what is asked, not for what DynamoDB decides. It refuses, as DynamoDB does, an
 * item over 400 KB and a transaction over 4 MB or 100 items: writers must size what they write.
 */
export class DynamoDbFake {
  readonly calls: RecordedCall[] = [];
  /** Runs before each call is answered: a test's way to let another writer in between two reads. */
  beforeAnswer: ((operation: string, input: Record<string, unknown>) => void) | undefined;
  private items = new Map<string, Item>();

  constructor(private readonly indexes: readonly { name: string; partitionKey: string; sortKey: string }[]) {}

  client(): DynamoDBClient {
    return new DynamoDBClient({
      region: 'eu-west-1',
      credentials: { accessKeyId: 'fake', secretAccessKey: 'fake' },
      endpoint: 'http://dynamodb.fake',
      maxAttempts: 1,
      requestHandler: {
        handle: async (request: FakeRequest) => ({ response: this.answer(request) }),
      },
    });
  }

  private answer(request: FakeRequest): FakeResponse {
    const operation = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    const input = JSON.parse(String(request.body ?? '{}')) as Record<string, unknown>;
    this.calls.push({ operation, input });
    this.beforeAnswer?.(operation, input);
    try {
      return json(200, this.run(operation, input));
    } catch (error) {
      if (error instanceof FakeFailure)
        return json(400, {
          __type: `com.amazonaws.dynamodb.v20120810#${error.type}`,
          message: error.message,
          ...error.fields,
        });
      throw error;
    }
  }

  /** Every item as stored now, for `restore`. */
  snapshot(): Map<string, Item> {
    return structuredClone(this.items);
  }

  /** Puts the table back as a `snapshot` found it (or as a mix of snapshots a test made). */
  restore(items: Map<string, Item>): void {
    this.items = structuredClone(items);
  }

  private run(operation: string, input: Record<string, unknown>): unknown {
    switch (operation) {
      case 'GetItem': {
        const item = this.items.get(keyOf(input.Key as Item));
        return item ? { Item: item } : {};
      }
      case 'BatchGetItem': {
        const responses: Record<string, Item[]> = {};
        for (const [table, request] of Object.entries(input.RequestItems as Record<string, { Keys: Item[] }>))
          responses[table] = request.Keys.flatMap((k) => {
            const item = this.items.get(keyOf(k));
            return item ? [item] : [];
          });
        return { Responses: responses, UnprocessedKeys: {} };
      }
      case 'Query':
      case 'Scan':
        return this.query(operation, input);
      case 'PutItem':
        this.put(input);
        return {};
      case 'UpdateItem':
        return { Attributes: this.update(input) };
      case 'DeleteItem':
        this.items.delete(keyOf(input.Key as Item));
        return {};
      case 'TransactWriteItems': {
        const entries = input.TransactItems as Record<string, Record<string, unknown>>[];
        const written = entries.flatMap((entry) => (entry.Put ? [sizeOf(entry.Put.Item as Item)] : []));
        const total = written.reduce((sum, size) => sum + size, 0);
        if (entries.length > DYNAMODB_LIMITS.transactionItems || total > DYNAMODB_LIMITS.transactionBytes)
          throw new FakeFailure('ValidationException', `Transaction of ${entries.length} items, ${total} bytes`);
        for (const size of written) tooLarge(size);
        const reasons = entries.map((entry) => {
          const request = Object.values(entry)[0]!;
          const key = (request.Item ?? request.Key) as Item;
          const stored = this.items.get(keyOf(key));
          if (this.holds(request, stored)) return { Code: 'None' };
          const old = request.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && stored ? { Item: stored } : {};
          return { Code: 'ConditionalCheckFailed', ...old };
        });
        if (reasons.some((r) => r.Code !== 'None'))
          throw new FakeFailure('TransactionCanceledException', 'Transaction cancelled', {
            CancellationReasons: reasons,
          });
        for (const entry of entries) {
          if (entry.Put) this.items.set(keyOf(entry.Put.Item as Item), structuredClone(entry.Put.Item as Item));
          if (entry.Update) this.update(entry.Update);
          if (entry.Delete) this.items.delete(keyOf(entry.Delete.Key as Item));
        }
        return {};
      }
      default:
        throw new Error(`DynamoDbFake: ${operation} is not supported`);
    }
  }

  private put(input: Record<string, unknown>): void {
    const item = input.Item as Item;
    tooLarge(sizeOf(item));
    if (!this.holds(input, this.items.get(keyOf(item))))
      throw new FakeFailure('ConditionalCheckFailedException', 'The conditional request failed');
    this.items.set(keyOf(item), structuredClone(item));
  }

  /** Whether a request's condition holds on the stored item (see the class comment for what is evaluated). */
  private holds(request: Record<string, unknown>, stored: Item | undefined): boolean {
    const condition = String(request.ConditionExpression ?? '');
    if (condition === 'attribute_not_exists(pk)') return stored === undefined;
    const equality = /^(\w+) = (:\w+)$/.exec(condition);
    if (!equality) return true;
    const wanted = ((request.ExpressionAttributeValues ?? {}) as Item)[equality[2]!];
    return stored !== undefined && JSON.stringify(stored[equality[1]!]) === JSON.stringify(wanted);
  }

  private update(input: Record<string, unknown>): Item {
    const key = input.Key as Item;
    const item: Item = structuredClone(this.items.get(keyOf(key)) ?? key);
    const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
    const values = (input.ExpressionAttributeValues ?? {}) as Item;
    const name = (n: string) => names[n] ?? n;
    const [setPart = '', removePart = ''] = String(input.UpdateExpression).replace(/^SET /, '').split(' REMOVE ');
    for (const assignment of setPart
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean)) {
      const [target, expression] = assignment.split('=').map((s) => s.trim()) as [string, string];
      const sum = /^(?:if_not_exists\((\S+), (:\w+)\)|(\S+)) ([+-]) (:\w+)$/.exec(expression);
      let value: Record<string, unknown>;
      if (sum) {
        const base = sum[3] ? item[name(sum[3])] : (item[name(sum[1]!)] ?? values[sum[2]!]);
        const delta = Number(values[sum[5]!]?.N ?? 0) * (sum[4] === '-' ? -1 : 1);
        value = { N: String(Number(base?.N ?? 0) + delta) };
      } else value = values[expression]!;
      const path = target.split('.').map(name);
      let into: Item = item;
      for (const part of path.slice(0, -1)) into = ((into[part] ??= { M: {} }).M ?? {}) as Item;
      into[path.at(-1)!] = value;
    }
    for (const removed of removePart
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean))
      delete item[name(removed)];
    this.items.set(keyOf(key), item);
    return item;
  }

  private query(operation: string, input: Record<string, unknown>): unknown {
    const index = this.indexes.find((i) => i.name === input.IndexName);
    const [partitionKey, sortKey] = index ? [index.partitionKey, index.sortKey] : ['pk', 'sk'];
    let found = [...this.items.values()].filter((i) => i[partitionKey] !== undefined && i[sortKey] !== undefined);
    if (operation === 'Query') {
      const values = (input.ExpressionAttributeValues ?? {}) as Item;
      const wanted = Object.values(values)[0]?.S;
      found = found.filter((i) => i[partitionKey]?.S === wanted);
    }
    found.sort((a, b) => (String(a[sortKey]?.S) < String(b[sortKey]?.S) ? -1 : 1));
    const start = input.ExclusiveStartKey as Item | undefined;
    if (start) found = found.filter((i) => String(i[sortKey]?.S) > String(start[sortKey]?.S));
    const limit = Number(input.Limit ?? Infinity);
    const page = found.slice(0, limit);
    const last = found.length > page.length ? page.at(-1) : undefined;
    return {
      Items: page as Record<string, unknown>[],
      Count: page.length,
      ...(last
        ? {
            LastEvaluatedKey: {
              pk: last.pk,
              sk: last.sk,
              [partitionKey]: last[partitionKey],
              [sortKey]: last[sortKey],
            },
          }
        : {}),
    };
  }
}

class FakeFailure extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly fields: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

function sizeOf(item: Item): number {
  return itemSize(unmarshall(item as unknown as Parameters<typeof unmarshall>[0]));
}

function tooLarge(size: number): void {
  if (size > DYNAMODB_LIMITS.itemBytes)
    throw new FakeFailure('ValidationException', `Item size of ${size} has exceeded the maximum allowed size`);
}

function keyOf(item: Item): string {
  return `${String(item.pk?.S)}|${String(item.sk?.S)}`;
}

/** The parts of the SDK's HTTP request and response the fake reads and writes. */
interface FakeRequest {
  headers: Record<string, string>;
  body?: unknown;
}
interface FakeResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: Readable;
}

function json(statusCode: number, body: unknown): FakeResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/x-amz-json-1.0' },
    body: Readable.from([Buffer.from(JSON.stringify(body))]),
  };
}
