import { deployGarden, type Deployment } from '../local/deploy.js';
import { Etcd3 } from 'etcd3';
import { startEmulator, type Emulator } from '../local/emulator.js';
import { readEndpoints } from '../local/landscape-file.js';
import { transferMs, type LinkModel } from '../harness/scenario/link-model.js';
import { startTcpProxy } from '../harness/scenario/tcp-proxy.js';
import { startProxyAheadOfZone } from '../local/api-proxy-zone.js';
import { GardenClient } from '../adapters/http/garden-client.js';
import { registerLocalSeed } from '../harness/local-seed.js';
import { emulatorCredentials, emulatorCredentialsEnv } from '../local/aws-env.js';
import { LANDSCAPE_AGENT_SETTINGS, LANDSCAPE_OWNERSHIP_TIMINGS } from '../local/fleet.js';
import { localSeedAgent, type LocalSeedAgentOptions } from '../seed/agent/local-agent.js';

export { median, percentile } from './bench-stats.js';

/**
 * The running local landscape, or a fresh emulator with the stack deployed (stopped by `close`). With
 * `context`, always a fresh one deployed with it: the running landscape has settings of its own; unless
 * `landscapeContext` says the context is the landscape's own (local/fleet.ts `LANDSCAPE_STACK_CONTEXT`),
 * which a running landscape was deployed with. `running` says which of the two it is. `apiProxyDomain`:
 * a fresh one gets the API-domain proxy its kubeconfigs name, for that external domain, as the running
 * landscape has one.
 */
