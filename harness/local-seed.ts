import { createServer } from 'node:net';
import type { GardenClient } from '../adapters/http/garden-client.js';
import { emulatorCredentials, emulatorCredentialsEnv } from '../local/aws-env.js';
import { emulatorS3, ensureBucket } from '../local/buckets.js';
import type { Deployment } from '../local/deploy.js';
import type { SeedAgent } from '../seed/agent/agent.js';
import { localSeedAgent, type LocalSeedAgentOptions } from '../seed/agent/local-agent.js';
import type { LocalHosting } from '../seed/agent/local-hosting.js';
import { backedSeed } from './fixtures/index.js';
import { FAKE_KUBE_BIN_DIR } from './kube/binaries.js';
import { TEST_OWNERSHIP_TIMINGS } from './timings.js';

/** What of a deployed stack a local seed needs: the emulator and the zones of the owner records. */
export type SeedDeployment = Pick<Deployment, 'awsEndpoint' | 'region'> & {
  outputs: Pick<Deployment['outputs'], 'HostedZoneId' | 'InternalDomain'>;
};

/** A seed agent with the local runtime, running in this process. */
export interface LocalSeed {
  readonly name: string;
  readonly agent: SeedAgent;
  /** The agent's hosting (its sidecars and stand-ins), once the agent has started. */
  readonly hosting: () => LocalHosting;
}

/**
 * A seed of the deployed stack: its backup bucket `gl-backup-<name>` (kept when it is there) and the seed
 * registered through the garden API, as `body` or else `backedSeed(name, networkIndex)` (default 0), which
 * must be new.
 */
export async function registerLocalSeed(input: {
  garden: GardenClient;
  deployment: Pick<SeedDeployment, 'awsEndpoint' | 'region'>;
  name: string;
  networkIndex?: number;
  body?: Record<string, unknown>;
}): Promise<void> {
  const { name, deployment } = input;
  await ensureBucket(emulatorS3(deployment.awsEndpoint, deployment.region), `gl-backup-${name}`);
  const res = await input.garden.request('PUT', `/seeds/${name}`, {
    body: input.body ?? backedSeed(name, input.networkIndex ?? 0),
  });
  if (res.status !== 201)
    throw new Error(`registering seed ${name} answered ${res.status}: ${JSON.stringify(res.body)}`);
}

export type LocalSeedAgentInput = Partial<Omit<LocalSeedAgentOptions, 'seed' | 'garden' | 'workDir'>> & {
  deployment: SeedDeployment;
  /** The garden client the agent talks through (a test may route it through a proxy). */
  garden: GardenClient;
  name: string;
  workDir: string;
};

/**
 * Starts the seed's agent with the local runtime in this process, with the tests' settings: the emulator's
 * credentials (also for its sidecars), owner records through the Route 53 API, a heartbeat a second, the
 * test ownership timings and a delta snapshot a second; `input` overrides any of them.
 */
export async function startLocalSeedAgent(input: LocalSeedAgentInput): Promise<LocalSeed> {
  const { deployment, name, ...overrides } = input;
  const local = localSeedAgent({
    seed: name,
    aws: { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() },
    owner: {
      mode: 'api',
      hostedZoneId: deployment.outputs.HostedZoneId,
      internalDomain: deployment.outputs.InternalDomain,
    },
    backupBucket: `gl-backup-${name}`,
    heartbeatIntervalMs: 1_000,
    pollWaitSeconds: 1,
    sidecar: { ownership: TEST_OWNERSHIP_TIMINGS, deltaSnapshotInterval: 1_000 },
    env: { ...process.env, ...emulatorCredentialsEnv(deployment.region) },
    // etcd, the agent and the garden, not Kubernetes: components that only answer health (real ones: REAL_KUBE_BIN_DIR).
    kubeBinDir: FAKE_KUBE_BIN_DIR,
    ...overrides,
  });
  await local.agent.start();
  return { name, ...local };
}

/** `registerLocalSeed`, then `startLocalSeedAgent`. */
export async function startLocalSeed(
  input: LocalSeedAgentInput & { networkIndex: number; body?: Record<string, unknown> },
): Promise<LocalSeed> {
  const { networkIndex, body, ...agent } = input;
  await registerLocalSeed({
    garden: input.garden,
    deployment: input.deployment,
    name: input.name,
    networkIndex,
    ...(body ? { body } : {}),
  });
  return startLocalSeedAgent(agent);
}

/**
 * A port free on every one of `hosts` (loopback addresses of seeds' load balancers): the one port a shoot's
 * API domain is served on by whichever seed hosts it, as 443 is on real load balancers.
 */
export async function portFreeOn(hosts: readonly [string, ...string[]]): Promise<number> {
  const listen = (port: number, host: string) =>
    new Promise<ReturnType<typeof createServer> | undefined>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(undefined));
      server.listen(port, host, () => resolve(server));
    });
  for (;;) {
    const first = (await listen(0, hosts[0]))!;
    const port = (first.address() as { port: number }).port;
    const others = await Promise.all(hosts.slice(1).map((host) => listen(port, host)));
    const held = [first, ...others].filter((s) => s !== undefined);
    await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
    if (others.every((s) => s !== undefined)) return port;
  }
}
