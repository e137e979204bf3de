/**
 * Prints how long one scheduling decision takes over 1,000 and 10,000 seeds, and the throughput of 10,000
 * decisions. Figures, not a test: `npx tsx scripts/bench-scheduler.ts` (or `npm run bench:scheduler`).
 * Target (issue 3): at most 5 ms per decision at 10,000 seeds.
 *
 * The fleet is synthetic but not kind: every seed has its own networks (so every CIDR is parsed), a mix of
 * providers, regions, zones, taints, labels and capacities, and a share of seeds that are full or not ready.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Seed, ShootSpec } from '../core/model/index.js';
import {
  deriveSeedLabels,
  indexSeeds,
  schedule,
  type RegionStrategy,
  type ScheduleOptions,
} from '../core/scheduling/index.js';
import { aim, startBenchRun, type BenchAim } from './bench-results.js';
import { median, percentile } from './bench-stats.js';

const PROVIDERS = ['aws', 'aws', 'aws', 'gcp', 'azure'];
const REGIONS = [
  'eu-west-1',
  'eu-central-1',
  'eu-north-1',
  'us-east-1',
  'us-west-2',
  'ap-southeast-1',
  'ap-northeast-1',
  'sa-east-1',
  'europe-west1',
  'asia-east1',
];

/** A small deterministic PRNG, so that every run measures the same fleet. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeSeed(i: number, random: () => number): Seed {
  const provider = PROVIDERS[i % PROVIDERS.length]!;
  const region = REGIONS[Math.floor(random() * REGIONS.length)]!;
  const zoneCount = 1 + Math.floor(random() * 3) * 2; // 1, 3 or 5 zones
  const zones = Array.from({ length: zoneCount }, (_, z) => `${region}${String.fromCharCode(97 + z)}`);
  // Seed networks inside 10.0.0.0/8, distinct per seed: /20 blocks.
  const block = (i * 3) % 4096;
  const cidr = (k: number) => `10.${((block + k) >> 4) & 255}.${((block + k) & 15) << 4}.0/20`;
  const capacity = 50 + Math.floor(random() * 200);
  const spec: Seed['spec'] = {
    provider: { type: provider, region, zones },
    networks: { nodes: cidr(0), pods: cidr(1), services: cidr(2) },
    capacity: { shoots: capacity },
    workerPools: [{ name: 'cp', zones, minimum: 3, taints: [] }],
    ...(random() < 0.1 ? { taints: [{ key: 'seed.gardener.cloud/protected' }] } : {}),
  };
  const derived = deriveSeedLabels(spec, { env: random() < 0.5 ? 'prod' : 'dev' });
  if (!derived.ok) throw new Error(derived.message);
  const ready = random() < 0.95 ? 'True' : 'False';
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Seed',
    metadata: {
      name: `seed-${String(i).padStart(5, '0')}`,
      labels: derived.labels,
      resourceVersion: '1',
      uid: `uid-${i}`,
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    spec,
    status: {
      identity: `seed-${i}`,
      conditions: [
        { type: 'GardenletReady', status: ready },
        { type: 'BackupBucketsReady', status: 'True' },
      ],
      // About one seed in ten is full.
      shoots: Math.min(capacity, Math.floor(random() * capacity * 1.1)),
      labels: derived.labels,
    },
  };
}

function makeFleet(size: number): Seed[] {
  const random = mulberry32(size);
  return Array.from({ length: size }, (_, i) => makeSeed(i, random));
}

const SHOOTS: ShootSpec[] = [
  {
    provider: { type: 'aws' },
    region: 'eu-west-1',
    networking: { nodes: '192.168.0.0/16', pods: '100.96.0.0/11', services: '100.64.0.0/13' },
  },
  {
    provider: { type: 'aws' },
    region: 'eu-central-1',
    controlPlane: { highAvailability: { failureTolerance: { type: 'zone' } } },
    networking: { pods: '100.96.0.0/11' },
  },
  {
    provider: { type: 'aws' },
    region: 'us-east-2',
    seedSelector: { providerTypes: ['*'] },
    tolerations: [{ key: 'seed.gardener.cloud/protected' }],
  },
  // Overlaps the fleet's networks, so many seeds are rejected with a reason built per seed.
  { provider: { type: 'gcp' }, region: 'europe-west1', networking: { nodes: '10.0.0.0/12' } },
];

/** `explain`: also read every candidate and rejection, as a dry run or an unschedulable shoot does. */
function timeDecisions(make: (k: number) => ScheduleOptions, runs: number, explain = false): number[] {
  const times: number[] = [];
  for (let k = 0; k < runs; k++) {
    const options = make(k);
    const start = performance.now();
    const result = schedule(options);
    if (explain && result.candidates.length + result.rejected.length !== result.total)
      throw new Error('explanation lost a seed');
    times.push(performance.now() - start);
  }
  return times;
}

