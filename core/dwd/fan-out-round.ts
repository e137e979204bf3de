import pLimit from 'p-limit';
import { listAllShootsOnSeed } from '../garden/listing.js';
import type { GardenRepository } from '../garden/repository.js';
import type { Seed } from '../model/seed.js';
import type { Shoot } from '../model/shoot.js';
import { partitionSeeds, type PartitionOptions, DEFAULT_PARTITION_OPTIONS } from './partition.js';
import { runWatchdogRound, type ShootRoundResult, type WatchdogRoundOptions } from './watchdog-round.js';

/** What one partition's invocation is asked: its seeds, and when the round was due. */
export interface PartitionRequest {
  seeds: string[];
  /** The round's due time (epoch ms): a partition that starts an interval late skips it (see `runPartitionRound`). */
  dueAtMs: number;
  intervalSeconds: number;
}

export interface PartitionOutcome {
  seeds: number;
  shoots: number;
  probes: number;
  commands: number;
  acted: { shoot: string; verdict: string; commands: number }[];
  /** Shoots on seeds whose lease expired: not probed, nothing sent (docs/design.md section 8). */
  skipped: { shoot: string; reason: string }[];
  /** The partition started after its round's slot had passed, and did nothing. */
  missed: boolean;
  /** What the invocation asked of AWS (the function's meter), passed through unread. */
  calls?: unknown;
  /** How long the invocation ran (ms), as its handler measured it. */
  durationMs?: number;
}

/** Runs one partition somewhere: in another Lambda invocation on AWS, in-process in tests. */
export interface PartitionRunner {
  run(request: PartitionRequest): Promise<PartitionOutcome>;
}

/**
 * One partition of a watchdog round: its seeds (each read with its lease, one consistent query) and the
 * shoots placed on them (the seed index, paged), then the round as before (`runWatchdogRound`), whose
 * decisions are per shoot: splitting the fleet changes nothing a shoot's decision reads. A partition that
 * starts a whole interval after its round was due does nothing: the thresholds count rounds an interval
 * apart, and a late partition would put two probes of its shoots closer than that.
 */
export async function runPartitionRound(
  options: Omit<WatchdogRoundOptions, 'shoots' | 'seeds'> & { repo: GardenRepository; request: PartitionRequest },
): Promise<PartitionOutcome> {
  const { repo, request, ...round } = options;
  if (round.now.getTime() >= request.dueAtMs + request.intervalSeconds * 1_000)
    return { seeds: request.seeds.length, shoots: 0, probes: 0, commands: 0, acted: [], skipped: [], missed: true };
  const read = pLimit(8);
  const found = await Promise.all(
    request.seeds.map((name) =>
      read(async () => ({ seed: await repo.getSeed(name), shoots: await listAllShootsOnSeed(repo, name) })),
    ),
  );
  const seeds = found.flatMap((f) => (f.seed ? [f.seed] : []));
  const shoots = found.flatMap((f) => f.shoots);
  const results = await runWatchdogRound({ ...round, seeds, shoots });
  return summarize(results, seeds, shoots);
}

function summarize(results: ShootRoundResult[], seeds: readonly Seed[], shoots: readonly Shoot[]): PartitionOutcome {
  const acted = results.filter((r) => r.commands > 0);
  return {
    seeds: seeds.length,
    shoots: shoots.length,
    probes: results.filter((r) => r.external !== undefined).length,
    commands: acted.reduce((n, r) => n + r.commands, 0),
    acted: acted.map((r) => ({ shoot: r.shoot, verdict: r.verdict, commands: r.commands })),
    skipped: results
      .filter((r) => r.verdict === 'seed-lease-expired')
      .map((r) => ({ shoot: r.shoot, reason: r.reason ?? '' })),
    missed: false,
  };
}

export interface FannedOutRound {
  partitions: PartitionRequest[];
  outcomes: PartitionOutcome[];
  /** Partitions whose invocation failed, with why: their shoots are probed again next round. */
  failed: { seeds: string[]; error: string }[];
}

/**
 * One watchdog round over the fleet, fanned out: the seeds and their shoot counts (no lease, no shoot is
 * read here), split into partitions of whole seeds (`partitionSeeds`), each run by `runner` at once. A
 * failed partition fails only itself; the round reports it and the next round probes its shoots again.
 */
export async function runFannedOutRound(options: {
  repo: GardenRepository;
  runner: PartitionRunner;
  dueAtMs: number;
  intervalSeconds: number;
  partitioning?: PartitionOptions;
}): Promise<FannedOutRound> {
  const loads: { seed: string; shoots: number }[] = [];
  let token: string | undefined;
  do {
    const page = await options.repo.listSeeds({ limit: 500, ...(token ? { continue: token } : {}) }, { leases: false });
    loads.push(...page.items.map((s) => ({ seed: s.metadata.name, shoots: s.status.shoots })));
    token = page.continue;
  } while (token);
  const partitions = partitionSeeds(loads, options.partitioning ?? DEFAULT_PARTITION_OPTIONS).map(
    (seeds): PartitionRequest => ({ seeds, dueAtMs: options.dueAtMs, intervalSeconds: options.intervalSeconds }),
  );
  const settled = await Promise.allSettled(partitions.map((p) => options.runner.run(p)));
  const outcomes: PartitionOutcome[] = [];
  const failed: FannedOutRound['failed'] = [];
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') outcomes.push(s.value);
    else
      failed.push({
        seeds: partitions[i]!.seeds,
        error: s.reason instanceof Error ? s.reason.message : String(s.reason),
      });
  });
  return { partitions, outcomes, failed };
}
