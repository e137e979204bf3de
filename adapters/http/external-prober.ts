import type { ExternalProber } from '../../core/dwd/watchdog-round.js';
import type { ExternalProbeResult } from '../../core/dwd/probe-round.js';

/**
 * Probes a kube-apiserver through its external (load-balancer) URL, as kubelets reach it: GET /healthz
 * with a deadline. Any answer below 500 means the path through the load balancer works.
 */
export class HttpExternalProber implements ExternalProber {
  constructor(private readonly options: { timeoutMs?: number } = {}) {}

  async probe(url: string): Promise<ExternalProbeResult> {
    const timeoutMs = this.options.timeoutMs ?? 2_000;
    try {
      const res = await fetch(new URL('/healthz', url), { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
      await res.body?.cancel();
      return res.status < 500 ? 'success' : 'failure';
    } catch (error) {
      return (error as Error).name === 'TimeoutError' ? 'timeout' : 'failure';
    }
  }
}
