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

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';

/** The octet values whose low `8 - bits` bits are zero, as a regex alternation. */
function octetWithPrefix(bits: number): string {
  if (bits === 8) return OCTET;
  const step = 2 ** (8 - bits);
  const values: number[] = [];
  for (let v = 0; v < 256; v += step) values.push(v);
  return `(?:${values.reverse().join('|')})`;
}

/**
 * An IPv4 CIDR without host bits, as one regular expression: per prefix length, the full octets, the
 * octet the prefix ends in (only values with its host bits zero), and zero octets. The OpenAPI document
 * carries this very pattern, so that the document and the validator accept exactly the same strings.
 */
export const CIDR_PATTERN = (() => {
  const alternatives: string[] = [];
  for (let prefix = 0; prefix <= 32; prefix++) {
    const full = Math.floor(prefix / 8);
    const bits = prefix % 8;
    const octets = Array.from({ length: 4 }, (_, i) =>
      i < full ? OCTET : i === full && bits > 0 ? octetWithPrefix(bits) : '0',
    );
    alternatives.push(`${octets.join('\\.')}/${prefix}`);
  }
  return `^(?:${alternatives.join('|')})$`;
})();

export const cidr = z
  .string()
  .max(18)
  .regex(new RegExp(CIDR_PATTERN), 'must be an IPv4 CIDR with no host bits set, like 10.0.0.0/16');
