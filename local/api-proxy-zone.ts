import { Route53Client } from '@aws-sdk/client-route-53';
import { Route53ApiRecords } from '../adapters/route53/api-records.js';
import { route53Api } from '../adapters/route53/route53-api.js';
import { ApiDomainProxy, type ApiDomainProxyOptions } from './api-proxy.js';
import { emulatorCredentials } from './aws-env.js';

/** The emulator's Route 53 zone of the external domain, where the API-domain proxy looks names up. */
export interface ApiZone {
  readonly endpoint: string;
  readonly region: string;
  readonly hostedZoneId: string;
}

/** The API records of the emulator's zone, read as the proxy reads them. */
export function zoneRecords(zone: ApiZone): Route53ApiRecords {
  return new Route53ApiRecords({
    hostedZoneId: zone.hostedZoneId,
    api: route53Api(
      new Route53Client({ endpoint: zone.endpoint, region: zone.region, credentials: emulatorCredentials() }),
    ),
  });
}

/**
 * The API-domain proxy in this process, started before the stack that names it is deployed (its address
 * is a stack setting, `kubeconfigProxyUrl`): it answers nothing until `resolveThrough` names the zone the
 * deploy made.
 */
export async function startProxyAheadOfZone(
  options: Omit<ApiDomainProxyOptions, 'lookup'>,
): Promise<{ proxy: ApiDomainProxy; resolveThrough: (zone: ApiZone) => void }> {
  let records: Route53ApiRecords | undefined;
  const proxy = await ApiDomainProxy.start({ ...options, lookup: async (name) => records?.get(name) });
  return { proxy, resolveThrough: (zone) => (records = zoneRecords(zone)) };
}