export async function benchLandscape(
  options: { context?: Record<string, string>; landscapeContext?: boolean; apiProxyDomain?: string } = {},
): Promise<{
  deployment: Pick<Deployment, 'apiUrl' | 'awsEndpoint' | 'region' | 'outputs'>;
  running: boolean;
  close: () => Promise<void>;
}> {
  const running = options.context && !options.landscapeContext ? undefined : readEndpoints();
  if (running) {
    try {
      const res = await fetch(`${running.awsEndpoint}/_localstack/health`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return { deployment: running, running: true, close: async () => {} };
    } catch {
      // A stale endpoints file: fall through and start a private emulator.
    }
  }
  const emulator = await startEmulator({ logFile: `.landscape/bench-emulator-${process.pid}.log` });
  const apiProxy = options.apiProxyDomain ? await startProxyAheadOfZone({ domain: options.apiProxyDomain }) : undefined;
  const close = async () => {
    await apiProxy?.proxy.stop();
    await emulator.stop();
  };
  try {
    // Benchmarks drive the watchdog themselves; a scheduled round would run beside them.
    const deployment = await deployGarden({
      endpoint: emulator.endpoint,
      stackName: 'GardenBench',
      context: {
        watchdogSchedule: 'false',
        ...options.context,
        ...(apiProxy ? { kubeconfigProxyUrl: apiProxy.proxy.url } : {}),
      },
    });
    apiProxy?.resolveThrough({
      endpoint: emulator.endpoint,
      region: deployment.region,
      hostedZoneId: deployment.outputs.ApiHostedZoneId!,
    });
    return { deployment, running: false, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The running landscape's emulator, or a private one (stopped by `stop`). */
export async function benchEmulator(label: string): Promise<Emulator> {
  const running = readEndpoints();
  if (running) {
    const ok = await fetch(`${running.awsEndpoint}/_localstack/health`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { endpoint: running.awsEndpoint, owned: false, pid: undefined, stop: async () => {} };
  }
  return startEmulator({ logFile: `.landscape/bench-${label}-emulator-${process.pid}.log` });
}

const FILL_VALUE_BYTES = 256 * 1024;

/** One fill value: random, so incompressible (like encrypted secrets). */
function randomValue(): Buffer {
  const value = Buffer.alloc(FILL_VALUE_BYTES);
  for (let b = 0; b < FILL_VALUE_BYTES; b += 4) value.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, b);
  return value;
}

/** Fills etcd with incompressible values (like encrypted secrets) until its database holds `mb` megabytes; the last revision. */
export async function fillEtcd(clientUrl: string, mb: number): Promise<number> {
  const client = new Etcd3({ hosts: clientUrl });
  const count = Math.ceil((mb * 1024 * 1024) / FILL_VALUE_BYTES);
  let revision = 0;
  try {
    for (let i = 0; i < count; i += 8) {
      const batch = [];
      for (let j = i; j < Math.min(count, i + 8); j++)
        batch.push(client.put(`/registry/secrets/bench/${String(j).padStart(6, '0')}`).value(randomValue()));
      for (const res of await Promise.all(batch)) revision = Math.max(revision, Number(res.header.revision));
    }
    return revision;
  } finally {
    client.close();
  }
}

/** etcd's own account of its database (the maintenance API's Status, as `etcdctl endpoint status` shows it), in bytes. */
export async function etcdDbSize(
  clientUrl: string,
): Promise<{ dbSize: number; dbSizeInUse: number; revision: number }> {
  const client = new Etcd3({ hosts: clientUrl });
  try {
    const status = await client.maintenance.status();
    return {
      dbSize: Number(status.dbSize),
      dbSizeInUse: Number(status.dbSizeInUse ?? status.dbSize),
      revision: Number(status.header.revision),
    };
  } finally {
    client.close();
  }
}

/**
 * Puts incompressible 256 KB values under `keyPrefix` until etcd reports a database (`dbSize`) of at least
 * `bytes`, `chunkBytes` at a time; `between` runs after each chunk (e.g. to let the sidecar upload its
 * deltas before the next). Returns etcd's status at the end and how many values were written.
 */
export async function fillEtcdTo(options: {
  clientUrl: string;
  bytes: number;
  keyPrefix: string;
  chunkBytes?: number;
  between?: () => Promise<void>;
}): Promise<{ dbSize: number; dbSizeInUse: number; revision: number; written: number }> {
  const client = new Etcd3({ hosts: options.clientUrl });
  const perChunk = Math.max(1, Math.floor((options.chunkBytes ?? 32 * 1024 * 1024) / FILL_VALUE_BYTES));
  let written = 0;
  try {
    for (;;) {
      const status = await etcdDbSize(options.clientUrl);
      if (status.dbSize >= options.bytes) return { ...status, written };
      const missing = Math.ceil((options.bytes - status.dbSize) / FILL_VALUE_BYTES);
      const count = Math.min(perChunk, missing);
      for (let i = 0; i < count; i += 8) {
        const batch = [];
        for (let j = i; j < Math.min(count, i + 8); j++)
          batch.push(client.put(`${options.keyPrefix}${String(written + j).padStart(6, '0')}`).value(randomValue()));
        await Promise.all(batch);
      }
      written += count;
      await options.between?.();
    }
  } finally {
    client.close();
  }
}

/**
 * The S3 latency model the copy and restore benchmarks run under: every request pays a round trip of
 * BENCH_S3_LATENCY_MS (default 30 ms) and every connection carries at most BENCH_S3_MBPS (default
 * 100 MB/s, 10^6 bytes) each way; BENCH_S3_MODEL=off talks to the emulator directly.
 */
export function s3ModelFromEnv(env: NodeJS.ProcessEnv = process.env): LinkModel | undefined {
  if (env.BENCH_S3_MODEL === 'off') return undefined;
  return { latencyMs: Number(env.BENCH_S3_LATENCY_MS ?? 30), bytesPerSecond: Number(env.BENCH_S3_MBPS ?? 100) * 1e6 };
}

export function describeS3Model(model: LinkModel | undefined): string {
  if (!model) return 'no latency model (straight to the emulator)';
  return `S3 latency model: ${model.latencyMs} ms round trip per request (${model.latencyMs / 2} ms each way), ${model.bytesPerSecond / 1e6} MB/s per connection and direction`;
}

/** Seconds to move `bytes` once at the model's rate (no model: 0). */
export function modelTransferSeconds(model: LinkModel | undefined, bytes: number): number {
  return model ? transferMs(model, bytes) / 1_000 : 0;
}

/**
 * `endpoint` behind a loopback proxy that applies `model` (harness/scenario/link-model.ts); the
 * proxy's endpoint, or `endpoint` itself without a model. `stop` closes the proxy.
 */
export async function behindS3Model(
  endpoint: string,
  model: LinkModel | undefined,
): Promise<{ endpoint: string; stop: () => Promise<void> }> {
  if (!model) return { endpoint, stop: async () => {} };
  const upstream = new URL(endpoint);
  const proxy = await startTcpProxy({
    upstream: { host: upstream.hostname, port: Number(upstream.port || 80) },
    label: 's3-model',
    link: model,
  });
  return { endpoint: `http://127.0.0.1:${proxy.port}`, stop: () => proxy.stop() };
}

/**
 * A bench's seed as the landscape runs one: registered with its backup bucket (`registerLocalSeed`), its
 * real agent in this process with the landscape's heartbeat and ownership timings, the shoots' real
 * Kubernetes components behind a load balancer on `loadBalancer`. Not started: the caller starts it.
 */
export async function landscapeSeedAgent(input: {
  deployment: Pick<Deployment, 'apiUrl' | 'awsEndpoint' | 'region' | 'outputs'>;
  name: string;
  networkIndex: number;
  workDir: string;
  kubeBinDir: string;
  loadBalancer: { host: string; port: number };
  sidecar?: Omit<NonNullable<LocalSeedAgentOptions['sidecar']>, 'ownership'>;
  log?: LocalSeedAgentOptions['log'];
}): Promise<ReturnType<typeof localSeedAgent>> {
  const { deployment, name } = input;
  const garden = () =>
    new GardenClient({ apiUrl: deployment.apiUrl, region: deployment.region, credentials: emulatorCredentials() });
  await registerLocalSeed({ garden: garden(), deployment, name, networkIndex: input.networkIndex });
  return localSeedAgent({
    seed: name,
    garden: garden(),
    aws: { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() },
    owner: {
      mode: 'api',
      hostedZoneId: deployment.outputs.HostedZoneId,
      internalDomain: deployment.outputs.InternalDomain,
    },
    backupBucket: `gl-backup-${name}`,
    workDir: input.workDir,
    heartbeatIntervalMs: LANDSCAPE_AGENT_SETTINGS.heartbeatIntervalSeconds * 1_000,
    sidecar: { ownership: LANDSCAPE_OWNERSHIP_TIMINGS, ...input.sidecar },
    env: { ...process.env, ...emulatorCredentialsEnv(deployment.region) },
    kubeBinDir: input.kubeBinDir,
    loadBalancer: input.loadBalancer,
    ...(input.log ? { log: input.log } : {}),
  });
}
