/**
 * The fleet's monthly AWS cost, priced from the calls the fleet benchmark counted (`npm run bench:fleet`).
 *
 * Region: us-east-1 (N. Virginia). Prices: the public on-demand list prices on each service's AWS pricing page
 * as of PRICES_AS_OF, without free tiers, savings plans or volume tiers beyond those named. Re-check them
 * before quoting a figure: AWS changes prices (DynamoDB on-demand halved on 2024-11-01).
 *
 * What is priced: Lambda requests and GB-seconds, Step Functions Standard state transitions, DynamoDB
 * on-demand read and write request units and storage, API Gateway HTTP API requests, EventBridge custom
 * events, SQS requests, S3 requests and storage of the stated snapshot volume, Route 53 hosted zones and DNS
 * queries. Not priced: CloudWatch Logs and metrics, X-Ray, KMS, data transfer, and the seeds' own clusters.
 */
import { callsOf, type CallReport } from '../../adapters/metering/call-meter.js';

export const PRICES_AS_OF = '2025-06';
export const PRICE_REGION = 'us-east-1';

/** USD. */
export const PRICES = {
  lambdaPerRequest: 0.2 / 1e6,
  lambdaPerGbSecond: 0.0000166667,
  stepFunctionsPerTransition: 0.025 / 1e3,
  dynamoPerReadUnit: 0.125 / 1e6,
  dynamoPerWriteUnit: 0.625 / 1e6,
  dynamoPerGbMonth: 0.25,
  httpApiPerRequest: 1.0 / 1e6,
  eventBridgePerEvent: 1.0 / 1e6,
  sqsStandardPerRequest: 0.4 / 1e6,
  sqsFifoPerRequest: 0.5 / 1e6,
  s3PutPerRequest: 0.005 / 1e3,
  s3GetPerRequest: 0.0004 / 1e3,
  s3PerGbMonth: 0.023,
  route53PerHostedZoneMonth: 0.5,
  /** Standard queries, first billion a month; $0.20 per million beyond. */
  route53PerQuery: 0.4 / 1e6,
  route53PerQueryAboveBillion: 0.2 / 1e6,
  /** The always-on alternative: an EKS control plane and three m6i.large nodes with 50 GB gp3 each. */
  eksControlPlanePerHour: 0.1,
  m6iLargePerHour: 0.096,
  gp3PerGbMonth: 0.08,
} as const;

export const SECONDS_PER_MONTH = 730 * 3600;

/** One periodic job, per round, as the benchmark measured it. */
export interface JobCostInput {
  readonly name: string;
  readonly periodSeconds: number;
  readonly invocationsPerRound: number;
  /** Billed Lambda time of a round (ms, every invocation of it). */
  readonly lambdaMsPerRound: number;
  readonly memoryMb: number;
  readonly calls: CallReport;
}

/** Work priced per occurrence (a heartbeat, an API request, a lifecycle operation, a migration). */
export interface UnitCostInput {
  readonly name: string;
  readonly perMonth: number;
  readonly httpApiRequests: number;
  readonly lambdaInvocations: number;
  readonly lambdaMs: number;
  readonly memoryMb: number;
  readonly stepFunctionsTransitions: number;
  readonly events: number;
  readonly sqsFifoRequests: number;
  readonly calls: CallReport;
}

/** What the seeds' sidecars and agents ask of AWS, the same whichever garden runs. */
export interface SeedSideInput {
  readonly shoots: number;
  readonly seeds: number;
  /** A sidecar uploads a delta every this many seconds (etcd-backup-restore's default 20 s). */
  readonly deltaSnapshotSeconds: number;
  readonly fullSnapshotMinutes: number;
  /** Megabytes a shoot keeps in its backup bucket (full snapshots and deltas retained). */
  readonly storedMbPerShoot: number;
  /** DNS owner mode: a query reaches Route 53 once per record TTL or check interval, whichever is longer. */
  readonly ownerQueryEverySeconds: number;
  /** An agent's SQS long poll returns at least this often. */
  readonly agentPollSeconds: number;
}

export interface CostLine {
  readonly item: string;
  readonly usdPerMonth: number;
}

const gbSeconds = (ms: number, memoryMb: number) => (ms / 1000) * (memoryMb / 1024);

/** The DynamoDB, SQS, Step Functions, EventBridge and Lambda API calls of a report, priced. */
function callsCost(calls: CallReport): number {
  return (
    calls.dynamodb.readUnits * PRICES.dynamoPerReadUnit +
    calls.dynamodb.writeUnits * PRICES.dynamoPerWriteUnit +
    callsOf(calls, 'SQS') * PRICES.sqsFifoPerRequest +
    (calls.calls['EventBridge.PutEvents'] ?? 0) * PRICES.eventBridgePerEvent +
    (calls.calls['StepFunctions.StartExecution'] ?? 0) * PRICES.stepFunctionsPerTransition
  );
  // Route 53 API calls and Lambda Invoke calls cost nothing themselves; the invoked function is priced as Lambda.
}

