import middy from '@middy/core';
import { z } from 'zod';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { LambdaPartitionRunner } from '../../adapters/lambda/partition-runner.js';
import { addCallReports, type CallReport } from '../../adapters/metering/call-meter.js';
import { runFannedOutRound } from '../../core/dwd/fan-out-round.js';
import { parseInput } from '../../core/garden/validate.js';
import { logger } from '../shared/logger.js';
import { METRIC } from '../shared/metric-names.js';
import { meteredClients, startMetering, takeCalls } from '../shared/metering.js';
import { MetricUnit, metrics, observability } from '../shared/observability.js';
import { requireEnv } from '../shared/env.js';
import { runRounds } from '../shared/rounds.js';

/** A scheduled invocation runs a minute of rounds; a test or an operator may ask for fewer. */
const input = z
  .object({
    rounds: z.number().int().min(1).max(12).optional(),
    intervalSeconds: z.number().int().min(1).max(60).optional(),
  })
  .passthrough();

const repo = new DynamoGardenRepository({ tableName: requireEnv('TABLE_NAME'), client: meteredClients.dynamodb() });
const runner = new LambdaPartitionRunner({
  client: meteredClients.lambda(),
  functionName: requireEnv('PARTITION_FUNCTION_NAME'),
});
const partitioning = {
  shootsPerPartition: Number(process.env.SHOOTS_PER_PARTITION ?? 500),
  maxPartitions: Number(process.env.MAX_PARTITIONS ?? 100),
};

/** One round as the fleet benchmark and the logs see it. */
export interface WatchdogRoundSummary {
  offset: number;
  wallMs: number;
  partitions: number;
  failedPartitions: number;
  missedPartitions: number;
  seeds: number;
  shoots: number;
  probes: number;
  commands: number;
  /** The partitions' invocations, summed (ms): what they are billed for. */
  partitionMs: number;
  /** This invocation's calls and every partition's, summed. */
  calls: CallReport;
}

/**
 * The dependency-watchdog prober and weeder for the whole fleet, fanned out. EventBridge invokes it every
 * minute; it runs a round every `intervalSeconds` (default 10) within that minute. Each round reads the
 * seeds' names and shoot counts (no lease, no shoot), splits them into partitions of whole seeds and
 * invokes the partition function for each at once (functions/dwd/partition.ts), which reads its seeds and
 * their shoots afresh and probes them. The round ends when every partition has answered: a round is never
 * running twice, and one that runs past its slot makes the next one skip (shared/rounds.ts).
 */
async function watchdog(event: unknown): Promise<{
  rounds: number;
  probes: number;
  commands: number;
  shootsOnSilentSeeds: string[];
  summaries: WatchdogRoundSummary[];
}> {
  startMetering();
  const { rounds, intervalSeconds = 10 } = parseInput(input, event ?? {});
  let probes = 0;
  let sent = 0;
  const silent = new Set<string>();
  const summaries: WatchdogRoundSummary[] = [];
  const failures: string[] = [];
  const planned = await runRounds(
    { what: 'watchdog', intervalSeconds, ...(rounds ? { rounds } : {}) },
    async (offset) => {
      const started = Date.now();
      const round = await runFannedOutRound({ repo, runner, dueAtMs: started, intervalSeconds, partitioning });
      const calls = takeCalls('watchdog round');
      for (const outcome of round.outcomes) {
        probes += outcome.probes;
        sent += outcome.commands;
        for (const s of outcome.skipped) silent.add(s.shoot);
        if (outcome.calls) addCallReports(calls, outcome.calls as CallReport);
      }
      const summary: WatchdogRoundSummary = {
        offset,
        wallMs: Date.now() - started,
        partitions: round.partitions.length,
        failedPartitions: round.failed.length,
        missedPartitions: round.outcomes.filter((o) => o.missed).length,
        seeds: round.outcomes.reduce((n, o) => n + o.seeds, 0),
        shoots: round.outcomes.reduce((n, o) => n + o.shoots, 0),
        probes: round.outcomes.reduce((n, o) => n + o.probes, 0),
        commands: round.outcomes.reduce((n, o) => n + o.commands, 0),
        partitionMs: round.outcomes.reduce((n, o) => n + (o.durationMs ?? 0), 0),
        calls,
      };
      summaries.push(summary);
      logger.info('watchdog round', {
        ...summary,
        acted: round.outcomes.flatMap((o) => o.acted),
        // Shoots on seeds whose lease expired: not probed, nothing sent (docs/design.md section 8, partitions).
        skipped: round.outcomes.flatMap((o) => o.skipped),
      });
      if (round.failed.length > 0) {
        logger.error('watchdog partitions failed', { failed: round.failed });
        failures.push(...round.failed.map((f) => `${f.seeds.join(',')}: ${f.error}`));
      }
    },
  );
  metrics.addMetric(METRIC.watchdogProbes, MetricUnit.Count, probes);
  metrics.addMetric(METRIC.watchdogCommands, MetricUnit.Count, sent);
  // Every round ran; the invocation still fails, so that the function's Errors metric shows a partition that did not.
  if (failures.length > 0)
    throw new Error(`${failures.length} watchdog partition(s) failed: ${failures.slice(0, 5).join('; ')}`);
  return { rounds: planned, probes, commands: sent, shootsOnSilentSeeds: [...silent], summaries };
}

export const handler = middy(watchdog).use(observability());
