import type { Change, ResourceRecordSet } from '@aws-sdk/client-route-53';
import { Route53Client } from '@aws-sdk/client-route-53';
import { ValidationError } from '../../core/errors.js';
import {
  DEFAULT_OWNER_RECORD_TTL_SECONDS,
  MAX_OWNER_RECORDS_PAGE_SIZE,
  OwnerRecordConflictError,
  OwnerRecordsUnavailableError,
  type DeleteOwnerRecordInput,
  type OwnerRecord,
  type OwnerRecordPage,
  type OwnerRecords,
  type SetOwnerRecordInput,
} from '../../core/ownership/index.js';
import {
  applyChangeBatch,
  callRoute53,
  normalizeRecordName as normalize,
  route53Api,
  ROUTE53_RETRY,
  type Route53Api,
} from './route53-api.js';

// Kept importable from here: the agents, the sidecar and the tests build owner records with it.
export { route53Api, type Route53Api } from './route53-api.js';

export interface Route53OwnerRecordsOptions {
  readonly hostedZoneId: string;
  readonly api?: Route53Api;
  /** Conditional changes that lose a race with a concurrent change of the same record are re-read this often. Default 3. */
  readonly conflictRetries?: number;
}

/** All TXT values of one record set, each value's character strings joined, and its TTL. */
export interface TxtRecordSet {
  readonly name: string;
  readonly values: readonly string[];
  readonly ttl: number;
}

/**
 * Owner records as Route 53 TXT record sets. Conditional changes are one atomic change batch: DELETE of
 * the exact current record set (Route 53 rejects the whole batch when it no longer matches) plus CREATE
 * of the new one. A rejected batch is read again and becomes `OwnerRecordConflictError` with the
 * current record, unless the record already holds the wanted value (a retried step). Throttling,
 * network and service failures are `OwnerRecordsUnavailableError`: try again later.
 */
export class Route53OwnerRecords implements OwnerRecords {
  private readonly zone: string;
  private readonly api: Route53Api;
  private readonly conflictRetries: number;

  constructor(options: Route53OwnerRecordsOptions) {
    this.zone = options.hostedZoneId.replace(/^\/hostedzone\//, '');
    this.api = options.api ?? route53Api(new Route53Client({ ...ROUTE53_RETRY }));
    this.conflictRetries = options.conflictRetries ?? 3;
  }

  async get(name: string): Promise<OwnerRecord | undefined> {
    const set = await this.getTxt(name);
    if (set === undefined) return undefined;
    // Only the orchestrator writes, with one value; more than one is reported as the record it cannot be.
    return { name: set.name, value: set.values.length === 1 ? set.values[0]! : set.values.join(' '), ttl: set.ttl };
  }

  /** The TXT record set as Route 53 holds it (every value), or undefined: what the API-mode owner lookup needs. */
  async getTxt(name: string): Promise<TxtRecordSet | undefined> {
    const wanted = normalize(name);
    const res = await this.call('read', wanted, () =>
      this.api.listResourceRecordSets({
        HostedZoneId: this.zone,
        StartRecordName: wanted,
        StartRecordType: 'TXT',
        MaxItems: 1,
      }),
    );
    const set = res.ResourceRecordSets?.[0];
    if (set === undefined || set.Type !== 'TXT' || normalize(set.Name ?? '') !== wanted) return undefined;
    return toTxt(set);
  }

  async set(input: SetOwnerRecordInput): Promise<OwnerRecord> {
    const name = normalize(input.name);
    if (input.value.length === 0) throw new ValidationError('owner record value must not be empty', { field: 'value' });
    const wanted: OwnerRecord = { name, value: input.value, ttl: input.ttl ?? DEFAULT_OWNER_RECORD_TTL_SECONDS };
    for (let attempt = 0; ; attempt++) {
      const current = await this.getTxt(name);
      const currentValue = current?.values.length === 1 ? current.values[0] : undefined;
      if (current !== undefined && currentValue === wanted.value && current.ttl === wanted.ttl) return wanted;
      if (currentValue !== wanted.value) this.checkCondition(name, input.expected, current);
      // Replace exactly what was read: if it changed meanwhile, Route 53 rejects the batch and we read again.
      const changes: Change[] = [];
      if (current !== undefined)
        changes.push({ Action: 'DELETE', ResourceRecordSet: recordSet(name, current.values, current.ttl) });
      changes.push({ Action: 'CREATE', ResourceRecordSet: recordSet(name, [wanted.value], wanted.ttl) });
      if (await this.change(name, changes, `set owner ${wanted.value}`)) return wanted;
      if (attempt >= this.conflictRetries) {
        const now = await this.get(name);
        throw new OwnerRecordConflictError(
          `owner record ${name} kept changing while it was being set to ${wanted.value}`,
          { current: now },
        );
      }
    }
  }

  async delete(input: DeleteOwnerRecordInput): Promise<boolean> {
    const name = normalize(input.name);
    for (let attempt = 0; ; attempt++) {
      const current = await this.getTxt(name);
      if (current === undefined) return false;
      if (input.expected !== undefined && !(current.values.length === 1 && current.values[0] === input.expected)) {
        throw new OwnerRecordConflictError(
          `owner record ${name} names ${current.values.join(', ')}, expected ${input.expected}`,
          { current: asRecord(current) },
        );
      }
      if (
        await this.change(
          name,
          [{ Action: 'DELETE', ResourceRecordSet: recordSet(name, current.values, current.ttl) }],
          'delete owner',
        )
      )
        return true;
      if (attempt >= this.conflictRetries) {
        throw new OwnerRecordConflictError(`owner record ${name} kept changing while it was being deleted`, {
          current: await this.get(name),
        });
      }
    }
  }

  /**
   * One ListResourceRecordSets call of up to `pageSize` (default and maximum 300) record sets; the
   * owner TXT records among them. The cursor is Route 53's next record name and type, encoded.
   */
  async list(options: { cursor?: string; pageSize?: number } = {}): Promise<OwnerRecordPage> {
    const pageSize = options.pageSize ?? MAX_OWNER_RECORDS_PAGE_SIZE;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_OWNER_RECORDS_PAGE_SIZE) {
      throw new ValidationError(`pageSize must be 1-${MAX_OWNER_RECORDS_PAGE_SIZE}, got ${pageSize}`, {
        field: 'pageSize',
      });
    }
    const start = decodeCursor(options.cursor);
    const res = await this.call('list', this.zone, () =>
      this.api.listResourceRecordSets({
        HostedZoneId: this.zone,
        MaxItems: pageSize,
        ...(start
          ? {
              StartRecordName: start.name,
              StartRecordType: start.type as 'TXT',
              ...(start.id ? { StartRecordIdentifier: start.id } : {}),
            }
          : {}),
      }),
    );
    const records = (res.ResourceRecordSets ?? [])
      .filter((s) => s.Type === 'TXT' && normalize(s.Name ?? '').startsWith('owner.'))
      .map((s) => asRecord(toTxt(s)));
    const next =
      res.IsTruncated && res.NextRecordName
        ? encodeCursor({
            name: res.NextRecordName,
            type: res.NextRecordType ?? 'TXT',
            ...(res.NextRecordIdentifier ? { id: res.NextRecordIdentifier } : {}),
          })
        : undefined;
    return { records, next };
  }

