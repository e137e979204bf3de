import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

/**
 * Every outbound target of one seed behind its own cuttable proxy. Against the emulator the targets
 * share one endpoint, so it is the proxy port, not the host, that tells them apart: each of the seed's
 * clients is pointed at its target's endpoint, and a scenario cuts exactly the paths it names.
 */

export const seedTargets = ['garden', 'queues', 's3', 'route53'] as const;
/** garden: the garden API; queues: SQS and Step Functions (task tokens); s3: the backup buckets; route53: owner checks. */
export type SeedTarget = (typeof seedTargets)[number];

export interface SeedProxiesOptions {
  readonly seed: string;
  /** Real endpoint per target, e.g. `http://127.0.0.1:4566` for the emulator's services. */
  readonly upstreams: Readonly<Record<SeedTarget, string>>;
  readonly maxConnectionsPerTarget?: number;
}

export interface SeedProxies {
  readonly seed: string;
  /** The endpoint each of the seed's clients must use: the upstream URL with host and port replaced. */
  readonly endpoints: Readonly<Record<SeedTarget, string>>;
  cut(...targets: SeedTarget[]): void;
  restore(...targets: SeedTarget[]): void;
  cutAll(): void;
  restoreAll(): void;
  isCut(target: SeedTarget): boolean;
  stop(): Promise<void>;
}

export async function startSeedProxies(options: SeedProxiesOptions): Promise<SeedProxies> {
  const proxies = new Map<SeedTarget, TcpProxy>();
  const endpoints = {} as Record<SeedTarget, string>;
  try {
    for (const target of seedTargets) {
      const upstream = new URL(options.upstreams[target]);
      const proxy = await startTcpProxy({
        upstream: {
          host: upstream.hostname,
          port: Number(upstream.port || (upstream.protocol === 'https:' ? 443 : 80)),
        },
        label: `${options.seed}/${target}`,
        ...(options.maxConnectionsPerTarget === undefined ? {} : { maxConnections: options.maxConnectionsPerTarget }),
      });
      proxies.set(target, proxy);
      const through = new URL(upstream);
      through.hostname = '127.0.0.1';
      through.port = String(proxy.port);
      // URL keeps a trailing slash on a bare origin; SDK endpoints and base URLs are given without it.
      endpoints[target] = through.pathname === '/' ? through.origin : through.href;
    }
  } catch (error) {
    await Promise.all([...proxies.values()].map((p) => p.stop()));
    throw error;
  }
  const proxy = (target: SeedTarget) => proxies.get(target)!;
  return {
    seed: options.seed,
    endpoints,
    cut: (...targets) => targets.forEach((t) => proxy(t).cut()),
    restore: (...targets) => targets.forEach((t) => proxy(t).restore()),
    cutAll: () => seedTargets.forEach((t) => proxy(t).cut()),
    restoreAll: () => seedTargets.forEach((t) => proxy(t).restore()),
    isCut: (target) => proxy(target).isCut,
    stop: async () => {
      await Promise.all([...proxies.values()].map((p) => p.stop()));
    },
  };
}

/** The upstreams of a seed against the emulator: the garden API by its URL, every AWS service on the one endpoint. */
export function emulatorUpstreams(deployment: {
  readonly apiUrl: string;
  readonly awsEndpoint: string;
}): Record<SeedTarget, string> {
  return {
    garden: deployment.apiUrl,
    queues: deployment.awsEndpoint,
    s3: deployment.awsEndpoint,
    route53: deployment.awsEndpoint,
  };
}
