/**
 * Benchmark results as data: every benchmark records what it measured in `bench/results/<bench>.json`, with
 * the commit, the machine and the load it ran under, and `npm run docs` renders docs/benchmarks.md from those
 * files (scripts/benchmarks-doc.ts). Prose links to the rendered tables; no figure is copied by hand.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';

export const RESULTS_DIR = join(import.meta.dirname, '..', 'bench', 'results');

/** A cell: a figure (rendered with thousands separators and its column's unit), a word, or nothing. */
export type Cell = number | string | null;

/** A cell as every document shows it: `decimals` places, or none for an integer and one otherwise. */
export function formatCell(value: Cell, decimals: number | undefined): string {
  if (value === null) return '-';
  if (typeof value === 'string') return value;
  const places = decimals ?? (Number.isInteger(value) ? 0 : 1);
  return new Intl.NumberFormat('en-US', { minimumFractionDigits: places, maximumFractionDigits: places }).format(value);
}

export interface BenchTable {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly Cell[])[];
  /** Decimals for numeric cells, per column (default: 0 for integers, 1 otherwise). */
  readonly decimals?: readonly (number | undefined)[];
}

/** A target the benchmark checks: `value` against `aim` by `comparison`. */
export interface BenchAim {
  readonly what: string;
  readonly value: number;
  readonly aim: number;
  readonly unit: string;
  readonly comparison: '<=' | '>=';
  readonly met: boolean;
}

export interface BenchMachine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly platform: string;
}

export interface BenchLoad {
  /** The 1-, 5- and 15-minute load averages when the benchmark began. */
  readonly atStart: readonly number[];
  /** The lowest and highest 1-minute load average sampled every 10 s while it ran. */
  readonly oneMinuteRange: readonly [number, number];
}

export interface BenchResult {
  readonly bench: string;
  readonly title: string;
  readonly command: string;
  /** What it measures, in a sentence or two; the method in full lives in the script's header. */
  readonly about: string;
  readonly commit: string;
  /** The working tree had uncommitted changes when it ran. */
  readonly dirty: boolean;
  readonly ranAt: string;
  readonly durationSeconds: number;
  readonly machine: BenchMachine;
  readonly load: BenchLoad;
  /** The settings it ran with (sizes, runs, environment overrides). */
  readonly settings: Readonly<Record<string, string | number | boolean>>;
  readonly tables: readonly BenchTable[];
  readonly aims: readonly BenchAim[];
}

export interface BenchRunInfo {
  readonly bench: string;
  readonly title: string;
  readonly command: string;
  readonly about: string;
}

export function aim(what: string, value: number, comparison: '<=' | '>=', target: number, unit: string): BenchAim {
  return {
    what,
    value,
    aim: target,
    unit,
    comparison,
    met: comparison === '<=' ? value <= target : value >= target,
  };
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: join(import.meta.dirname, '..'), encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

function machine(): BenchMachine {
  const cores = cpus();
  return {
    cpus: cores.length,
    cpuModel: cores[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Begins a benchmark's record: the load is sampled from now on. `save` writes the file and returns its
 * path; `BENCH_RESULTS_FILE` names another file (a run with settings that should not replace the
 * committed one), `BENCH_RESULTS=off` writes none.
 */
export function startBenchRun(info: BenchRunInfo): {
  save(result: Pick<BenchResult, 'settings' | 'tables' | 'aims'>): string | undefined;
} {
  const started = Date.now();
  // The commit it runs is the one checked out when it starts: the tree may move on while it runs.
  const commit = git(['rev-parse', '--short=12', 'HEAD']) || 'unknown';
  const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
  const atStart = loadavg().map(round2);
  let low = atStart[0]!;
  let high = atStart[0]!;
  const sampler = setInterval(() => {
    const one = round2(loadavg()[0]!);
    low = Math.min(low, one);
    high = Math.max(high, one);
  }, 10_000);
  sampler.unref();
  return {
    save(result) {
      clearInterval(sampler);
      const one = round2(loadavg()[0]!);
      const record: BenchResult = {
        ...info,
        commit,
        dirty,
        ranAt: new Date(started).toISOString(),
        durationSeconds: Math.round((Date.now() - started) / 1000),
        machine: machine(),
        load: { atStart, oneMinuteRange: [Math.min(low, one), Math.max(high, one)] },
        ...result,
      };
      if (process.env.BENCH_RESULTS === 'off') return undefined;
      const file = process.env.BENCH_RESULTS_FILE ?? join(RESULTS_DIR, `${info.bench}.json`);
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
      console.log(`results: ${file} (render docs/benchmarks.md with npm run docs)`);
      return file;
    },
  };
}
