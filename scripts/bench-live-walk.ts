/**
 * The live path's walk at etcd level (docs/design.md section 5, "The live path"): a shoot's etcd cluster
 * walks from the source seed's members to the destination's under raft (`walkLive` on real etcd 3.4
 * processes on loopback, harness/cluster/live-walk-landscape.ts), filled to each size first, under a
 * writer of 100 writes a second that knows every planned member's address and, as a gRPC client does,
 * writes to those that answer (harness/scenario/endpoint-readiness.ts). Measured per run: the longest
 * time without an acknowledged write while the walk ran (the write-unavailability window), the same
 * writer's longest gap over `BASELINE_MS` just before the walk on the same cluster (what the machine gives
 * an etcd of that size with nothing walking: every member shares its two cores and its disk, which seeds
 * do not), and how long the walk took end to end. Single-member (1 -> 2 -> 1) and three-member
 * (3 -> 4 -> 3, three times) walks. This is the walk alone, the floor of the live path's window; the
 * migration around it (agents, Step Functions, kube-apiserver) is `npm run bench:downtime`'s live path.
 *
 *   npm run bench:live-walk
 *   BENCH_LIVE_WALK_MB=10,100 BENCH_LIVE_WALK_RUNS=2 BENCH_LIVE_WALK_MEMBERS=1 npm run bench:live-walk
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describeLiveStep } from '../core/migration/live-walk.js';
import { walkLive } from '../seed/backup-restore/cluster/live-walk.js';
import { startLiveWalkLandscape } from '../harness/cluster/live-walk-landscape.js';
import { longestGap, startClusterWriter } from '../harness/scenario/cluster-writer.js';
import { aim, startBenchRun, type BenchAim, type Cell } from './bench-results.js';
import { etcdDbSize, fillEtcd, median } from './bench-support.js';

const SIZES_MB = (process.env.BENCH_LIVE_WALK_MB ?? '10,100,500').split(',').map(Number);
const MEMBERS = (process.env.BENCH_LIVE_WALK_MEMBERS ?? '1,3').split(',').map(Number);
const RUNS = Number(process.env.BENCH_LIVE_WALK_RUNS ?? 3);
const epochNow = () => performance.timeOrigin + performance.now();
/** How long the writer runs on the filled cluster before the walk, for the steady-state gap. */
const BASELINE_MS = 10_000;

interface Run {
  readonly windowMs: number;
  /** The writer's longest gap over BASELINE_MS before the walk. */
  readonly steadyMs: number;
  readonly walkMs: number;
  readonly dbBytes: number;
  readonly steps: number;
}

