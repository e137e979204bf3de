import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Listr } from 'listr2';
import { deployGarden, type Deployment } from './deploy.js';
import { ENDPOINTS_FILE, LANDSCAPE_DIR, readEndpoints, type Endpoints } from './landscape-file.js';
import { createShoots, LANDSCAPE_STACK_CONTEXT, registerFleet, startAgents } from './fleet.js';
import { GardenClient } from '../adapters/http/garden-client.js';
import { emulatorScratchDir, startEmulator, waitForHealth, type Emulator } from './emulator.js';
import { signalProcessGroup } from '../seed/agent/process-group.js';
import { freePort, plannedPorts } from '../seed/ports.js';
import { KubeCluster } from './kube/cluster.js';
import { KUBE_SEED, kubeSeedStateFile, startKubeSeed } from './kube/landscape-seed.js';
import { emulatorCredentials } from './aws-env.js';
import { startApiProxy } from './api-proxy-process.js';

const EMULATOR_LOG = join(LANDSCAPE_DIR, 'emulator.log');

/** `npm run start:kube`: one more seed, on the kubernetes runtime, beside the local ones. */
const withKubeSeed = process.argv.includes('--kube-seed') || process.env.GARDENLESS_KUBE_SEED === '1';

async function running(): Promise<Endpoints | undefined> {
  const current = readEndpoints();
  if (!current) return undefined;
  try {
    await waitForHealth(current.awsEndpoint, 2_000);
    return current;
  } catch {
    return undefined;
  }
}

export async function start(): Promise<Endpoints> {
  const existing = await running();
  if (existing) {
    console.log('The local landscape is already running.');
    return existing;
  }
  mkdirSync(LANDSCAPE_DIR, { recursive: true });
  // The seeds' work dirs hold control planes of the garden they were created for: a restarted agent adopts
  // what it finds there, so a new landscape (a new garden) starts with none.
  rmSync(join(LANDSCAPE_DIR, 'seeds'), { recursive: true, force: true });
  interface Ctx {
    emulator?: Emulator;
    deployment?: Deployment;
    agentPids?: Record<string, number>;
    kubeCluster?: Endpoints['kubeCluster'];
    apiProxy?: Endpoints['apiProxy'];
    lbPort?: number;
  }
  const tasks = new Listr<Ctx>(
    [
      {
        title: 'Start the emulator on 127.0.0.1',
        task: async (ctx, task) => {
          const port = Number(process.env.GARDENLESS_EMULATOR_PORT ?? (await freePort()));
          ctx.emulator = await startEmulator({ port, detached: true, logFile: EMULATOR_LOG });
          task.title = `Emulator at ${ctx.emulator.endpoint}${ctx.emulator.owned ? '' : ' (AWS_ENDPOINT_URL, not started here)'}`;
        },
      },
      {
        title: 'Bootstrap and deploy the GardenStack (cdk deploy)',
        task: async (ctx, task) => {
          // The proxy's address goes into every kubeconfig the garden issues, so it is chosen before the deploy.
          const proxyUrl = `http://127.0.0.1:${await freePort()}`;
          ctx.apiProxy = { url: proxyUrl, pid: 0 };
          ctx.deployment = await deployGarden({
            endpoint: ctx.emulator!.endpoint,
            context: { ...LANDSCAPE_STACK_CONTEXT, kubeconfigProxyUrl: proxyUrl },
            onOutput: (line) => (task.output = line),
          });
          task.title = `GardenStack deployed: API ${ctx.deployment.apiUrl}`;
        },
      },
      {
        title: 'Start the proxy that kubeconfigs name, resolving API domains through the Route 53 zone',
        task: async (ctx, task) => {
          const d = ctx.deployment!;
          ctx.apiProxy = startApiProxy({
            url: ctx.apiProxy!.url,
            endpoint: d.awsEndpoint,
            region: d.region,
            hostedZoneId: d.outputs.ApiHostedZoneId!,
            domain: d.outputs.ExternalDomain!,
            log: join(LANDSCAPE_DIR, 'api-proxy.log'),
          });
          task.title = `API-domain proxy at ${ctx.apiProxy.url} (log .landscape/api-proxy.log)`;
        },
      },
      {
        title: 'Register three seeds (two single-zonal, one multi-zonal) with backup buckets',
        task: async (ctx) =>
          registerFleet({
            api: client(ctx.deployment!),
            endpoint: ctx.deployment!.awsEndpoint,
            region: ctx.deployment!.region,
          }),
      },
      {
        title: 'Start a seed agent per seed',
        task: async (ctx, task) => {
          const d = ctx.deployment!;
          // One port for every seed's load balancer, as 443 is on AWS: the API record alone picks the seed.
          ctx.lbPort = (await plannedPorts(1))[0]!;
          ctx.agentPids = startAgents({
            endpoint: d.awsEndpoint,
            region: d.region,
            dir: LANDSCAPE_DIR,
            apiUrl: d.apiUrl,
            hostedZoneId: d.outputs.HostedZoneId,
            internalDomain: d.outputs.InternalDomain,
            lbPort: ctx.lbPort,
          });
          task.title = `Seed agents running: ${Object.keys(ctx.agentPids).join(', ')} (logs in .landscape/agent-*.log)`;
        },
      },
      {
        title: `Start a test seed with a real node and seed ${KUBE_SEED} on it, its agent from the Helm chart`,
        enabled: () => withKubeSeed,
        task: async (ctx, task) => {
          const d = ctx.deployment!;
          const started = await startKubeSeed({
            api: client(d),
            endpoint: d.awsEndpoint,
            region: d.region,
            dir: LANDSCAPE_DIR,
            apiUrl: d.apiUrl,
            hostedZoneId: d.outputs.HostedZoneId,
            internalDomain: d.outputs.InternalDomain,
            lbPort: ctx.lbPort!,
            log: (line) => (task.output = line),
          });
          ctx.kubeCluster = { kubeconfig: started.cluster.kubeconfigPath, stateFile: started.stateFile };
          task.title = `Seed ${KUBE_SEED} on a real node at ${started.cluster.server} (kubectl --kubeconfig ${started.cluster.kubeconfigPath}; agent: kubectl logs -n gardenless-system deploy/gardenless-seed-agent)`;
        },
      },
      {
        title: 'Create shoots (the scheduler places them; each seed agent brings up their etcd)',
        task: async (ctx) => createShoots(client(ctx.deployment!)),
      },
    ],
    { rendererOptions: { collapseSubtasks: false }, exitOnError: true },
  );
  const ctx: Ctx = {};
  try {
    await tasks.run(ctx);
  } catch (error) {
    // Nothing is recorded yet: what did start would run on with no `npm run stop` to find it.
    await stopProcesses({
      agentPids: ctx.agentPids,
      // A node that started before a later step failed is there even though the step never returned it.
      kubeStateFile: kubeSeedStateFile(LANDSCAPE_DIR),
      apiProxyPid: ctx.apiProxy?.pid,
      emulator: ctx.emulator?.owned ? ctx.emulator : undefined,
    });
    throw error;
  }
  const d = ctx.deployment!;
  const endpoints: Endpoints = {
    apiUrl: d.apiUrl,
    awsEndpoint: d.awsEndpoint,
    region: d.region,
    stackName: d.stackName,
    ...(ctx.emulator?.owned && ctx.emulator.pid ? { emulatorPid: ctx.emulator.pid } : {}),
    agentPids: ctx.agentPids ?? {},
    ...(ctx.kubeCluster ? { kubeCluster: ctx.kubeCluster } : {}),
    ...(ctx.apiProxy ? { apiProxy: ctx.apiProxy } : {}),
    outputs: d.outputs,
    startedAt: new Date().toISOString(),
  };
  writeFileSync(ENDPOINTS_FILE, `${JSON.stringify(endpoints, null, 2)}\n`);
  return endpoints;
}

