import { OwnerRecordsUnavailableError } from './errors.js';
import type {
  DeleteOwnerRecordInput,
  OwnerRecord,
  OwnerRecordPage,
  OwnerRecords,
  SetOwnerRecordInput,
} from './owner-records.js';

/** Owner records whose every call fails: for fault tests (throttling, network loss to Route 53). */
export class FailingOwnerRecords implements OwnerRecords {
  constructor(private readonly message = 'owner records unavailable') {}

  async get(name: string): Promise<OwnerRecord | undefined> {
    throw new OwnerRecordsUnavailableError(`${this.message}: get ${name}`);
  }
  async set(input: SetOwnerRecordInput): Promise<OwnerRecord> {
    throw new OwnerRecordsUnavailableError(`${this.message}: set ${input.name}`);
  }
  async delete(input: DeleteOwnerRecordInput): Promise<boolean> {
    throw new OwnerRecordsUnavailableError(`${this.message}: delete ${input.name}`);
  }
  async list(): Promise<OwnerRecordPage> {
    throw new OwnerRecordsUnavailableError(`${this.message}: list`);
  }
}
