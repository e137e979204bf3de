import { Route53Client } from '@aws-sdk/client-route-53';
import { S3Client } from '@aws-sdk/client-s3';
import { DnsOwnerLookup } from '../../adapters/dns-owner-lookup.js';
import { Route53OwnerLookup } from '../../adapters/route53/owner-lookup.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { s3Api } from '../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import type { OwnerLookup } from '../../core/ownership/index.js';
import { SidecarConfigError } from './errors.js';

/** Where the AWS clients go: the emulator's endpoint, or AWS when undefined (then AWS_ENDPOINT_URL still applies). */
export interface AwsTarget {
  readonly endpoint?: string;
  readonly region?: string;
}

function clientConfig(target: AwsTarget): { endpoint?: string; region?: string } {
  return { ...(target.endpoint ? { endpoint: target.endpoint } : {}), ...(target.region ? { region: target.region } : {}) };
}

/** The seed's backup bucket as a snapshot store. Path-style addressing whenever an endpoint is set (the emulator). */
export function s3SnapshotStore(input: AwsTarget & { bucket: string }): S3SnapshotStore {
  const client = new S3Client({ ...clientConfig(input), forcePathStyle: Boolean(input.endpoint ?? process.env.AWS_ENDPOINT_URL) });
  return new S3SnapshotStore({ bucket: input.bucket, api: s3Api(client) });
}

export type OwnerLookupConfig =
  /** Route 53 API: for the emulator, which serves no DNS. */
  | (AwsTarget & { readonly mode: 'api'; readonly hostedZoneId: string })
  /** DNS: the steady-state mode; `servers` as host or host:port, default the system's resolvers. */
  | { readonly mode: 'dns'; readonly servers?: readonly string[]; readonly ownerCheckInterval?: number; readonly timeout?: number; readonly tries?: number };

export function ownerLookup(config: OwnerLookupConfig): OwnerLookup {
  if (config.mode === 'api') {
    if (!config.hostedZoneId) throw new SidecarConfigError('API mode needs the hosted zone id of the owner records', 'hostedZoneId');
    const records = new Route53OwnerRecords({ hostedZoneId: config.hostedZoneId, api: route53Api(new Route53Client(clientConfig(config))) });
    return new Route53OwnerLookup(records);
  }
  return new DnsOwnerLookup({
    ...(config.servers && config.servers.length > 0 ? { servers: config.servers } : {}),
    ...(config.ownerCheckInterval === undefined ? {} : { ownerCheckInterval: config.ownerCheckInterval }),
    ...(config.timeout === undefined ? {} : { timeout: config.timeout }),
    ...(config.tries === undefined ? {} : { tries: config.tries }),
  });
}
