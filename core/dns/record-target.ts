import { isIPv4, isIPv6 } from 'node:net';
import { ApiAddressError } from './errors.js';
import type { ApiRecordTarget } from './record.js';

export type { ApiRecordTarget, ApiRecordType } from './record.js';

const HOST_LABEL = /^[a-z0-9_]([-a-z0-9_]*[a-z0-9])?$/;

/**
 * The record an address needs: A for IPv4, AAAA for IPv6, CNAME for a host name (a cloud load balancer's
 * name, whose addresses change under it). Accepts an address or a URL (what agents report as the
 * kube-apiserver's `externalUrl`); IPv6 may come in brackets.
 */
export function recordTargetFor(address: string): ApiRecordTarget {
  const host = hostOf(address);
  if (isIPv4(host)) return { type: 'A', value: host };
  if (isIPv6(host)) return { type: 'AAAA', value: host.toLowerCase() };
  const name = host.toLowerCase().replace(/\.$/, '');
  if (
    name.length === 0 ||
    name.length > 253 ||
    !name.split('.').every((l) => l.length <= 63 && HOST_LABEL.test(l)) ||
    /^[0-9.]+$/.test(name)
  ) {
    throw new ApiAddressError(`load balancer address "${address}" is neither an IP address nor a host name`);
  }
  return { type: 'CNAME', value: name };
}

/** The host of a URL or a bare address, without IPv6 brackets. */
export function hostOf(address: string): string {
  const trimmed = address.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    let url: URL;
    try {
      url = new URL(trimmed);
    } catch (cause) {
      throw new ApiAddressError(`load balancer address "${address}" is not a URL`, { cause });
    }
    return url.hostname.replace(/^\[(.*)\]$/, '$1');
  }
  return trimmed.replace(/^\[(.*)\]$/, '$1');
}

export function sameTarget(a: ApiRecordTarget | undefined, b: ApiRecordTarget | undefined): boolean {
  return a !== undefined && b !== undefined && a.type === b.type && a.value === b.value;
}

export function describeTarget(target: ApiRecordTarget): string {
  return `${target.type} ${target.value}`;
}
