import type { TestProject } from 'vitest/node';
import { deployGarden, type Deployment } from '../../local/deploy.js';
import { startEmulator } from '../../local/emulator.js';
import { TEST_EXTERNAL_DOMAIN, TEST_STACK_CONTEXT } from '../../harness/timings.js';
import { GardenClient } from '../../adapters/http/garden-client.js';
import { emulatorCredentials } from '../../local/aws-env.js';
import { startProxyAheadOfZone } from '../../local/api-proxy-zone.js';

declare module 'vitest' {
  export interface ProvidedContext {
    deployment: Deployment;
  }
}

/**
 * Starts the emulator on a free loopback port (or uses AWS_ENDPOINT_URL) and really deploys the
 * GardenStack into it with the CDK CLI, once for all integration suites; stops it at the end.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const emulator = await startEmulator({ logFile: `.landscape/test-emulator-${process.pid}.log` });
  // The landscape's API-domain proxy, which every kubeconfig the garden issues names: it listens before the
  // deploy (its address is a stack setting) and reads the zone once the stack has made it.
  const { proxy, resolveThrough } = await startProxyAheadOfZone({ domain: TEST_EXTERNAL_DOMAIN });
  try {
    const deployment = await deployGarden({
      endpoint: emulator.endpoint,
      stackName: 'GardenTest',
      context: { ...TEST_STACK_CONTEXT, kubeconfigProxyUrl: proxy.url },
    });
    resolveThrough({
      endpoint: emulator.endpoint,
      region: deployment.region,
      hostedZoneId: deployment.outputs.ApiHostedZoneId!,
    });
    const warm = await warmUp(deployment);
    console.log(
      `integration: emulator ${emulator.endpoint}, stack deployed in ${Date.now() - started} ms (API warmed: ${warm}), API ${deployment.apiUrl}`,
    );
    project.provide('deployment', deployment);
  } catch (error) {
    await proxy.stop();
    await emulator.stop();
    throw error;
  }
  return async () => {
    await proxy.stop();
    await emulator.stop();
  };
}

/**
 * Starts several execution environments of the API function before any suite runs, a few at a time,
 * so that the first burst of a test does not pay for them all at once on two loaded cores. Signed
 * calls (GET /seeds) run the whole pipeline; 502s of workers still starting are retried here.
 */
async function warmUp(deployment: { apiUrl: string; region: string }): Promise<string> {
  const client = new GardenClient({
    apiUrl: deployment.apiUrl,
    region: deployment.region,
    credentials: emulatorCredentials(),
    timeoutMs: 120_000,
    gatewayRetries: 6,
  });
  const statuses: number[] = [];
  for (let wave = 0; wave < 3; wave++) {
    const res = await Promise.all(Array.from({ length: 6 }, () => client.request('GET', '/seeds')));
    statuses.push(...res.map((r) => r.status));
  }
  const ok = statuses.filter((s) => s === 200).length;
  return `${ok}/${statuses.length} answered 200`;
}
