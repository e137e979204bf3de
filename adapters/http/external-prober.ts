import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { ExternalProbeResult } from '../../core/dwd/probe-round.js';
import type { ExternalProber } from '../../core/dwd/watchdog-round.js';
import {
  addressProblem,
  outboundUrlProblem,
  STRICT_OUTBOUND,
  type OutboundPolicy,
} from '../../core/net/outbound-url.js';

export interface HttpExternalProberOptions {
  timeoutMs?: number;
  /** Which URLs may be probed; checked on the URL and again on every address the name resolves to. */
  policy?: OutboundPolicy;
  /** Told about every URL refused by the policy (the watchdog logs them). */
  onRefused?: (url: string, reason: string) => void;
  /** The resolver (tests stand in for a DNS answer that changed since the heartbeat). */
  resolve?: typeof dnsLookup;
}

/**
 * Probes a kube-apiserver through its external (load-balancer) URL, as kubelets reach it: GET /healthz
 * with a deadline. Any answer below 500 means the path through the load balancer works.
 *
 * The URL comes from a seed's heartbeat, so it is checked at fetch time too: the connection's own DNS
 * lookup refuses addresses the policy does not allow, so a name that resolved to a public address when
 * the heartbeat was admitted and to instance metadata now (DNS rebinding) is never connected to.
 */
export class HttpExternalProber implements ExternalProber {
  constructor(private readonly options: HttpExternalProberOptions = {}) {}

  async probe(url: string, options: { serverName?: string } = {}): Promise<ExternalProbeResult> {
    const policy = this.options.policy ?? STRICT_OUTBOUND;
    const problem = outboundUrlProblem(url, policy);
    if (problem) {
      this.options.onRefused?.(url, problem);
      return 'failure';
    }
    const target = new URL('/healthz', url);
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const timeoutMs = this.options.timeoutMs ?? 2_000;
    return new Promise<ExternalProbeResult>((resolve) => {
      const req = request(
        target,
        {
          method: 'GET',
          lookup: checkedLookup(policy, this.options.resolve ?? dnsLookup),
          timeout: timeoutMs,
          // A seed's load balancer routes by the name asked for (SNI). The probe asks whether the path through
          // it reaches a kube-apiserver that answers, not who it is: the garden keeps no shoot's CA in the
          // clear to check the certificate against, and the answer only decides a scale-down.
          ...(options.serverName ? { servername: options.serverName, rejectUnauthorized: false } : {}),
          headers: { 'user-agent': 'gardenless-dependency-watchdog' },
        },
        (res) => {
          res.resume();
          resolve((res.statusCode ?? 500) < 500 ? 'success' : 'failure');
        },
      );
      req.on('timeout', () => {
        req.destroy();
        resolve('timeout');
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'EOUTBOUNDFORBIDDEN') this.options.onRefused?.(url, error.message);
        resolve('failure');
      });
      req.end();
    });
  }
}

/** A DNS lookup for the connection that fails when any resolved address is not allowed. */
function checkedLookup(policy: OutboundPolicy, resolve: typeof dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.map((a) => addressProblem(a.address, policy)).find(Boolean);
      if (refused || addresses.length === 0) {
        const forbidden: NodeJS.ErrnoException = new Error(`${hostname} ${refused ?? 'resolves to no address'}`);
        forbidden.code = 'EOUTBOUNDFORBIDDEN';
        return callback(forbidden, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family ?? isIP(first.address));
    });
  };
}
