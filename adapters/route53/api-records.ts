import { Route53Client, type Change, type ResourceRecordSet } from '@aws-sdk/client-route-53';
import {
  ApiRecordConflictError,
  ApiRecordsUnavailableError,
  checkCondition,
  DEFAULT_API_RECORD_TTL_SECONDS,
  describeTarget,
  sameTarget,
  type ApiRecord,
  type ApiRecords,
  type ApiRecordType,
  type DeleteApiRecordInput,
  type SetApiRecordInput,
} from '../../core/dns/index.js';
import {
  applyChangeBatch,
  callRoute53,
  normalizeRecordName,
  route53Api,
  ROUTE53_RETRY,
  type Route53Api,
} from './route53-api.js';

export interface Route53ApiRecordsOptions {
  /** The zone of the external domain (the local landscape has a zone of its own). */
  readonly hostedZoneId: string;
  readonly api?: Route53Api;
  /** Conditional changes that lose a race with a concurrent change of the same record are re-read this often. Default 3. */
  readonly conflictRetries?: number;
}

const TYPES: readonly ApiRecordType[] = ['A', 'AAAA', 'CNAME'];

/**
 * API records as Route 53 A, AAAA or CNAME record sets, one per name. A change is one atomic change
 * batch: DELETE of the exact record set that was read (Route 53 rejects the whole batch when it no longer
 * matches) plus CREATE of the new one, so a switch from A to CNAME is as atomic as one from A to A. A
 * rejected batch is read again and becomes `ApiRecordConflictError` with the current record, unless the
 * record already holds the wanted target (a retried step). Throttling, network and service failures are
 * `ApiRecordsUnavailableError`: try again later.
 */
export class Route53ApiRecords implements ApiRecords {
  private readonly zone: string;
  private readonly api: Route53Api;
  private readonly conflictRetries: number;

  constructor(options: Route53ApiRecordsOptions) {
    this.zone = options.hostedZoneId.replace(/^\/hostedzone\//, '');
    this.api = options.api ?? route53Api(new Route53Client({ ...ROUTE53_RETRY }));
    this.conflictRetries = options.conflictRetries ?? 3;
  }

  async get(name: string): Promise<ApiRecord | undefined> {
    const wanted = normalizeRecordName(name);
    // The name's record sets sort together: the first one of any type at or after the name tells.
    const res = await this.call('read', wanted, () =>
      this.api.listResourceRecordSets({ HostedZoneId: this.zone, StartRecordName: wanted, MaxItems: 3 }),
    );
    const set = (res.ResourceRecordSets ?? []).find(
      (s) => normalizeRecordName(s.Name ?? '') === wanted && TYPES.includes(s.Type as ApiRecordType),
    );
    return set === undefined ? undefined : toRecord(set);
  }

  async set(input: SetApiRecordInput): Promise<ApiRecord> {
    const name = normalizeRecordName(input.name);
    const wanted: ApiRecord = {
      name,
      type: input.target.type,
      value: input.target.value,
      ttl: input.ttl ?? DEFAULT_API_RECORD_TTL_SECONDS,
    };
    for (let attempt = 0; ; attempt++) {
      const current = await this.get(name);
      if (current !== undefined && sameTarget(current, wanted) && current.ttl === wanted.ttl) return wanted;
      if (!sameTarget(current, wanted)) checkCondition(name, input.expected, current);
      // Replace exactly what was read: if it changed meanwhile, Route 53 rejects the batch and we read again.
      const changes: Change[] = [];
      if (current !== undefined) changes.push({ Action: 'DELETE', ResourceRecordSet: recordSet(current) });
      changes.push({ Action: 'CREATE', ResourceRecordSet: recordSet(wanted) });
      if (await this.change(name, changes, `api record ${describeTarget(wanted)}`)) return wanted;
      if (attempt >= this.conflictRetries) {
        throw new ApiRecordConflictError(
          `API record ${name} kept changing while it was being set to ${describeTarget(wanted)}`,
          { current: await this.get(name) },
        );
      }
    }
  }

  async delete(input: DeleteApiRecordInput): Promise<boolean> {
    const name = normalizeRecordName(input.name);
    for (let attempt = 0; ; attempt++) {
      const current = await this.get(name);
      if (current === undefined) return false;
      if (input.expected !== undefined && !sameTarget(current, input.expected)) {
        throw new ApiRecordConflictError(
          `API record ${name} is ${describeTarget(current)}, expected ${describeTarget(input.expected)}`,
          { current },
        );
      }
      if (await this.change(name, [{ Action: 'DELETE', ResourceRecordSet: recordSet(current) }], 'delete api record'))
        return true;
      if (attempt >= this.conflictRetries) {
        throw new ApiRecordConflictError(`API record ${name} kept changing while it was being deleted`, {
          current: await this.get(name),
        });
      }
    }
  }

  /** Every A, AAAA and CNAME record named `api.*` in the zone, 300 record sets a call. */
  async list(): Promise<ApiRecord[]> {
    const out: ApiRecord[] = [];
    let start: { name: string; type: string } | undefined;
    for (;;) {
      const res = await this.call('list', this.zone, () =>
        this.api.listResourceRecordSets({
          HostedZoneId: this.zone,
          MaxItems: 300,
          ...(start ? { StartRecordName: start.name, StartRecordType: start.type as ApiRecordType } : {}),
        }),
      );
      for (const set of res.ResourceRecordSets ?? []) {
        if (TYPES.includes(set.Type as ApiRecordType) && normalizeRecordName(set.Name ?? '').startsWith('api.'))
          out.push(toRecord(set));
      }
      if (!res.IsTruncated || !res.NextRecordName) return out;
      start = { name: res.NextRecordName, type: res.NextRecordType ?? 'A' };
    }
  }

  private change(name: string, changes: Change[], comment: string): Promise<boolean> {
    return applyChangeBatch({
      api: this.api,
      zone: this.zone,
      name,
      changes,
      comment,
      unavailable: (message, cause) => new ApiRecordsUnavailableError(message, { cause }),
    });
  }

  private call<T>(operation: string, what: string, fn: () => Promise<T>): Promise<T> {
    return callRoute53(
      {
        operation,
        what,
        zone: this.zone,
        unavailable: (message, cause) => new ApiRecordsUnavailableError(message, { cause }),
      },
      fn,
    );
  }
}

function recordSet(record: ApiRecord): ResourceRecordSet {
  return { Name: record.name, Type: record.type, TTL: record.ttl, ResourceRecords: [{ Value: record.value }] };
}

function toRecord(set: ResourceRecordSet): ApiRecord {
  const value = (set.ResourceRecords?.[0]?.Value ?? '').replace(/\.$/, '').toLowerCase();
  return { name: normalizeRecordName(set.Name ?? ''), type: set.Type as ApiRecordType, value, ttl: set.TTL ?? 0 };
}
