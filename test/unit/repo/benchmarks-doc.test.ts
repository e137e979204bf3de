import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { BenchResult } from '../../../scripts/bench-results.js';
import {
  BENCHMARKS,
  BENCHMARKS_DOC_PATH,
  FIGURE_DOCS,
  readResults,
  renderBenchmarksDoc,
} from '../../../scripts/benchmarks-doc.js';
import { renderFigures } from '../../../scripts/doc-figures.js';

const result = (over: Partial<BenchResult> = {}): BenchResult => ({
  bench: 'api',
  title: 'Garden API',
  command: 'npm run bench:api',
  about: 'What it measures.',
  commit: 'abc123def456',
  dirty: false,
  ranAt: '2026-11-27T10:00:00.000Z',
  durationSeconds: 75,
  machine: { cpus: 2, cpuModel: 'AMD EPYC', memoryGiB: 23.5, node: 'v20.20.2', platform: 'linux-x64' },
  load: { atStart: [1.5, 1.2, 1], oneMinuteRange: [0.9, 3.2] },
  settings: { samples: 100 },
  tables: [
    {
      title: 'Latency (ms)',
      columns: ['measure', 'median'],
      rows: [
        ['create', 37.71],
        ['read', 1234.5],
      ],
    },
  ],
  aims: [{ what: 'failed creations', value: 0, aim: 0, unit: '', comparison: '<=', met: true }],
  ...over,
});

describe('docs/benchmarks.md', () => {
  it('is what npm run docs renders from bench/results (run it after a benchmark)', () => {
    expect(existsSync(BENCHMARKS_DOC_PATH)).toBe(true);
    expect(readFileSync(BENCHMARKS_DOC_PATH, 'utf8')).toBe(renderBenchmarksDoc(readResults()));
  });

  it('renders a result with its run, machine, load, tables and aims', () => {
    const page = renderBenchmarksDoc([result()]);
    expect(page).toContain('## Garden API');
    expect(page).toContain('at commit `abc123def456`; 2 × AMD EPYC, 23.5 GiB, node v20.20.2');
    expect(page).toContain('load average at start 1.5 / 1.2 / 1, 1-minute load 0.9 to 3.2 while it ran');
    expect(page).toContain('Settings: `samples` 100.');
    expect(page).toContain('| create | 37.7 |');
    expect(page).toContain('| read | 1,234.5 |');
    expect(page).toContain('- failed creations: 0 (aim at most 0): **met**');
  });

  it('says how to produce the results of a benchmark that has none, and lists every benchmark', () => {
    const page = renderBenchmarksDoc([]);
    for (const b of BENCHMARKS) expect(page).toContain(`## ${b.title}`);
    expect(page.match(/No results recorded yet/g)).toHaveLength(BENCHMARKS.length);
  });

  it('marks a run with uncommitted changes and an aim not met', () => {
    const page = renderBenchmarksDoc([
      result({ dirty: true, aims: [{ what: 'ratio', value: 1.6, aim: 1.5, unit: 'x', comparison: '<=', met: false }] }),
    ]);
    expect(page).toContain('(with uncommitted changes)');
    expect(page).toContain('- ratio: 1.6 x (aim at most 1.5 x): **not met**');
  });

  it('refuses results of a benchmark the page does not list', () => {
    expect(() => renderBenchmarksDoc([result({ bench: 'nonesuch' })])).toThrow(/nonesuch/);
  });
});

describe('figures in prose', () => {
  const cite = (row: string, column = 'median') =>
    `<!-- figure bench="api" table="Latency" row="${row}" column="${column}" -->old<!-- /figure -->`;

  it.each(FIGURE_DOCS)('%s cites what npm run docs renders from bench/results', (path) => {
    const text = readFileSync(path, 'utf8');
    expect(text).toBe(renderFigures(text, readResults()));
  });

  it('writes the cited cell in place of what was there, and keeps the reference', () => {
    expect(renderFigures(`a ${cite('read')} b`, [result()])).toBe(`a ${cite('read').replace('old', '1,234.5')} b`);
  });

  it('says how to measure a figure whose benchmark has no results yet', () => {
    expect(renderFigures(cite('read'), [])).toContain('(not measured yet: `npm run bench:api`)');
  });

  it('refuses a reference to a row or column the table does not have', () => {
    expect(() => renderFigures(cite('update'), [result()])).toThrow(/no row "update"/);
    expect(() => renderFigures(cite('read', 'p99'), [result()])).toThrow(/no column "p99"/);
  });
});
