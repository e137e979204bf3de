/**
 * Figures in prose, rendered from bench/results: a document cites a cell of a benchmark's table between
 *
 *   <!-- figure bench="fleet" table="Monthly AWS cost" row="total / garden idle" column="USD per month" -->
 *   ...<!-- /figure -->
 *
 * where `table` is the start of the table's title, `row` the row's first cells joined by " / ", `column` a
 * column's name. `npm run docs` writes the cell's value in place (the README's cost per 1,000 shoots is one),
 * so that no number is copied by hand; a unit test fails when a document is not what this renders.
 */
import { formatCell, type BenchResult, type Cell } from './bench-results.js';

const FIGURE = /(<!-- figure ((?:\w+="[^"]*"\s*)+)-->)([\s\S]*?)(<!-- \/figure -->)/g;
const ATTRIBUTE = /(\w+)="([^"]*)"/g;

export interface FigureRef {
  bench: string;
  table: string;
  row: string;
  column: string;
}

/** `text` with every figure's value rendered from `results`; a figure that names nothing there throws. */
export function renderFigures(text: string, results: readonly BenchResult[]): string {
  return text.replace(FIGURE, (_all, open: string, attributes: string, _old: string, close: string) => {
    const ref = parseRef(attributes);
    return `${open}${figureValue(ref, results)}${close}`;
  });
}

export function figureValue(ref: FigureRef, results: readonly BenchResult[]): string {
  const result = results.find((r) => r.bench === ref.bench);
  if (!result) return `(not measured yet: \`${commandOf(ref.bench)}\`)`;
  const table = result.tables.find((t) => t.title.startsWith(ref.table));
  if (!table) throw new Error(`figure: ${ref.bench} has no table "${ref.table}..."`);
  const column = table.columns.indexOf(ref.column);
  if (column < 0) throw new Error(`figure: table "${table.title}" has no column "${ref.column}"`);
  const row = table.rows.find((r) => rowKey(r, ref.row) === ref.row);
  if (!row) throw new Error(`figure: table "${table.title}" has no row "${ref.row}"`);
  // As docs/benchmarks.md shows the same cell.
  return formatCell(row[column] ?? null, table.decimals?.[column]);
}

function parseRef(attributes: string): FigureRef {
  const values = Object.fromEntries([...attributes.matchAll(ATTRIBUTE)].map((m) => [m[1], m[2]]));
  for (const key of ['bench', 'table', 'row', 'column'])
    if (values[key] === undefined) throw new Error(`figure: "${attributes.trim()}" lacks ${key}="..."`);
  return values as unknown as FigureRef;
}

/** The row's first cells joined as the reference joins them, as many as the reference names. */
function rowKey(row: readonly Cell[], key: string): string {
  const parts = key.split(' / ').length;
  return row
    .slice(0, parts)
    .map((c) => String(c))
    .join(' / ');
}

function commandOf(bench: string): string {
  return `npm run bench:${bench}`;
}
