/**
 * The owner records seam: Route 53 TXT records in AWS, a map in memory, one that always fails for fault
 * tests. Only the orchestrator and the audit use it; seeds in steady state resolve through DNS instead.
 */

export interface OwnerRecord {
  /** `owner.<shoot>.<project>.<internal-domain>`, no trailing dot. */
  readonly name: string;
  /** The owning seed's identity. */
  readonly value: string;
  /** Seconds. Part of the fence bound's `dnsCacheTTL` when seeds resolve through a caching resolver. */
  readonly ttl: number;
}

/** Short, so that caching resolvers add little to the fence bound. */
export const DEFAULT_OWNER_RECORD_TTL_SECONDS = 5;
/** Route 53 returns at most 300 record sets per ListResourceRecordSets call. */
export const MAX_OWNER_RECORDS_PAGE_SIZE = 300;

export interface SetOwnerRecordInput {
  readonly name: string;
  readonly value: string;
  readonly ttl?: number;
  /**
   * The condition for the change: undefined writes unconditionally; null requires that the record does
   * not exist; a string requires that it holds exactly that value (Route 53: DELETE old + CREATE new in
   * one atomic change batch). A record that already holds `value` satisfies any condition, so a retried
   * step succeeds. A failed condition is an `OwnerRecordConflictError` carrying the current record.
   */
  readonly expected?: string | null;
}

export interface DeleteOwnerRecordInput {
  readonly name: string;
  /** Delete only if the record holds this value; a record already gone is fine either way. */
  readonly expected?: string;
}

export interface OwnerRecordPage {
  readonly records: readonly OwnerRecord[];
  /** Pass as `cursor` for the next page; undefined on the last page. Opaque. */
  readonly next: string | undefined;
}

export interface OwnerRecords {
  get(name: string): Promise<OwnerRecord | undefined>;
  set(input: SetOwnerRecordInput): Promise<OwnerRecord>;
  /** True if a record was deleted, false if there was none. */
  delete(input: DeleteOwnerRecordInput): Promise<boolean>;
  /** Every owner record, in pages of at most `pageSize` (default and maximum 300). */
  list(options?: { cursor?: string; pageSize?: number }): Promise<OwnerRecordPage>;
}