export async function stop(): Promise<void> {
  const current = readEndpoints();
  if (!current) {
    console.log('No local landscape is recorded in .landscape/endpoints.json; nothing to stop.');
    return;
  }
  await stopProcesses({
    agentPids: current.agentPids,
    kubeStateFile: current.kubeCluster?.stateFile,
    apiProxyPid: current.apiProxy?.pid,
    emulator: current.emulatorPid ? { pid: current.emulatorPid, endpoint: current.awsEndpoint } : undefined,
  });
  rmSync(ENDPOINTS_FILE, { force: true });
  console.log(`Stopped the local landscape (emulator ${current.awsEndpoint}).`);
}

/** Agents first (each stops its sidecars and etcds), then the emulator with the Lambda workers it spawned. */
async function stopProcesses(started: {
  agentPids: Record<string, number> | undefined;
  kubeStateFile: string | undefined;
  apiProxyPid: number | undefined;
  emulator: { pid: number | undefined; endpoint: string } | undefined;
}): Promise<void> {
  for (const pid of Object.values(started.agentPids ?? {})) signalProcessGroup(pid, 'SIGTERM');
  // The node's stop ends its pods, the agent's among them, then containerd, the kubelet and the control plane.
  if (started.kubeStateFile && existsSync(started.kubeStateFile))
    await KubeCluster.attach(started.kubeStateFile).stop();
  if (started.apiProxyPid) signalProcessGroup(started.apiProxyPid, 'SIGTERM');
  if (started.emulator?.pid) {
    signalProcessGroup(started.emulator.pid, 'SIGTERM');
    rmSync(emulatorScratchDir(Number(new URL(started.emulator.endpoint).port)), { recursive: true, force: true });
  }
}

function client(d: Deployment): GardenClient {
  return new GardenClient({
    apiUrl: d.apiUrl,
    region: d.region,
    credentials: emulatorCredentials(),
  });
}

function printUsage(e: Endpoints): void {
  console.log(`
gardenless local landscape is up.

  API        ${e.apiUrl}
  AWS        ${e.awsEndpoint} (region ${e.region})
  endpoints  .landscape/endpoints.json

Try it (requests are SigV4-signed with the emulator's test credentials):

  npx gardenless seed apply -f harness/fixtures/seed-aws-eu1.json
  npx gardenless seed list
  npx gardenless shoot list dev
  npm run demo                      # a bad-case migration with live progress and its evidence

Stop it with: npm run stop
`);
}

const command = process.argv[2];
if (command === 'start') printUsage(await start());
else if (command === 'stop') await stop();
else if (command !== undefined) {
  console.error(`usage: tsx local/landscape.ts start|stop`);
  process.exit(2);
}
