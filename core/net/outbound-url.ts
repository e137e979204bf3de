import { isIP } from 'node:net';
import { AdmissionError } from '../errors.js';

/**
 * Where the garden may send requests on a URL a seed reported (the watchdog's external probes): https to
 * a public address, unless the deployment allows more. Link-local addresses (instance metadata), the
 * unspecified address, multicast and reserved ranges are never allowed.
 */
export interface OutboundPolicy {
  /** Plain http besides https (the local landscape's stand-in load balancers speak http). */
  allowHttp?: boolean;
  /** 127.0.0.0/8, ::1 and `localhost` names (the local landscape and the tests). */
  allowLoopback?: boolean;
  /** RFC 1918, 100.64.0.0/10 (CGNAT) and fc00::/7 (a garden inside the seeds' private network). */
  allowPrivate?: boolean;
}

export const STRICT_OUTBOUND: OutboundPolicy = Object.freeze({});

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'forbidden';

/** The policy from its settings word list (`http,loopback,private`), as the stack passes it to functions. */
export function outboundPolicyFrom(words: string | undefined): OutboundPolicy {
  const set = new Set(
    (words ?? '')
      .split(',')
      .map((w) => w.trim())
      .filter(Boolean),
  );
  for (const w of set)
    if (!['http', 'loopback', 'private'].includes(w))
      throw new Error(`unknown outbound allowance "${w}" (http, loopback, private)`);
  return { allowHttp: set.has('http'), allowLoopback: set.has('loopback'), allowPrivate: set.has('private') };
}

/** Why a URL may not be fetched under the policy, or undefined when it may. Checks the literal URL only. */
export function outboundUrlProblem(text: string, policy: OutboundPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:'))
    return `must use https${policy.allowHttp ? ' or http' : ''}, not ${url.protocol.replace(':', '')}`;
  if (url.username || url.password) return 'must not carry credentials';
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (isIP(host)) return addressProblem(host, policy);
  if (host === 'localhost' || host.endsWith('.localhost'))
    return policy.allowLoopback ? undefined : 'names loopback (localhost)';
  if (!host.includes('.')) return 'must name a fully qualified host';
  return undefined;
}

/** Why an address (as resolved at fetch time) may not be reached under the policy, or undefined. */
export function addressProblem(address: string, policy: OutboundPolicy): string | undefined {
  const cls = classifyAddress(address);
  if (cls === 'public') return undefined;
  if (cls === 'loopback' && policy.allowLoopback) return undefined;
  if (cls === 'private' && policy.allowPrivate) return undefined;
  return `is a ${cls} address (${address})`;
}

/** Throws AdmissionError (422) when a URL the garden would fetch is not allowed. */
export function assertOutboundUrl(url: string, policy: OutboundPolicy, field: string): void {
  const problem = outboundUrlProblem(url, policy);
  if (problem)
    throw new AdmissionError(
      `${field} ${problem}; the garden fetches only https URLs on public addresses unless the deployment allows more`,
      { field, code: 'OutboundUrlForbidden' },
    );
}

export function classifyAddress(address: string): AddressClass {
  const v4 = parseIpv4(address);
  if (v4 !== undefined) return classifyV4(v4);
  const v6 = parseIpv6(address);
  if (v6 === undefined) return 'forbidden';
  return classifyV6(v6);
}

function classifyV4(a: number): AddressClass {
  const inRange = (base: string, bits: number) => {
    const b = parseIpv4(base)!;
    const size = 2 ** (32 - bits);
    return Math.floor(a / size) === Math.floor(b / size);
  };
  if (inRange('127.0.0.0', 8)) return 'loopback';
  if (inRange('169.254.0.0', 16)) return 'link-local';
  if (inRange('10.0.0.0', 8) || inRange('172.16.0.0', 12) || inRange('192.168.0.0', 16) || inRange('100.64.0.0', 10))
    return 'private';
  // "This network" (0.0.0.0 reaches the local host), IETF protocol assignments, benchmarking, multicast, reserved, broadcast.
  if (
    inRange('0.0.0.0', 8) ||
    inRange('192.0.0.0', 24) ||
    inRange('198.18.0.0', 15) ||
    inRange('224.0.0.0', 4) ||
    inRange('240.0.0.0', 4)
  )
    return 'forbidden';
  return 'public';
}

function classifyV6(words: number[]): AddressClass {
  const [w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0, w6 = 0, w7 = 0] = words;
  const embedded = () => classifyV4(w6 * 65536 + w7);
  if (words.every((w) => w === 0)) return 'forbidden';
  if (w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0 && w6 === 0 && w7 === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach an IPv4 address.
  if (w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0 && (w5 === 0xffff || w5 === 0)) return embedded();
  if (w0 === 0x64 && w1 === 0xff9b) return embedded();
  if (w0 === 0x2002) return classifyV4(w1 * 65536 + w2); // 6to4
  if ((w0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((w0 & 0xfe00) === 0xfc00 || (w0 & 0xffc0) === 0xfec0) return 'private';
  if ((w0 & 0xff00) === 0xff00) return 'forbidden'; // multicast
  return 'public';
}

function parseIpv4(text: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return undefined;
  const octets = m.slice(1).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  return octets.reduce((acc, o) => acc * 256 + o, 0);
}

/** Eight 16-bit words, or undefined. Accepts `::` compression, an embedded IPv4 tail and a zone id. */
function parseIpv6(text: string): number[] | undefined {
  let rest = text.split('%')[0] ?? '';
  const words: number[] = [];
  const tail = /(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(rest);
  let v4Words: number[] = [];
  if (tail) {
    const v4 = parseIpv4(tail[1]!);
    if (v4 === undefined) return undefined;
    v4Words = [Math.floor(v4 / 65536), v4 % 65536];
    rest = rest.slice(0, -tail[1]!.length);
    if (rest.endsWith(':') && !rest.endsWith('::')) rest = rest.slice(0, -1);
  }
  const halves = rest.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string) =>
    part === '' ? [] : part.split(':').map((h) => (/^[0-9a-f]{1,4}$/i.test(h) ? parseInt(h, 16) : NaN));
  const head = parse(halves[0] ?? '');
  const back = halves.length === 2 ? parse(halves[1] ?? '') : [];
  if ([...head, ...back].some(Number.isNaN)) return undefined;
  const fill = 8 - head.length - back.length - v4Words.length;
  if (halves.length === 2 ? fill < 0 : fill !== 0) return undefined;
  words.push(...head, ...Array<number>(halves.length === 2 ? fill : 0).fill(0), ...back, ...v4Words);
  return words.length === 8 ? words : undefined;
}
