import { Route53ApiRecords } from '../../adapters/route53/api-records.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { ApiRecordWriter } from '../../core/dns/index.js';
import { optionalNumberEnv, requireEnv } from './env.js';

/** The API records of this deployment: the external domain's zone, its TTL, changes announced on the bus. */
export function apiRecordWriter(): ApiRecordWriter {
  const ttlSeconds = optionalNumberEnv('API_RECORD_TTL_SECONDS');
  return new ApiRecordWriter({
    records: new Route53ApiRecords({ hostedZoneId: requireEnv('API_HOSTED_ZONE_ID') }),
    settings: { externalDomain: requireEnv('EXTERNAL_DOMAIN'), ...(ttlSeconds === undefined ? {} : { ttlSeconds }) },
    events: new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME') }),
  });
}
