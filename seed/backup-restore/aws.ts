import { Route53Client } from '@aws-sdk/client-route-53';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DnsOwnerLookup } from '../../adapters/dns/owner-lookup.js';
import { Route53OwnerLookup } from '../../adapters/route53/owner-lookup.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { s3Api } from '../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import type { OwnerLookup } from '../../core/ownership/index.js';
import { SnapshotStoreError } from '../../core/snapshots/index.js';
import { SidecarConfigError } from './errors.js';
import type { RangedObjectReader } from './ranged-download.js';

/** Where the AWS clients go: the emulator's endpoint, or AWS when undefined (then AWS_ENDPOINT_URL still applies). */
export interface AwsTarget {
  readonly endpoint?: string;
  readonly region?: string;
}

function clientConfig(target: AwsTarget): { endpoint?: string; region?: string } {
  return {
    ...(target.endpoint ? { endpoint: target.endpoint } : {}),
    ...(target.region ? { region: target.region } : {}),
  };
}

/** The seed's backup bucket as a snapshot store. Path-style addressing whenever an endpoint is set (the emulator). */
export function s3SnapshotStore(input: AwsTarget & { bucket: string }): S3SnapshotStore {
  return s3Backup(input).store;
}

/** The bucket as a snapshot store and as a ranged reader (parallel restore downloads), on one client. */
export function s3Backup(input: AwsTarget & { bucket: string; client?: S3Client }): {
  store: S3SnapshotStore;
  rangedReader: RangedObjectReader;
} {
  const client =
    input.client ??
    new S3Client({ ...clientConfig(input), forcePathStyle: Boolean(input.endpoint ?? process.env.AWS_ENDPOINT_URL) });
  return {
    store: new S3SnapshotStore({ bucket: input.bucket, api: s3Api(client) }),
    rangedReader: s3RangedReader({ client, bucket: input.bucket }),
  };
}

export function s3RangedReader(input: { client: S3Client; bucket: string }): RangedObjectReader {
  return {
    async readRange({ key, first, last }) {
      const res = await input.client.send(
        new GetObjectCommand({ Bucket: input.bucket, Key: key, Range: `bytes=${first}-${last}` }),
      );
      if (res.Body === undefined)
        throw new SnapshotStoreError(
          `S3 returned no body for ${key} bytes ${first}-${last} in ${input.bucket}`,
          'Unavailable',
        );
      return res.Body as unknown as AsyncIterable<Uint8Array>;
    },
  };
}

export type OwnerLookupConfig =
  /** Route 53 API: for the emulator, which serves no DNS. */
  | (AwsTarget & { readonly mode: 'api'; readonly hostedZoneId: string })
  /** DNS: the steady-state mode; `servers` as host or host:port, default the system's resolvers. */
  | {
      readonly mode: 'dns';
      readonly servers?: readonly string[];
      readonly ownerCheckInterval?: number;
      readonly timeout?: number;
      readonly tries?: number;
    };

export function ownerLookup(config: OwnerLookupConfig): OwnerLookup {
  if (config.mode === 'api') {
    if (!config.hostedZoneId)
      throw new SidecarConfigError('API mode needs the hosted zone id of the owner records', 'hostedZoneId');
    const records = new Route53OwnerRecords({
      hostedZoneId: config.hostedZoneId,
      api: route53Api(new Route53Client(clientConfig(config))),
    });
    return new Route53OwnerLookup(records);
  }
  return new DnsOwnerLookup({
    ...(config.servers && config.servers.length > 0 ? { servers: config.servers } : {}),
    ...(config.ownerCheckInterval === undefined ? {} : { ownerCheckInterval: config.ownerCheckInterval }),
    ...(config.timeout === undefined ? {} : { timeout: config.timeout }),
    ...(config.tries === undefined ? {} : { tries: config.tries }),
  });
}
