import type { TestProject } from 'vitest/node';
import { deployGarden, type Deployment } from '../../local/deploy.js';
import { startEmulator } from '../../local/emulator.js';
import { TEST_OWNERSHIP_TIMINGS } from './timings.js';

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
  try {
    // Tests drive the watchdog's rounds themselves; a scheduled round in between would count twice.
    const deployment = await deployGarden({ endpoint: emulator.endpoint, stackName: 'GardenTest', context: {
      watchdogSchedule: 'false',
      // Short waits, so that a silent source is given up in seconds (DESIGN: tests use seconds).
      migrationCommandTimeoutSeconds: '15',
      migrationWaitFinalSnapshotSeconds: '20',
      seedHeartbeatIntervalSeconds: '2',
      // The scenario sidecars check every 0.5 s with a 5 s grace; the copy's fence bound follows from these,
      // and a copy waits 15 s for a final snapshot that a dead source never writes.
      ownershipTimings: JSON.stringify(TEST_OWNERSHIP_TIMINGS),
      copyWaitForFinalSeconds: '15',
    } });
    console.log(`integration: emulator ${emulator.endpoint}, stack deployed in ${Date.now() - started} ms, API ${deployment.apiUrl}`);
    project.provide('deployment', deployment);
  } catch (error) {
    await emulator.stop();
    throw error;
  }
  return () => emulator.stop();
}