async function walkOnce(members: number, mb: number, run: number): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'gl-bench-live-walk-'));
  const l = await startLiveWalkLandscape({
    dir,
    token: `bench-${members}-${mb}-${run}-${Date.now()}`,
    sources: members,
    destinations: members,
    identities: { source: 'seed-bench-src', destination: 'seed-bench-dst' },
  });
  try {
    await fillEtcd(l.plan[0]!.clientUrl, mb);
    const urls = l.plan.map((m) => m.clientUrl);
    const writer = startClusterWriter({ endpoints: () => urls, prefix: 'bench/live-walk', writesPerSecond: 100 });
    await sleep(1_000);
    const steadyFrom = epochNow();
    await sleep(BASELINE_MS);
    const start = epochNow();
    const timeline: { at: number; step: string }[] = [];
    const { taken: steps } = await walkLive({
      spec: l.spec,
      members: l.plan,
      host: l.host,
      timeoutMs: 600_000,
      onStep: (step) => timeline.push({ at: epochNow(), step: describeLiveStep(step) }),
    });
    const end = epochNow();
    await sleep(1_000);
    const record = await writer.stop();
    // What the walk moved, read once etcd committed its last batch (a status right after a write may lag it).
    const { dbSize } = await etcdDbSize(l.plan.find((m) => m.side === 'destination')!.clientUrl);
    const gap = longestGap(record.acknowledged, start, end);
    const steady = longestGap(record.acknowledged, steadyFrom, start);
    // The step that ended first after the window began: what the window belongs to.
    const during = timeline.find((t) => t.at >= gap.after)?.step ?? 'none';
    const result = { windowMs: gap.ms, steadyMs: steady.ms, walkMs: end - start, dbBytes: dbSize, steps: steps.length };
    console.log(
      `${members} -> ${members} member(s), ${mb} MB (db ${(dbSize / 1e6).toFixed(0)} MB), run ${run}: window ${Math.round(gap.ms)} ms (steady state before it ${Math.round(steady.ms)} ms), walk ${Math.round(result.walkMs)} ms, ${steps.length} steps, window during ${during}, ${record.acknowledged.length} writes acknowledged, ${record.failed} not`,
    );
    return result;
  } finally {
    await l.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const bench = startBenchRun({
  bench: 'live-walk',
  title: 'The live walk',
  command: 'npm run bench:live-walk',
  about:
    "A shoot's etcd cluster walked from the source seed's members to the destination's under raft (learners, " +
    'promotion, leader transfer, removal; real etcd 3.4 on loopback), filled to each size, under a writer of ' +
    '100 writes a second that knows every member and, as a gRPC client, writes to those that answer: the longest ' +
    'time without an acknowledged write during the walk; the same over 10 s just before it, with nothing walking ' +
    "(the machine's own floor for an etcd of that size, every member on its two cores and one disk); and the walk " +
    "end to end. The migration around it is npm run bench:downtime's live path.",
});

const rows: Cell[][] = [];
const aims: BenchAim[] = [];
for (const members of MEMBERS) {
  const medians = new Map<number, number>();
  const steadyMedians = new Map<number, number>();
  for (const mb of SIZES_MB) {
    const runs: Run[] = [];
    for (let run = 1; run <= RUNS; run++) runs.push(await walkOnce(members, mb, run));
    const windows = runs.map((r) => r.windowMs);
    const steadies = runs.map((r) => r.steadyMs);
    steadyMedians.set(mb, median(steadies));
    const walks = runs.map((r) => r.walkMs);
    medians.set(mb, median(windows));
    rows.push([
      `${members} -> ${members}`,
      mb,
      Math.round(median(runs.map((r) => r.dbBytes)) / 1e6),
      RUNS,
      Math.round(median(windows)),
      Math.round(Math.max(...windows)),
      Math.round(median(steadies)),
      Math.round(Math.max(...steadies)),
      Math.round(median(walks)),
    ]);
    aims.push(aim(`${members} member(s), ${mb} MB: window median`, Math.round(median(windows)), '<=', 500, 'ms'));
    aims.push(
      aim(`${members} member(s), ${mb} MB: window maximum`, Math.round(Math.max(...windows)), '<=', 1_000, 'ms'),
    );
  }
  const smallest = medians.get(Math.min(...SIZES_MB));
  const largest = medians.get(Math.max(...SIZES_MB));
  if (SIZES_MB.length > 1 && smallest !== undefined && largest !== undefined && smallest > 0) {
    const ratio = Math.round((largest / smallest) * 100) / 100;
    aims.push(
      aim(
        `${members} member(s): window at ${Math.max(...SIZES_MB)} MB over ${Math.min(...SIZES_MB)} MB`,
        ratio,
        '<=',
        1.3,
        'x',
      ),
    );
    const steadySmall = steadyMedians.get(Math.min(...SIZES_MB)) ?? 0;
    const steadyLarge = steadyMedians.get(Math.max(...SIZES_MB)) ?? 0;
    if (steadySmall > 0)
      console.log(
        `${members} member(s), steady state with nothing walking: longest gap at ${Math.max(...SIZES_MB)} MB over ${Math.min(...SIZES_MB)} MB ${(steadyLarge / steadySmall).toFixed(2)}x`,
      );
  }
}
for (const a of aims)
  console.log(`${a.what}: ${a.value} ${a.unit} (aim ${a.comparison} ${a.aim}: ${a.met ? 'met' : 'NOT met'})`);
bench.save({
  settings: {
    sizesMB: SIZES_MB.join(','),
    members: MEMBERS.join(','),
    runs: RUNS,
    writesPerSecond: 100,
    steadyStateMs: BASELINE_MS,
  },
  tables: [
    {
      title: 'Live walk under writes (ms)',
      columns: [
        'walk',
        'filled (MB)',
        'etcd db (MB)',
        'runs',
        'window, median',
        'window, maximum',
        'steady state, median',
        'steady state, maximum',
        'walk, median',
      ],
      rows,
    },
  ],
  aims,
});
