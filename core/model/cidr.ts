import { z } from 'zod';

/** An IPv4 network as an integer range. IPv6 shoot networks are out of scope for now. */
export interface Ipv4Range {
  readonly first: number;
  readonly last: number;
}

const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

export function parseCidr(text: string): Ipv4Range | undefined {
  const m = CIDR.exec(text);
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  const prefix = Number(m[5]);
  if (octets.some((o) => o > 255) || prefix > 32) return undefined;
  const address = octets.reduce((acc, o) => acc * 256 + o, 0);
  const size = 2 ** (32 - prefix);
  const first = Math.floor(address / size) * size;
  // A CIDR whose host bits are set is ambiguous; Kubernetes rejects it too.
  if (first !== address) return undefined;
  return { first, last: first + size - 1 };
}

export function overlaps(a: Ipv4Range, b: Ipv4Range): boolean {
  return a.first <= b.last && b.first <= a.last;
}

export const cidr = z
  .string()
  .max(18)
  .refine((s) => parseCidr(s) !== undefined, 'must be an IPv4 CIDR with no host bits set, like 10.0.0.0/16');
