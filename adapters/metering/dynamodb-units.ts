/**
 * DynamoDB's on-demand capacity units of a call, from the sizes of the items it read or wrote, as AWS bills
 * them (Developer Guide, "Read/write capacity units" and "Item sizes"): a read unit per 4 KB (a Query sums
 * its items first, a GetItem or a BatchGetItem rounds each), half of it eventually consistent; a write unit
 * per 1 KB of each item, twice in a transaction, once more for every global secondary index that holds the
 * item (ours project every attribute). A read that finds nothing still costs one unit.
 *
 * Where the size of a written item is not in the call (an UpdateItem without `ReturnValues`, a DeleteItem),
 * it is its key and the values the call sets: a lower bound. Every figure here is an estimate for a cost
 * model, not a bill.
 */

/**
 * An item: attribute names to values, either as DynamoDB's wire format carries them (`{ S: '...' }`,
 * `{ M: {...} }`) or as the document client's plain JavaScript values (`native`).
 */
export type AttributeMap = Record<string, unknown>;

/** An index as the meter needs it: an item with both attributes is in it. */
export interface IndexKeys {
  readonly partitionKey: string;
  readonly sortKey: string;
}

const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');

/** The size of a plain JavaScript value as the document client stores it. */
function nativeSize(value: unknown): number {
  if (typeof value === 'string') return utf8(value);
  if (typeof value === 'number' || typeof value === 'bigint')
    return Math.ceil(String(value).replace(/[^0-9]/g, '').length / 2) + 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...(value as Set<unknown>)].reduce((n: number, v) => n + nativeSize(v), 0);
  if (Array.isArray(value)) return 3 + value.reduce((n: number, e: unknown) => n + 1 + nativeSize(e), 0);
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return 3 + entries.reduce((n, [k, v]) => n + utf8(k) + 1 + nativeSize(v), 0);
  }
  return 1;
}

/** The size of one attribute value, by DynamoDB's rules (numbers: about one byte per two digits, plus one). */
function valueSize(value: unknown, native: boolean): number {
  if (native) return nativeSize(value);
  if (value === null || typeof value !== 'object') return 1;
  const v = value as Record<string, unknown>;
  if (typeof v.S === 'string') return utf8(v.S);
  if (typeof v.N === 'string') return Math.ceil(v.N.replace(/[^0-9]/g, '').length / 2) + 1;
  if (v.B instanceof Uint8Array) return v.B.byteLength;
  if (typeof v.B === 'string') return Buffer.from(v.B, 'base64').byteLength;
  if ('BOOL' in v || 'NULL' in v) return 1;
  if (Array.isArray(v.SS)) return v.SS.reduce((n: number, s: string) => n + utf8(s), 0);
  if (Array.isArray(v.NS)) return v.NS.reduce((n: number, s: string) => n + valueSize({ N: s }, false), 0);
  if (Array.isArray(v.L)) return 3 + v.L.reduce((n: number, e: unknown) => n + 1 + valueSize(e, false), 0);
  if (v.M && typeof v.M === 'object') return 3 + itemSize(v.M as AttributeMap) + Object.keys(v.M).length;
  return 1;
}

/** An item's size in bytes: every attribute's name and value (`native`: plain JavaScript values). */
export function itemSize(item: AttributeMap | undefined, native = false): number {
  if (!item) return 0;
  let n = 0;
  for (const [name, value] of Object.entries(item)) if (value !== undefined) n += utf8(name) + valueSize(value, native);
  return n;
}

function readFactor(input: Record<string, unknown>): number {
  return input.ConsistentRead === true ? 1 : 0.5;
}

