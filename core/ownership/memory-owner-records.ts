import { ValidationError } from '../errors.js';
import { OwnerRecordConflictError } from './errors.js';
import {
  DEFAULT_OWNER_RECORD_TTL_SECONDS,
  MAX_OWNER_RECORDS_PAGE_SIZE,
  type DeleteOwnerRecordInput,
  type OwnerRecord,
  type OwnerRecordPage,
  type OwnerRecords,
  type SetOwnerRecordInput,
} from './owner-records.js';

/** Owner records in a map, with the same conditions and paging as the Route 53 implementation. */
export class InMemoryOwnerRecords implements OwnerRecords {
  private readonly records = new Map<string, OwnerRecord>();

  async get(name: string): Promise<OwnerRecord | undefined> {
    return this.records.get(normalize(name));
  }

  async set(input: SetOwnerRecordInput): Promise<OwnerRecord> {
    const name = normalize(input.name);
    if (input.value.length === 0) throw new ValidationError('owner record value must not be empty', { field: 'value' });
    const current = this.records.get(name);
    const wanted: OwnerRecord = { name, value: input.value, ttl: input.ttl ?? DEFAULT_OWNER_RECORD_TTL_SECONDS };
    if (current?.value === input.value) {
      if (current.ttl !== wanted.ttl) this.records.set(name, wanted);
      return wanted;
    }
    if (input.expected === null && current !== undefined) {
      throw new OwnerRecordConflictError(`owner record ${name} already names ${current.value}`, { current });
    }
    if (typeof input.expected === 'string' && current?.value !== input.expected) {
      throw new OwnerRecordConflictError(
        `owner record ${name} ${current === undefined ? 'does not exist' : `names ${current.value}`}, expected ${input.expected}`,
        { current },
      );
    }
    this.records.set(name, wanted);
    return wanted;
  }

  async delete(input: DeleteOwnerRecordInput): Promise<boolean> {
    const name = normalize(input.name);
    const current = this.records.get(name);
    if (current === undefined) return false;
    if (input.expected !== undefined && current.value !== input.expected) {
      throw new OwnerRecordConflictError(`owner record ${name} names ${current.value}, expected ${input.expected}`, {
        current,
      });
    }
    this.records.delete(name);
    return true;
  }

  async list(options: { cursor?: string; pageSize?: number } = {}): Promise<OwnerRecordPage> {
    const pageSize = options.pageSize ?? MAX_OWNER_RECORDS_PAGE_SIZE;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_OWNER_RECORDS_PAGE_SIZE) {
      throw new ValidationError(`pageSize must be 1-${MAX_OWNER_RECORDS_PAGE_SIZE}, got ${pageSize}`, {
        field: 'pageSize',
      });
    }
    // The cursor is the first name of the next page; names sort as strings here (Route 53 has its own order).
    const names = [...this.records.keys()].sort().filter((n) => options.cursor === undefined || n >= options.cursor);
    const page = names.slice(0, pageSize);
    return { records: page.map((n) => this.records.get(n)!), next: names[pageSize] };
  }
}

function normalize(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
