import type { ApiRecord, ApiRecordTarget } from './record.js';

export type { ApiRecord } from './record.js';

/** Gardener's default for DNSRecords is 120 s; a shorter TTL shortens how long clients reach the old seed. */
export const DEFAULT_API_RECORD_TTL_SECONDS = 60;

/**
 * The TTL a migration gives the API record from its start until the switch: a resolver that answered before
 * the fence keeps the source's address at most this long after the switch, instead of the deployment's TTL.
 * The good path fences only once every answer given with the old TTL has run out (docs/api-domain.md).
 */
export const MIGRATION_API_RECORD_TTL_SECONDS = 5;

export interface SetApiRecordInput {
  readonly name: string;
  readonly target: ApiRecordTarget;
  readonly ttl?: number;
  /**
   * undefined writes unconditionally; null requires that the record does not exist; a target requires
   * that the record holds exactly that target. A record that already holds `target` satisfies any
   * condition (a retried step). A failed condition is an `ApiRecordConflictError` with the current record.
   */
  readonly expected?: ApiRecordTarget | null;
}

export interface DeleteApiRecordInput {
  readonly name: string;
  /** Delete only if the record holds this target; a record already gone is fine either way. */
  readonly expected?: ApiRecordTarget;
}

/**
 * The API records seam: Route 53 A/AAAA/CNAME records in AWS, a map in memory, one that always fails for
 * fault tests. Only the garden writes them (the lifecycle's create and delete, the migration's switch).
 */
export interface ApiRecords {
  get(name: string): Promise<ApiRecord | undefined>;
  set(input: SetApiRecordInput): Promise<ApiRecord>;
  /** True if a record was deleted, false if there was none. */
  delete(input: DeleteApiRecordInput): Promise<boolean>;
  /** Every API record of the zone (all pages): what the audit compares with the seeds' reports. */
  list(): Promise<ApiRecord[]>;
}
