import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Deployment } from './deploy.js';
import { PROJECT_ROOT } from './emulator.js';

export const LANDSCAPE_DIR = join(PROJECT_ROOT, '.landscape');
export const ENDPOINTS_FILE = join(LANDSCAPE_DIR, 'endpoints.json');

/** What scripts, the CLI and benchmarks read to find the local landscape. */
export interface Endpoints {
  apiUrl: string;
  awsEndpoint: string;
  region: string;
  stackName: string;
  emulatorPid?: number;
  /** Seed agent process groups, by seed. */
  agentPids?: Record<string, number>;
  /** The proxy issued kubeconfigs name (`proxy-url`): it resolves API domains through the Route 53 zone. */
  apiProxy?: { url: string; pid: number };
  /** The test seed with a real node of `npm run start:kube` (its description: `npm run stop` stops it). */
  kubeCluster?: { kubeconfig: string; stateFile: string };
  outputs: Deployment['outputs'];
  startedAt: string;
}

export function readEndpoints(file = ENDPOINTS_FILE): Endpoints | undefined {
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as Endpoints;
}