const ms = (v: number) => `${v.toFixed(3)} ms`;
const strategies: RegionStrategy[] = ['SameRegion', 'MinimalDistance'];
const DECISIONS = Number(process.env.BENCH_DECISIONS ?? 1_000);
const WARM_UP = 50;
const AIM_MS = 5;

const record = startBenchRun({
  bench: 'scheduler',
  title: 'Scheduler',
  command: 'npm run bench:scheduler',
  about:
    'One decision of the pure scheduler (every filter, then scoring) over a synthetic fleet, after warm-up: with the ' +
    'fleet indexed once and kept (CIDRs parsed), indexing inside the decision (raw seeds), and with every ' +
    'rejection sentence built (a dry run); then the throughput of decisions over 10,000 seeds.',
});
const rows: (string | number)[][] = [];
const aims: BenchAim[] = [];
console.log(
  `scheduler benchmark, node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} (1 min); ${DECISIONS} decisions per size and kind, after ${WARM_UP} warm-up decisions`,
);
for (const size of [1_000, 10_000]) {
  const fleet = makeFleet(size);
  const index = indexSeeds(fleet);
  const options = (k: number, seeds: Seed[] | typeof index): ScheduleOptions => ({
    shoot: { spec: SHOOTS[k % SHOOTS.length]! },
    seeds,
    strategy: strategies[(k >> 2) % 2]!,
    excludeSeeds: ['seed-00001'],
  });
  timeDecisions((k) => options(k, index), WARM_UP);
  const prepared = timeDecisions((k) => options(k, index), DECISIONS);
  const raw = timeDecisions((k) => options(k, fleet), DECISIONS);
  const explained = timeDecisions((k) => options(k, index), DECISIONS, true);
  rows.push([
    `${size.toLocaleString('en-US')} seeds`,
    median(prepared),
    percentile(prepared, 95),
    median(raw),
    median(explained),
  ]);
  if (size === 10_000)
    aims.push(aim('median decision at 10,000 seeds, kept index', median(prepared), '<=', AIM_MS, 'ms'));
  console.log(
    `${String(size).padStart(6)} seeds: median decision ${ms(median(prepared))} with a kept SeedIndex (p95 ${ms(prepared.sort((a, b) => a - b)[Math.floor(prepared.length * 0.95)]!)}), ` +
      `${ms(median(raw))} from raw seeds (indexing included, ${ms(median(raw) - median(prepared))} more), ${ms(median(explained))} with the full explanation (dry run)` +
      (size === 10_000
        ? `; aim at most ${AIM_MS} ms per decision with a kept index: ${median(prepared) <= AIM_MS ? 'met' : 'NOT met'}`
        : ''),
  );
}

{
  const fleet = makeFleet(10_000);
  const index = indexSeeds(fleet);
  const decisions = 10_000;
  const start = performance.now();
  for (let k = 0; k < decisions; k++) {
    schedule({ shoot: { spec: SHOOTS[k % SHOOTS.length]! }, seeds: index, strategy: strategies[(k >> 2) % 2]! });
  }
  const seconds = (performance.now() - start) / 1000;
  record.save({
    settings: { decisions: DECISIONS, warmUp: WARM_UP },
    tables: [
      {
        title: 'One decision (ms)',
        columns: ['fleet', 'kept index, median', 'kept index, p95', 'raw seeds, median', 'dry run, median'],
        rows,
        decimals: [undefined, 3, 3, 3, 3],
      },
      {
        title: 'Throughput',
        columns: ['decisions', 'fleet', 'seconds', 'decisions/s'],
        rows: [[decisions, 10_000, seconds, Math.round(decisions / seconds)]],
        decimals: [0, 0, 2, 0],
      },
    ],
    aims,
  });
  console.log(
    `throughput: ${decisions} decisions over 10,000 seeds in ${seconds.toFixed(2)} s = ${Math.round(decisions / seconds)} decisions/s`,
  );
}
