import { describe, expect, it } from 'vitest';
import { emptyCallReport } from '../../../adapters/metering/call-meter.js';
import {
  alwaysOnCost,
  alwaysRunningCost,
  jobCost,
  per1000,
  PRICES,
  route53QueryCost,
  SECONDS_PER_MONTH,
  seedSideCost,
  unitCost,
} from '../../../scripts/fleet/cost.js';

describe('the fleet cost model', () => {
  it('prices a job by its rounds a month: invocations, GB-seconds and the capacity units it used', () => {
    // Prepare: a round every 10 s; two invocations of 1 s at 1 GB; 1,000 read and 10 write units.
    const calls = emptyCallReport();
    calls.dynamodb.readUnits = 1_000;
    calls.dynamodb.writeUnits = 10;

    // Act
    const line = jobCost({
      name: 'j',
      periodSeconds: 10,
      invocationsPerRound: 2,
      lambdaMsPerRound: 2_000,
      memoryMb: 1024,
      calls,
    });

    // Assess
    const rounds = SECONDS_PER_MONTH / 10;
    const perRound =
      2 * PRICES.lambdaPerRequest +
      2 * PRICES.lambdaPerGbSecond +
      1_000 * PRICES.dynamoPerReadUnit +
      10 * PRICES.dynamoPerWriteUnit;
    expect(line.usdPerMonth).toBeCloseTo(rounds * perRound, 6);
  });

  it('prices work that happens per occurrence, and a function that runs all month', () => {
    const line = unitCost({
      name: 'u',
      perMonth: 1e6,
      httpApiRequests: 1,
      lambdaInvocations: 1,
      lambdaMs: 1_000,
      memoryMb: 512,
      stepFunctionsTransitions: 10,
      events: 1,
      sqsFifoRequests: 3,
      calls: emptyCallReport(),
    });
    expect(line.usdPerMonth).toBeCloseTo(1 + 0.2 + 0.5 * 16.6667 + 250 + 1 + 1.5, 2);
    expect(alwaysRunningCost('f', 1024).usdPerMonth).toBeCloseTo(
      SECONDS_PER_MONTH * PRICES.lambdaPerGbSecond + (SECONDS_PER_MONTH / 60) * PRICES.lambdaPerRequest,
      6,
    );
  });

  it('prices Route 53 queries beyond a billion at the lower rate', () => {
    expect(route53QueryCost(1e6)).toBeCloseTo(0.4, 9);
    expect(route53QueryCost(2e9)).toBeCloseTo(400 + 200, 6);
  });

  it('prices the seed side per shoot: snapshot uploads, their storage, owner queries, agent polls', () => {
    const lines = seedSideCost({
      shoots: 1_000,
      seeds: 20,
      deltaSnapshotSeconds: 20,
      fullSnapshotMinutes: 60,
      storedMbPerShoot: 1024,
      ownerQueryEverySeconds: 5,
      agentPollSeconds: 5,
    });
    const [puts, storage, queries, polls] = lines.map((l) => l.usdPerMonth);
    expect(puts).toBeCloseTo(1_000 * (SECONDS_PER_MONTH / 20 + 730 * 2) * PRICES.s3PutPerRequest, 6);
    expect(storage).toBeCloseTo(1_000 * PRICES.s3PerGbMonth, 6);
    expect(queries).toBeCloseTo(route53QueryCost((1_000 * SECONDS_PER_MONTH) / 5), 6);
    expect(polls).toBeCloseTo(((20 * SECONDS_PER_MONTH) / 5) * PRICES.sqsFifoPerRequest, 6);
  });

  it('prices the always-on alternative by the hour, and a total per 1,000 shoots', () => {
    expect(alwaysOnCost().usdPerMonth).toBeCloseTo(730 * (0.1 + 3 * 0.096) + 150 * 0.08, 6);
    expect(per1000(500, 10_000)).toBe(50);
  });
});
