import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResult, Cell } from './bench-results.js';

/**
 * The `npm test` row of the first-run result in `dir`, labelled with the run that measured it: a run of
 * `npm run bench:first-run` without the tests (an hour shorter) keeps the last measured figure beside its
 * own, never passing it off as its own.
 */
export function earlierTestRow(dir: string): Cell[] | undefined {
  const file = join(dir, 'first-run.json');
  if (!existsSync(file)) return undefined;
  const earlier = JSON.parse(readFileSync(file, 'utf8')) as BenchResult;
  const row = earlier.tables[0]?.rows.find((r) => typeof r[0] === 'string' && r[0].startsWith('npm test'));
  if (!row) return undefined;
  const label = String(row[0]).startsWith('npm test (')
    ? String(row[0])
    : `npm test (measured ${earlier.ranAt.slice(0, 10)} at ${earlier.commit}, with BENCH_FIRST_RUN_TEST=1)`;
  return [label, row[1] ?? null];
}
