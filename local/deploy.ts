import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_ACCOUNT, LOCAL_REGION, emulatorEnv } from './aws-env.js';
import { PROJECT_ROOT } from './emulator.js';

export interface GardenOutputs {
  ApiId: string;
  ApiUrl: string;
  TableName: string;
  StateBucketName: string;
  HostedZoneId: string;
  InternalDomain: string;
  EventBusName: string;
  [output: string]: string;
}

export interface Deployment {
  stackName: string;
  region: string;
  awsEndpoint: string;
  /** The API through the emulator's execute-api path. */
  apiUrl: string;
  outputs: GardenOutputs;
}

export interface DeployOptions {
  endpoint: string;
  region?: string;
  stackName?: string;
  /** Receives the CDK CLI's output line by line (progress); silent when absent. */
  onOutput?: (line: string) => void;
  /** CDK context values, e.g. `{ watchdogSchedule: 'false' }`. */
  context?: Record<string, string>;
}

/**
 * Settings of every deployment into the local emulator: the seeds' stand-in load balancers listen on
 * http on loopback, so the garden may probe loopback over http there (never in a real deployment's
 * default); and the emulator's CloudFormation cannot create metric-math alarms, so the Metrics Insights
 * alarm over the seeds' dead-letter queues is left out (the template test asserts it on the default stack).
 */
const LOCAL_CONTEXT: Record<string, string> = { outboundAllow: 'http,loopback', seedDeadLetterAlarm: 'false' };

/** `cdk bootstrap` and `cdk deploy` of the GardenStack into the emulator; returns its outputs. */
export async function deployGarden(options: DeployOptions): Promise<Deployment> {
  const region = options.region ?? LOCAL_REGION;
  const stackName = options.stackName ?? 'Garden';
  const env = { ...process.env, ...emulatorEnv(options.endpoint, region) };
  const work = mkdtempSync(join(tmpdir(), 'gardenless-cdk-'));
  const outputsFile = join(work, 'outputs.json');
  try {
    await cdk(
      ['bootstrap', `aws://${LOCAL_ACCOUNT}/${region}`, '--output', join(work, 'bootstrap.out')],
      env,
      options.onOutput,
    );
    await cdk(
      [
        'deploy',
        stackName,
        '--require-approval',
        'never',
        '--outputs-file',
        outputsFile,
        '--output',
        join(work, 'cdk.out'),
        '--context',
        `stackName=${stackName}`,
        ...Object.entries({ ...LOCAL_CONTEXT, ...options.context }).flatMap(([k, v]) => ['--context', `${k}=${v}`]),
        '--progress',
        'events',
      ],
      env,
      options.onOutput,
    );
    const outputs = (JSON.parse(readFileSync(outputsFile, 'utf8')) as Record<string, GardenOutputs>)[stackName];
    if (!outputs) throw new Error(`cdk deploy wrote no outputs for ${stackName}`);
    return {
      stackName,
      region,
      awsEndpoint: options.endpoint,
      apiUrl: `${options.endpoint}/_aws/execute-api/${outputs.ApiId}`,
      outputs,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function cdk(args: string[], env: NodeJS.ProcessEnv, onOutput?: (line: string) => void): Promise<void> {
  const bin = join(PROJECT_ROOT, 'node_modules', '.bin', 'cdk');
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.trim() || line.includes('Unknown user config')) continue;
        tail.push(line);
        if (tail.length > 40) tail.shift();
        onOutput?.(line);
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`cdk ${args[0]} failed with exit code ${code}:\n${tail.join('\n')}`)),
    );
  });
}
