/**
 * The pure side of `npm run bench:gate` (scripts/bench-gate.ts): what etcd's benchmark tool printed, one run
 * at a time, and the summary of the rounds per case and path (straight to etcd, or through the sidecar's
 * public gate) with the gate's cost against the direct path of the same run.
 */
import { median } from './bench-stats.js';

/** What one run of etcd's benchmark tool (tools/benchmark, with --precise) reported. */
export interface BenchmarkRun {
  readonly requestsPerSecond: number;
  /** Latency percentiles in milliseconds. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Requests that failed (the tool's "Error distribution"). */
  readonly errors: number;
}

/**
 * Reads the summary the tool prints at the end of a run; throws when there is none (the tool failed
 * before it measured, or printed something else).
 */
export function parseBenchmarkSummary(text: string): BenchmarkRun {
  const rps = /Requests\/sec:\s+([0-9.]+)/.exec(text);
  const p50 = /\n\s*50% in ([0-9.]+) secs/.exec(text);
  const p99 = /\n\s*99% in ([0-9.]+) secs/.exec(text);
  let errors = 0;
  const dist = text.split('\nError distribution:\n')[1];
  if (dist !== undefined) for (const m of dist.matchAll(/^\s*\[(\d+)\]/gm)) errors += Number(m[1]);
  // A run where every request failed has no summary, only errors: its throughput is nothing.
  if ((!rps || !p50 || !p99) && errors > 0) return { requestsPerSecond: 0, p50Ms: NaN, p99Ms: NaN, errors };
  if (!rps || !p50 || !p99) throw new Error(`no summary in the benchmark tool's output: ${text.trim().slice(-500)}`);
  return {
    requestsPerSecond: Number(rps[1]),
    p50Ms: Number(p50[1]) * 1_000,
    p99Ms: Number(p99[1]) * 1_000,
    errors,
  };
}

export type GatePath = 'direct' | 'gate';

/** The rounds of one path of one case: medians over rounds (p50 and p99 are the medians of each run's). */
export interface PathSummary {
  readonly rounds: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
}

export function summarizePath(runs: readonly BenchmarkRun[]): PathSummary {
  return {
    rounds: runs.length,
    requestsPerSecond: median(runs.map((r) => r.requestsPerSecond)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
  };
}

/** The aim: through the gate, at least 90 % of etcd's direct throughput. */
export const GATE_THROUGHPUT_AIM = 0.9;

export interface CaseSummary {
  readonly direct: PathSummary;
  readonly gate: PathSummary;
  /** Median throughput through the gate over the direct median of the same run. */
  readonly ratio: number;
  /** Per round, gate over direct of that round: how much the ratio moves with the machine's load. */
  readonly roundRatios: readonly number[];
  readonly aimMet: boolean;
}

export function summarizeCase(direct: readonly BenchmarkRun[], gate: readonly BenchmarkRun[]): CaseSummary {
  const d = summarizePath(direct);
  const g = summarizePath(gate);
  const ratio = d.requestsPerSecond > 0 ? g.requestsPerSecond / d.requestsPerSecond : NaN;
  const roundRatios = direct
    .slice(0, gate.length)
    .map((r, i) => (r.requestsPerSecond > 0 ? gate[i]!.requestsPerSecond / r.requestsPerSecond : NaN));
  return { direct: d, gate: g, ratio, roundRatios, aimMet: ratio >= GATE_THROUGHPUT_AIM };
}

/** Which path goes first in a round: they take turns, so neither always runs on a machine the other just warmed. */
export function roundOrder(round: number): readonly GatePath[] {
  return round % 2 === 1 ? ['direct', 'gate'] : ['gate', 'direct'];
}
