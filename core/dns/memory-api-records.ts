import { ApiRecordsUnavailableError, ApiRecordConflictError } from './errors.js';
import {
  DEFAULT_API_RECORD_TTL_SECONDS,
  type ApiRecord,
  type ApiRecords,
  type DeleteApiRecordInput,
  type SetApiRecordInput,
} from './api-records.js';
import { describeTarget, sameTarget } from './record-target.js';

/** API records in a map, with the same conditions as the Route 53 implementation; keeps every change for tests. */
export class InMemoryApiRecords implements ApiRecords {
  private readonly records = new Map<string, ApiRecord>();
  /** Every change, in order, with the time it was made: the "record's timeline" tests compare against. */
  readonly changes: { at: number; name: string; record: ApiRecord | undefined }[] = [];

  constructor(private readonly clock: () => number = Date.now) {}

  async get(name: string): Promise<ApiRecord | undefined> {
    return this.records.get(normalize(name));
  }

  async set(input: SetApiRecordInput): Promise<ApiRecord> {
    const name = normalize(input.name);
    const current = this.records.get(name);
    const wanted: ApiRecord = {
      name,
      type: input.target.type,
      value: input.target.value,
      ttl: input.ttl ?? DEFAULT_API_RECORD_TTL_SECONDS,
    };
    if (!sameTarget(current, input.target)) checkCondition(name, input.expected, current);
    if (current === undefined || !sameTarget(current, wanted) || current.ttl !== wanted.ttl) {
      this.records.set(name, wanted);
      this.changes.push({ at: this.clock(), name, record: wanted });
    }
    return wanted;
  }

  async delete(input: DeleteApiRecordInput): Promise<boolean> {
    const name = normalize(input.name);
    const current = this.records.get(name);
    if (current === undefined) return false;
    if (input.expected !== undefined && !sameTarget(current, input.expected)) {
      throw new ApiRecordConflictError(
        `API record ${name} is ${describeTarget(current)}, expected ${describeTarget(input.expected)}`,
        { current },
      );
    }
    this.records.delete(name);
    this.changes.push({ at: this.clock(), name, record: undefined });
    return true;
  }

  async list(): Promise<ApiRecord[]> {
    return [...this.records.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}

/** Shared by the implementations: a failed condition of a change that is not already done. */
export function checkCondition(
  name: string,
  expected: SetApiRecordInput['expected'],
  current: ApiRecord | undefined,
): void {
  if (expected === undefined) return;
  if (expected === null && current !== undefined) {
    throw new ApiRecordConflictError(`API record ${name} already exists (${describeTarget(current)})`, { current });
  }
  if (expected !== null && !sameTarget(current, expected)) {
    throw new ApiRecordConflictError(
      `API record ${name} ${current === undefined ? 'does not exist' : `is ${describeTarget(current)}`}, expected ${describeTarget(expected)}`,
      { current },
    );
  }
}

/** API records that are never reachable: for fault tests of the steps that write them. */
export class FailingApiRecords implements ApiRecords {
  constructor(private readonly message = 'API records unavailable (failing store)') {}
  async get(_name: string): Promise<ApiRecord | undefined> {
    throw new ApiRecordsUnavailableError(this.message);
  }
  async set(_input: SetApiRecordInput): Promise<ApiRecord> {
    throw new ApiRecordsUnavailableError(this.message);
  }
  async delete(_input: DeleteApiRecordInput): Promise<boolean> {
    throw new ApiRecordsUnavailableError(this.message);
  }
  async list(): Promise<ApiRecord[]> {
    throw new ApiRecordsUnavailableError(this.message);
  }
}

export function normalize(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}
