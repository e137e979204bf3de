import { OwnerRecordsUnavailableError } from './errors.js';
import type { OwnerRecord, OwnerRecordPage, OwnerRecords } from './owner-records.js';

/** Owner records whose every call fails: for fault tests (throttling, network loss to Route 53). */
export class FailingOwnerRecords implements OwnerRecords {
  constructor(private readonly message = 'owner records unavailable') {}

  async get(name: string): Promise<OwnerRecord | undefined> {
    throw new OwnerRecordsUnavailableError(`${this.message}: get ${name}`);
  }
  async set(input: { name: string }): Promise<OwnerRecord> {
    throw new OwnerRecordsUnavailableError(`${this.message}: set ${input.name}`);
  }
  async delete(input: { name: string }): Promise<boolean> {
    throw new OwnerRecordsUnavailableError(`${this.message}: delete ${input.name}`);
  }
  async list(): Promise<OwnerRecordPage> {
    throw new OwnerRecordsUnavailableError(`${this.message}: list`);
  }
}