  private checkCondition(name: string, expected: string | null | undefined, current: TxtRecordSet | undefined): void {
    if (expected === undefined) return;
    if (expected === null && current !== undefined) {
      throw new OwnerRecordConflictError(`owner record ${name} already names ${current.values.join(', ')}`, {
        current: asRecord(current),
      });
    }
    if (typeof expected === 'string' && !(current?.values.length === 1 && current.values[0] === expected)) {
      throw new OwnerRecordConflictError(
        `owner record ${name} ${current === undefined ? 'does not exist' : `names ${current.values.join(', ')}`}, expected ${expected}`,
        { current: current === undefined ? undefined : asRecord(current) },
      );
    }
  }

  private change(name: string, changes: Change[], comment: string): Promise<boolean> {
    return applyChangeBatch({
      api: this.api,
      zone: this.zone,
      name,
      changes,
      comment,
      unavailable: (message, cause) => new OwnerRecordsUnavailableError(message, { cause }),
    });
  }

  private call<T>(operation: string, what: string, fn: () => Promise<T>): Promise<T> {
    return callRoute53(
      {
        operation,
        what,
        zone: this.zone,
        unavailable: (message, cause) => new OwnerRecordsUnavailableError(message, { cause }),
      },
      fn,
    );
  }
}

/** TXT values travel quoted, with `"` and `\` escaped, and in character strings of at most 255 bytes. */
export function quoteTxt(value: string): string {
  const chunks: string[] = [];
  let chunk = '';
  for (const c of value) {
    const token = c === '"' || c === '\\' ? `\\${c}` : c;
    // Never split an escape sequence across character strings.
    if (chunk.length + token.length > 255) {
      chunks.push(chunk);
      chunk = '';
    }
    chunk += token;
  }
  chunks.push(chunk);
  return chunks.map((c) => `"${c}"`).join(' ');
}

/** Joins the quoted character strings of one TXT value and removes the escapes. */
export function unquoteTxt(raw: string): string {
  const strings = [...raw.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] ?? '');
  const joined = strings.length === 0 ? raw : strings.join('');
  return joined.replace(/\\(.)/g, '$1');
}

function recordSet(name: string, values: readonly string[], ttl: number): ResourceRecordSet {
  return { Name: name, Type: 'TXT', TTL: ttl, ResourceRecords: values.map((v) => ({ Value: quoteTxt(v) })) };
}

function toTxt(set: ResourceRecordSet): TxtRecordSet {
  return {
    name: normalize(set.Name ?? ''),
    values: (set.ResourceRecords ?? []).map((r) => unquoteTxt(r.Value ?? '')),
    ttl: set.TTL ?? 0,
  };
}

function asRecord(set: TxtRecordSet): OwnerRecord {
  return { name: set.name, value: set.values.length === 1 ? set.values[0]! : set.values.join(' '), ttl: set.ttl };
}

interface Cursor {
  name: string;
  type: string;
  id?: string;
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(cursor: string | undefined): Cursor | undefined {
  if (cursor === undefined) return undefined;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<Cursor>;
    if (
      typeof value.name === 'string' &&
      typeof value.type === 'string' &&
      (value.id === undefined || typeof value.id === 'string')
    )
      return value as Cursor;
  } catch {
    // Falls through to the error below: the cause is only ever "not our token".
  }
  throw new ValidationError('cursor: not a cursor this store returned', { field: 'cursor' });
}
