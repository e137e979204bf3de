/**
 * Renders docs/benchmarks.md from bench/results/*.json (scripts/bench-results.ts writes them), and the figures
 * other documents cite (scripts/doc-figures.ts). `npm run docs` runs it; `--check` exits 1 when a committed
 * document differs, and a unit test does the same.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderFigures } from './doc-figures.js';
import {
  formatCell,
  RESULTS_DIR,
  type BenchAim,
  type BenchResult,
  type BenchTable,
  type Cell,
} from './bench-results.js';

export const BENCHMARKS_DOC_PATH = join(import.meta.dirname, '..', 'docs', 'benchmarks.md');
/** Documents whose prose cites figures of the results (scripts/doc-figures.ts). */
export const FIGURE_DOCS = [join(import.meta.dirname, '..', 'README.md')];

/** The page's order and the benchmarks it expects: one without results says how to produce them. */
export const BENCHMARKS: readonly { bench: string; title: string; command: string }[] = [
  { bench: 'first-run', title: 'First run', command: 'npm run bench:first-run' },
  { bench: 'test-node', title: "The test seed's real node", command: 'npm run bench:test-node' },
  { bench: 'control-plane', title: 'A control plane on the local runtime', command: 'npm run bench:control-plane' },
  { bench: 'downtime', title: 'Migration downtime', command: 'npm run bench:downtime' },
  { bench: 'live-walk', title: 'The live walk', command: 'npm run bench:live-walk' },
  { bench: 'fencing', title: 'Fencing', command: 'npm run bench:fencing' },
  { bench: 'gate', title: 'The public gate', command: 'npm run bench:gate' },
  { bench: 'evacuation', title: 'Evacuation of a killed seed', command: 'npm run bench:evacuation' },
  { bench: 'early-switch', title: 'Early switch to the bad path', command: 'npm run bench:early-switch' },
  { bench: 'migration', title: 'Migration orchestration', command: 'npm run bench:migration' },
  { bench: 'copy', title: 'Snapshot copy', command: 'npm run bench:copy' },
  { bench: 'restore', title: 'Restore', command: 'npm run bench:restore' },
  { bench: 'failover', title: 'HA etcd', command: 'npm run bench:failover' },
  { bench: 'api', title: 'Garden API', command: 'npm run bench:api' },
  { bench: 'scheduler', title: 'Scheduler', command: 'npm run bench:scheduler' },
  { bench: 'dwd', title: 'Dependency watchdog', command: 'npm run bench:dwd' },
  { bench: 'fleet', title: 'Fleet', command: 'npm run bench:fleet' },
  { bench: 'cli', title: 'CLI start', command: 'npm run bench:cli' },
];

export function readResults(dir = RESULTS_DIR): BenchResult[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as BenchResult);
}

const GROUPED = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });

function cell(value: Cell, decimals: number | undefined): string {
  return formatCell(value, decimals).replaceAll('|', '\\|');
}

function table(t: BenchTable): string[] {
  return [
    `**${t.title}**`,
    '',
    `| ${t.columns.join(' | ')} |`,
    `| ${t.columns.map(() => '---').join(' | ')} |`,
    ...t.rows.map((row) => `| ${row.map((c, i) => cell(c, t.decimals?.[i])).join(' | ')} |`),
    '',
  ];
}

function aimLine(a: BenchAim): string {
  const value = `${GROUPED.format(a.value)} ${a.unit}`.trim();
  const target = `${a.comparison === '<=' ? 'at most' : 'at least'} ${GROUPED.format(a.aim)} ${a.unit}`.trim();
  return `- ${a.what}: ${value} (aim ${target}): **${a.met ? 'met' : 'not met'}**`;
}

function settings(s: BenchResult['settings']): string {
  const entries = Object.entries(s);
  return entries.length === 0 ? 'defaults' : entries.map(([k, v]) => `\`${k}\` ${String(v)}`).join(', ');
}

function section(spec: (typeof BENCHMARKS)[number], r: BenchResult | undefined): string[] {
  const head = [`## ${spec.title}`, '', `\`${spec.command}\``, ''];
  if (!r) return [...head, 'No results recorded yet: run the command above.', ''];
  const m = r.machine;
  const [low, high] = r.load.oneMinuteRange;
  return [
    ...head,
    r.about,
    '',
    `Ran ${r.ranAt.slice(0, 16).replace('T', ' ')} UTC for ${GROUPED.format(r.durationSeconds)} s at commit ` +
      `\`${r.commit}\`${r.dirty ? ' (with uncommitted changes)' : ''}; ${m.cpus} × ${m.cpuModel}, ` +
      `${m.memoryGiB} GiB, node ${m.node}; load average at start ${r.load.atStart.join(' / ')}, ` +
      `1-minute load ${low} to ${high} while it ran. Settings: ${settings(r.settings)}.`,
    '',
    ...r.tables.flatMap(table),
    ...(r.aims.length > 0 ? ['Aims:', '', ...r.aims.map(aimLine), ''] : []),
  ];
}

export function renderBenchmarksDoc(results: readonly BenchResult[]): string {
  const byBench = new Map(results.map((r) => [r.bench, r]));
  const unknown = results.filter((r) => !BENCHMARKS.some((b) => b.bench === r.bench)).map((r) => r.bench);
  if (unknown.length > 0) throw new Error(`results of benchmarks the page does not list: ${unknown.join(', ')}`);
  const lines = [
    '# Benchmarks',
    '',
    '<!-- Generated by scripts/benchmarks-doc.ts from bench/results/*.json: run `npm run docs`, do not edit. -->',
    '',
    'Every figure here is what a benchmark script wrote into `bench/results/` on the machine and commit named',
    'with it; timings on a shared two-core machine are noisy, so each benchmark measures its baseline in the',
    'same run and states its aims against that. How each one measures is in its script',
    '(`scripts/bench-<name>.ts`, the header) and in the docs that link here. To refresh a section, run its',
    'command, then `npm run docs`, and commit both.',
    '',
    ...BENCHMARKS.map(
      (b) =>
        `- [${b.title}](#${b.title
          .toLowerCase()
          .replaceAll(/[^a-z0-9 -]/g, '')
          .replaceAll(' ', '-')})`,
    ),
    '',
    ...BENCHMARKS.flatMap((b) => section(b, byBench.get(b.bench))),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}

if (process.argv[1] === import.meta.filename) {
  const results = readResults();
  const rendered = [
    { path: BENCHMARKS_DOC_PATH, text: renderBenchmarksDoc(results) },
    ...FIGURE_DOCS.map((path) => ({ path, text: renderFigures(readFileSync(path, 'utf8'), results) })),
  ];
  for (const { path, text } of rendered) {
    if (process.argv.includes('--check')) {
      if (!existsSync(path) || readFileSync(path, 'utf8') !== text) {
        console.error(`${path} is out of date: run npm run docs`);
        process.exit(1);
      }
    } else {
      writeFileSync(path, text);
      console.log(`wrote ${path}`);
    }
  }
}
