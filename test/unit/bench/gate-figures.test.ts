import { describe, expect, it } from 'vitest';
import {
  GATE_THROUGHPUT_AIM,
  parseBenchmarkSummary,
  roundOrder,
  summarizeCase,
  type BenchmarkRun,
} from '../../../scripts/gate-figures.js';

/** The end of what etcd's benchmark tool (v3.6, --precise) prints for a run. */
const SUMMARY = `
Summary:
  Total:	2.6106 secs.
  Slowest:	0.0466 secs.
  Fastest:	0.0006 secs.
  Average:	0.0126 secs.
  Stddev:	0.0064 secs.
  Requests/sec:	7660.957312

Response time histogram:
  0.0006 [1]	|
  0.0466 [10]	|

Latency distribution:
  10% in 0.0059 secs.
  50% in 0.011214 secs.
  99% in 0.0327 secs.
  99.9% in 0.0389 secs.
`;

const run = (requestsPerSecond: number, p99Ms = 10): BenchmarkRun => ({
  requestsPerSecond,
  p50Ms: 1,
  p99Ms,
  errors: 0,
});

describe('parseBenchmarkSummary', () => {
  it('reads the throughput and the p50 and p99 latencies (ms), not the 99.9th', () => {
    const r = parseBenchmarkSummary(`1100 / 20000 [--->___] 5.50% ? p/s\n${SUMMARY}`);
    expect(r.requestsPerSecond).toBeCloseTo(7660.957312);
    expect(r.p50Ms).toBeCloseTo(11.214);
    expect(r.p99Ms).toBeCloseTo(32.7);
    expect(r.errors).toBe(0);
  });

  it('counts the failed requests of every kind in the error distribution', () => {
    const r = parseBenchmarkSummary(
      `${SUMMARY}\nError distribution:\n  [3]\trpc error: code = Unavailable\n  [2]\tcontext deadline exceeded\n`,
    );
    expect(r.errors).toBe(5);
  });

  it('takes a run whose every request failed as no throughput, and output without a summary as a failure', () => {
    expect(parseBenchmarkSummary('\nError distribution:\n  [10]\tconnection refused\n')).toMatchObject({
      requestsPerSecond: 0,
      errors: 10,
    });
    expect(() => parseBenchmarkSummary('panic: dial tcp: connection refused')).toThrow(/no summary/);
  });
});

describe('summarizeCase', () => {
  it('compares the medians over the rounds: the ratio is the gate over direct, the aim at least 0.9', () => {
    const s = summarizeCase([run(1000), run(900, 30), run(1100, 20)], [run(950), run(920), run(800)]);
    expect(s.direct.requestsPerSecond).toBe(1000);
    expect(s.direct.p99Ms).toBe(20);
    expect(s.gate.requestsPerSecond).toBe(920);
    expect(s.ratio).toBeCloseTo(0.92);
    expect(s.roundRatios.map((x) => Number(x.toFixed(3)))).toEqual([0.95, 1.022, 0.727]);
    expect(s.aimMet).toBe(true);
    expect(summarizeCase([run(1000)], [run(1000 * GATE_THROUGHPUT_AIM - 1)]).aimMet).toBe(false);
  });
});

describe('roundOrder', () => {
  it('lets the two paths take turns going first', () => {
    expect(roundOrder(1)).toEqual(['direct', 'gate']);
    expect(roundOrder(2)).toEqual(['gate', 'direct']);
    expect(roundOrder(3)).toEqual(['direct', 'gate']);
  });
});