const readUnitsOf = (bytes: number, factor: number) => Math.max(1, Math.ceil(bytes / 4096)) * factor;
const writeUnitsOf = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/** Items read and their read units. */
export function dynamoReadUnits(
  operation: string,
  input: Record<string, unknown>,
  output: Record<string, unknown>,
  native = false,
): { items: number; units: number } {
  const sizeOf = (item: AttributeMap | undefined) => itemSize(item, native);
  switch (operation) {
    case 'GetItem': {
      const item = output.Item as AttributeMap | undefined;
      return { items: item ? 1 : 0, units: readUnitsOf(sizeOf(item), readFactor(input)) };
    }
    case 'Query':
    case 'Scan': {
      const items = (output.Items as AttributeMap[] | undefined) ?? [];
      const bytes = items.reduce((n, i) => n + sizeOf(i), 0);
      return { items: items.length, units: readUnitsOf(bytes, readFactor(input)) };
    }
    case 'BatchGetItem': {
      let items = 0;
      let units = 0;
      const requested = (input.RequestItems ?? {}) as Record<string, { Keys?: unknown[]; ConsistentRead?: boolean }>;
      const responses = (output.Responses ?? {}) as Record<string, AttributeMap[]>;
      const unprocessed = (output.UnprocessedKeys ?? {}) as Record<string, { Keys?: unknown[] }>;
      for (const [table, request] of Object.entries(requested)) {
        const factor = request.ConsistentRead === true ? 1 : 0.5;
        const found = responses[table] ?? [];
        items += found.length;
        for (const item of found) units += readUnitsOf(sizeOf(item), factor);
        const missing = (request.Keys?.length ?? 0) - found.length - (unprocessed[table]?.Keys?.length ?? 0);
        units += Math.max(0, missing) * factor;
      }
      return { items, units };
    }
    case 'TransactGetItems': {
      const responses = (output.Responses as { Item?: AttributeMap }[] | undefined) ?? [];
      return {
        items: responses.filter((r) => r.Item).length,
        units: responses.reduce((n, r) => n + 2 * readUnitsOf(sizeOf(r.Item), 1), 0),
      };
    }
    default:
      return { items: 0, units: 0 };
  }
}

/** What one write (alone, in a batch or in a transaction) costs: its item's units, once more per index holding it. */
function singleWrite(
  kind: string,
  request: Record<string, unknown>,
  indexes: readonly IndexKeys[],
  native: boolean,
): number {
  if (kind === 'ConditionCheck') return 1;
  const item = (request.Item ?? request.Key) as AttributeMap | undefined;
  const values = (request.ExpressionAttributeValues ?? {}) as AttributeMap;
  const bytes = itemSize(item, native) + (kind === 'Update' ? itemSize(values, native) : 0);
  const inIndexes =
    kind === 'Put'
      ? indexes.filter((i) => item && i.partitionKey in item && i.sortKey in item).length
      : // An update or delete of an item we cannot see: the shoot items (the only ones indexed) are all in the kind index.
        0;
  return writeUnitsOf(bytes) * (1 + inIndexes);
}

/** Items written and their write units. */
export function dynamoWriteUnits(
  operation: string,
  input: Record<string, unknown>,
  output: Record<string, unknown>,
  indexes: readonly IndexKeys[] = [],
  native = false,
): { items: number; units: number } {
  switch (operation) {
    case 'PutItem':
      return { items: 1, units: singleWrite('Put', input, indexes, native) };
    case 'UpdateItem': {
      const after = output.Attributes as AttributeMap | undefined;
      if (after && input.ReturnValues === 'ALL_NEW')
        return { items: 1, units: singleWrite('Put', { Item: after }, indexes, native) };
      return { items: 1, units: singleWrite('Update', input, indexes, native) };
    }
    case 'DeleteItem':
      return { items: 1, units: singleWrite('Delete', input, indexes, native) };
    case 'BatchWriteItem': {
      let items = 0;
      let units = 0;
      for (const requests of Object.values((input.RequestItems ?? {}) as Record<string, Record<string, unknown>[]>))
        for (const r of requests) {
          items += 1;
          units += r.PutRequest
            ? singleWrite('Put', r.PutRequest as Record<string, unknown>, indexes, native)
            : singleWrite('Delete', r.DeleteRequest as Record<string, unknown>, indexes, native);
        }
      return { items, units };
    }
    case 'TransactWriteItems': {
      let items = 0;
      let units = 0;
      for (const entry of (input.TransactItems ?? []) as Record<string, Record<string, unknown>>[]) {
        const [kind, request] = Object.entries(entry)[0] ?? [];
        if (!kind || !request) continue;
        if (kind !== 'ConditionCheck') items += 1;
        units += 2 * singleWrite(kind, request, indexes, native);
      }
      return { items, units };
    }
    default:
      return { items: 0, units: 0 };
  }
}
