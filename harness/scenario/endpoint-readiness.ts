import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Which of a cluster's endpoints a client sends its requests to first, as etcd's gRPC clients choose: a
 * subchannel carries requests only once its connection is READY, which takes the server's answer to the
 * handshake, so a member that accepts connections but does not serve yet (one that joins, until it has
 * published itself) gets none, and one whose connection failed gets none until it reconnects. Here an
 * endpoint is ready once it answered anything (a probe or a request, a refusal included) and stops being
 * ready when a request on it got no answer; one that is not ready is probed every `intervalMs` until it
 * answers (etcd serves nothing on its client URL, `/version` included, before it is ready).
 */
export class EndpointReadiness {
  private readonly ready = new Set<string>();
  private readonly probing = new Set<string>();
  private known = new Set<string>();
  private readonly stopping = new AbortController();

  constructor(
    private readonly options: {
      /** Whether the endpoint answers now; default a GET of etcd's `/version`. */
      readonly probe?: (endpoint: string, signal: AbortSignal) => Promise<boolean>;
      readonly intervalMs?: number;
    } = {},
  ) {}

  /**
   * The indexes of `endpoints` to try for one request, starting at `from` and going round: the ready ones
   * first, then the others (a request that every ready member refused still has somewhere to go).
   */
  order(endpoints: readonly string[], from: number): number[] {
    this.known = new Set(endpoints);
    const round = endpoints.map((_, i) => (from + i) % endpoints.length);
    for (const e of endpoints) if (!this.ready.has(e)) this.watch(e);
    return [
      ...round.filter((i) => this.ready.has(endpoints[i]!)),
      ...round.filter((i) => !this.ready.has(endpoints[i]!)),
    ];
  }

  answered(endpoint: string): void {
    this.ready.add(endpoint);
  }

  unanswered(endpoint: string): void {
    this.ready.delete(endpoint);
    this.watch(endpoint);
  }

  stop(): void {
    this.stopping.abort();
  }

  private watch(endpoint: string): void {
    if (this.probing.has(endpoint) || this.stopping.signal.aborted) return;
    this.probing.add(endpoint);
    const probe = this.options.probe ?? versionAnswers;
    const signal = this.stopping.signal;
    void (async () => {
      try {
        // An endpoint no longer listed (a member restarted elsewhere) is left alone.
        while (!signal.aborted && !this.ready.has(endpoint) && this.known.has(endpoint)) {
          if (await probe(endpoint, signal).catch(() => false)) this.ready.add(endpoint);
          else await sleep(this.options.intervalMs ?? 100, undefined, { signal }).catch(() => undefined);
        }
      } finally {
        this.probing.delete(endpoint);
      }
    })();
  }
}

async function versionAnswers(endpoint: string, signal: AbortSignal): Promise<boolean> {
  const response = await fetch(`${endpoint}/version`, { signal: AbortSignal.any([signal, AbortSignal.timeout(250)]) });
  await response.body?.cancel();
  return response.ok;
}
