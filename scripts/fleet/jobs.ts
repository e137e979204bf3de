/**
 * The garden's periodic jobs as the fleet benchmark drives them: each round is one invocation of the
 * deployed function (the stack is deployed with their schedules off), timed from invoke to return; what it
 * asked of AWS is its own meter's report (`calls` in its answer, functions/shared/metering.ts).
 */
import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { addCallReports, emptyCallReport, type CallReport } from '../../adapters/metering/call-meter.js';
import type { GardenOutputs } from '../../local/deploy.js';

export type JobName = 'watchdog' | 'audit' | 'leaseMonitor' | 'resync' | 'evacuation';

export interface JobSpec {
  readonly name: JobName;
  /** A scheduled invocation runs rounds for its whole minute: it is billed all month whatever a round takes. */
  readonly runsAllMinute: boolean;
  /** How the job is named in tables. */
  readonly title: string;
  /** Its period on AWS (the schedule or the rounds within a scheduled minute). */
  readonly periodSeconds: number;
  readonly output: keyof GardenOutputs;
  readonly payload: Record<string, unknown>;
}

export const JOBS: readonly JobSpec[] = [
  {
    name: 'watchdog',
    runsAllMinute: true,
    title: 'dependency watchdog round',
    periodSeconds: 10,
    output: 'WatchdogFunctionName',
    payload: { rounds: 1 },
  },
  {
    name: 'leaseMonitor',
    runsAllMinute: true,
    title: 'lease monitor round',
    periodSeconds: 5,
    output: 'LeaseMonitorFunctionName',
    payload: { rounds: 1 },
  },
  {
    name: 'resync',
    runsAllMinute: false,
    title: 'lifecycle resync',
    periodSeconds: 60,
    output: 'LifecycleFunctionName',
    payload: { resync: true },
  },
  {
    name: 'evacuation',
    runsAllMinute: false,
    title: 'evacuation controller round',
    periodSeconds: 60,
    output: 'EvacuationFunctionName',
    payload: { round: true },
  },
  {
    name: 'audit',
    runsAllMinute: false,
    title: 'ownership audit',
    periodSeconds: 300,
    output: 'OwnershipAuditFunctionName',
    payload: {},
  },
];

/** One round of one job. */
export interface JobRound {
  job: JobName;
  /** Invoke to return, as the caller saw it (ms). */
  wallMs: number;
  /** Lambda invocations the round made: 1, plus the watchdog's partitions. */
  invocations: number;
  /**
   * Lambda time billed for the round (ms), apart from a function that runs its whole scheduled minute (the
   * watchdog's round function and the lease monitor, priced as such): the watchdog's partitions as they
   * measured themselves, another job's invocation as the caller saw it (an upper bound on the emulator).
   */
  billedMs: number;
  calls: CallReport;
  /** The shoots the round covered where it says (the watchdog's partitions). */
  shoots?: number;
  error?: string;
}

interface JobAnswer {
  calls?: CallReport;
  summaries?: { partitions: number; shoots: number; partitionMs: number; calls: CallReport }[];
}

/** Runs one round of `job` through its deployed function. */
export async function runJobRound(lambda: LambdaClient, outputs: GardenOutputs, job: JobSpec): Promise<JobRound> {
  const t0 = performance.now();
  const res = await lambda.send(
    new InvokeCommand({ FunctionName: outputs[job.output], Payload: Buffer.from(JSON.stringify(job.payload)) }),
  );
  const wallMs = performance.now() - t0;
  const text = Buffer.from(res.Payload ?? new Uint8Array()).toString('utf8');
  if (res.FunctionError)
    return { job: job.name, wallMs, invocations: 1, billedMs: 0, calls: emptyCallReport(), error: text.slice(0, 300) };
  const answer = JSON.parse(text) as JobAnswer;
  if (answer.summaries) {
    const calls = answer.summaries.reduce((all, s) => addCallReports(all, s.calls), emptyCallReport());
    const partitions = answer.summaries.reduce((n, s) => n + s.partitions, 0);
    const shoots = answer.summaries.reduce((n, s) => n + s.shoots, 0);
    const billedMs = answer.summaries.reduce((n, s) => n + s.partitionMs, 0);
    return { job: job.name, wallMs, invocations: 1 + partitions, billedMs, calls, shoots };
  }
  return {
    job: job.name,
    wallMs,
    invocations: 1,
    billedMs: job.runsAllMinute ? 0 : wallMs,
    calls: answer.calls ?? emptyCallReport(),
  };
}
