/**
 * A child process of `npm run bench:fleet`: real seed agents (`awsSeedAgent` with the control-plane runtime
 * on `MemoryHosting`: no etcd) for the seeds named in argv, each with its own command queue, heartbeat and
 * runtime, plus one loopback HTTP server that answers every external probe of their control planes. It
 * reports to its parent (IPC) the latency of every heartbeat request and every failure of the agents' loops.
 *
 *   fork('scripts/fleet/agents.ts', [JSON.stringify({ seeds, apiUrl, awsEndpoint, region, hostedZoneId, internalDomain })])
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GardenClient, type GardenResponse } from '../../adapters/http/garden-client.js';
import { awsSeedAgent } from '../../seed/agent/aws-agent.js';
import { MemoryHosting } from '../../seed/agent/memory-hosting.js';
import type { SeedAgent } from '../../seed/agent/agent.js';
import { emulatorCredentials } from '../../local/aws-env.js';

export interface AgentsConfig {
  seeds: string[];
  apiUrl: string;
  awsEndpoint: string;
  region: string;
  hostedZoneId: string;
  internalDomain: string;
  heartbeatIntervalMs: number;
}

/** What a child reports every few seconds. */
export interface AgentsReport {
  type: 'report';
  /** Milliseconds of each heartbeat request (POST /seeds/{name}/heartbeat) since the last report. */
  heartbeats: number[];
  /** Heartbeats answered other than 200, and agents' loop failures, since the last report. */
  failures: string[];
  /** External probes answered since the last report. */
  probes: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as AgentsConfig;
const credentials = emulatorCredentials();
let heartbeats: number[] = [];
let failures: string[] = [];
let probes = 0;

/** The garden client the agents use, timing their heartbeats. */
class TimedGardenClient extends GardenClient {
  override async request<T = unknown>(
    method: string,
    path: string,
    options: Parameters<GardenClient['request']>[2] = {},
  ): Promise<GardenResponse<T>> {
    if (!path.endsWith('/heartbeat')) return super.request<T>(method, path, options);
    const t0 = performance.now();
    const res = await super.request<T>(method, path, options);
    heartbeats.push(performance.now() - t0);
    if (res.status !== 200) failures.push(`${path}: ${res.status}`);
    return res;
  }
}

const server = createServer((_req, res) => {
  probes += 1;
  res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const externalBaseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const garden = new TimedGardenClient({ apiUrl: config.apiUrl, region: config.region, credentials, timeoutMs: 60_000 });
const agents: SeedAgent[] = config.seeds.map((seed) =>
  awsSeedAgent({
    seed,
    garden,
    aws: { endpoint: config.awsEndpoint, region: config.region, credentials },
    heartbeatIntervalMs: config.heartbeatIntervalMs,
    backupBucket: `gl-backup-${seed}`,
    owner: { mode: 'api', hostedZoneId: config.hostedZoneId, internalDomain: config.internalDomain },
    hosting: () => new MemoryHosting({ externalBaseUrl }),
  }),
);
/** An agent's start, again after a failed first heartbeat (a gateway 502 or a timeout on a loaded machine). */
async function start(agent: SeedAgent): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await agent.start();
    } catch (error) {
      if (attempt >= 10) throw error;
      failures.push(`${agent.seed}: start: ${error instanceof Error ? error.message : String(error)}`);
      await new Promise((r) => setTimeout(r, 2_000 * attempt));
    }
  }
}

// Started a few at a time: each first heartbeat is a registration the garden answers with the queue.
for (let i = 0; i < agents.length; i += 10) await Promise.all(agents.slice(i, i + 10).map(start));
let seen = agents.map(() => 0);

const report = setInterval(() => {
  agents.forEach((a, k) => {
    for (const e of a.errors.slice(seen[k])) failures.push(`${a.seed}: ${e.message}`);
  });
  seen = agents.map((a) => a.errors.length);
  const message: AgentsReport = { type: 'report', heartbeats, failures, probes };
  heartbeats = [];
  failures = [];
  probes = 0;
  process.send?.(message);
}, 5_000);

process.send?.({ type: 'ready', seeds: config.seeds.length });
process.on('message', (message: { type?: string }) => {
  if (message.type !== 'stop') return;
  clearInterval(report);
  void Promise.all(agents.map((a) => a.stop())).finally(() => {
    server.close();
    process.exit(0);
  });
});
process.on('disconnect', () => process.exit(0));