export function jobCost(job: JobCostInput): CostLine {
  const rounds = SECONDS_PER_MONTH / job.periodSeconds;
  const perRound =
    job.invocationsPerRound * PRICES.lambdaPerRequest +
    gbSeconds(job.lambdaMsPerRound, job.memoryMb) * PRICES.lambdaPerGbSecond +
    callsCost(job.calls);
  return { item: job.name, usdPerMonth: rounds * perRound };
}

export function unitCost(unit: UnitCostInput): CostLine {
  const each =
    unit.httpApiRequests * PRICES.httpApiPerRequest +
    unit.lambdaInvocations * PRICES.lambdaPerRequest +
    gbSeconds(unit.lambdaMs, unit.memoryMb) * PRICES.lambdaPerGbSecond +
    unit.stepFunctionsTransitions * PRICES.stepFunctionsPerTransition +
    unit.events * PRICES.eventBridgePerEvent +
    unit.sqsFifoRequests * PRICES.sqsFifoPerRequest +
    callsCost(unit.calls);
  return { item: unit.name, usdPerMonth: unit.perMonth * each };
}

/** A function a scheduled invocation keeps running for its whole minute (rounds within it): billed all month. */
export function alwaysRunningCost(name: string, memoryMb: number): CostLine {
  return {
    item: `${name} (runs its whole scheduled minute)`,
    usdPerMonth:
      gbSeconds(SECONDS_PER_MONTH * 1000, memoryMb) * PRICES.lambdaPerGbSecond +
      (SECONDS_PER_MONTH / 60) * PRICES.lambdaPerRequest,
  };
}

export function tableStorageCost(bytes: number): CostLine {
  return { item: 'DynamoDB storage', usdPerMonth: (bytes / 2 ** 30) * PRICES.dynamoPerGbMonth };
}

/** Route 53 queries of a month, with the cheaper rate beyond the first billion. */
export function route53QueryCost(queries: number): number {
  const first = Math.min(queries, 1e9);
  return first * PRICES.route53PerQuery + (queries - first) * PRICES.route53PerQueryAboveBillion;
}

export function seedSideCost(input: SeedSideInput): CostLine[] {
  const perShootPuts =
    SECONDS_PER_MONTH / input.deltaSnapshotSeconds + (SECONDS_PER_MONTH / 60 / input.fullSnapshotMinutes) * 2;
  const ownerQueries = (input.shoots * SECONDS_PER_MONTH) / input.ownerQueryEverySeconds;
  return [
    {
      item: `S3 snapshot uploads (a delta every ${input.deltaSnapshotSeconds} s, a full every ${input.fullSnapshotMinutes} min per shoot)`,
      usdPerMonth: input.shoots * perShootPuts * PRICES.s3PutPerRequest,
    },
    {
      item: `S3 storage (${input.storedMbPerShoot} MB of snapshots per shoot)`,
      usdPerMonth: ((input.shoots * input.storedMbPerShoot) / 1024) * PRICES.s3PerGbMonth,
    },
    {
      item: `Route 53 owner-record queries (DNS mode, one per shoot every ${input.ownerQueryEverySeconds} s)`,
      usdPerMonth: route53QueryCost(ownerQueries),
    },
    {
      item: `SQS long polls of the seed agents (every ${input.agentPollSeconds} s)`,
      usdPerMonth: ((input.seeds * SECONDS_PER_MONTH) / input.agentPollSeconds) * PRICES.sqsFifoPerRequest,
    },
  ];
}

/** The garden's controllers on an always-on three-node Kubernetes cluster instead. */
export function alwaysOnCost(): CostLine {
  const hours = SECONDS_PER_MONTH / 3600;
  return {
    item: 'EKS control plane + 3 x m6i.large + 3 x 50 GB gp3, on demand',
    usdPerMonth: hours * (PRICES.eksControlPlanePerHour + 3 * PRICES.m6iLargePerHour) + 150 * PRICES.gp3PerGbMonth,
  };
}

export const sum = (lines: readonly CostLine[]) => lines.reduce((n, l) => n + l.usdPerMonth, 0);

/** Dollars per month for every 1,000 shoots of a fleet of `shoots`. */
export const per1000 = (usd: number, shoots: number) => (usd * 1000) / shoots;
