// The shapes of an API record, apart from the seam and the rules that use them (both import these).

export type ApiRecordType = 'A' | 'AAAA' | 'CNAME';

/** What an API record points at: the record type follows from the address. */
export interface ApiRecordTarget {
  readonly type: ApiRecordType;
  /** An IPv4 or IPv6 address (canonical as given), or a host name without the trailing dot. */
  readonly value: string;
}

/** One shoot's API record: the name, its target and TTL. */
export interface ApiRecord extends ApiRecordTarget {
  /** `api.<shoot>.<project>.<external-domain>`, no trailing dot. */
  readonly name: string;
  /** Seconds; a deployment setting. Clients keep resolving the old seed this long after a switch. */
  readonly ttl: number;
}
