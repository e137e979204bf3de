import { ApiDomainNameError } from './errors.js';
import type { ShootAdvertisedAddress } from '../model/shoot.js';
import { shootDnsName } from './name.js';

export interface ApiDomainInput {
  readonly shoot: string;
  readonly project: string;
  /** The deployment's external domain (Gardener's default domain), for example `shoots.gardenless.example`. */
  readonly externalDomain: string;
}

/**
 * `api.<shoot>.<project>.<external-domain>`: the name kubeconfigs, kubelets and the dependency watchdog's
 * external probe use for the shoot's kube-apiserver, wherever its control plane runs.
 */
export function apiDomainName(input: ApiDomainInput): string {
  return shootDnsName({
    prefix: 'api',
    shoot: input.shoot,
    project: input.project,
    domain: input.externalDomain,
    domainField: 'externalDomain',
    what: 'API domain',
    invalid: (message, field) => new ApiDomainNameError(message, { field }),
  });
}

/**
 * The shoot's advertised addresses once its API record points at a serving load balancer: the API domain
 * on that load balancer's scheme and port, named `external` as Gardener names it.
 */
export function advertisedAddresses(apiDomain: string, externalUrl: string): ShootAdvertisedAddress[] {
  return [{ name: 'external', url: apiDomainUrl(apiDomain, externalUrl) }];
}

/** A URL to reach the API domain on the port of `externalUrl` (the load balancer's port follows the name). */
export function apiDomainUrl(apiDomain: string, externalUrl: string): string {
  const url = new URL(externalUrl);
  url.hostname = apiDomain;
  return url.toString().replace(/\/$/, '');
}
