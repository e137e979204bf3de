import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildProgram, loadServerCommands } from '../../../cli/program.js';

/**
 * The docs name files, npm scripts and CLI flags; each must exist, so that a rename or a removal fails here
 * instead of leaving a newcomer with a command that does not run.
 */
const root = resolve(import.meta.dirname, '../../..');
const docs = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const text = (doc: string) => readFileSync(join(root, doc), 'utf8');

/** Top-level entries a path in backticks may start with (what a reader would look for in the repository). */
const TOP = readdirSync(root).filter((f) => !f.startsWith('.') && f !== 'node_modules');
/** Paths the project creates at run time or on set-up; named in the docs, never committed. */
const RUNTIME = [/^\.landscape\b/, /^\.tools\b/, /^\.venv\b/, /^dist\b/, /^test-results\b/, /^cdk\.out\b/];

function pathsIn(doc: string): { path: string; from: string }[] {
  const found: { path: string; from: string }[] = [];
  const body = text(doc);
  // Relative links: [title](path) and [title](path#anchor), resolved against the page.
  for (const m of body.matchAll(/\]\(([^)\s#]+)(#[^)]*)?\)/g)) {
    const target = m[1]!;
    if (/^[a-z]+:/.test(target)) continue;
    const path = relative(root, resolve(dirname(join(root, doc)), target));
    // Outside the repository (the workplace's shared style guide): not the repository's to keep.
    if (path.startsWith('..')) continue;
    found.push({ path, from: `link ${target}` });
  }
  // Paths in backticks: `seed/agent/hosting.ts`, `scripts/setup.sh`, `test/harness/` (repository-relative).
  for (const m of body.matchAll(/`([^`\s]+)`/g)) {
    const token = m[1]!.replace(/[.,:;)]+$/, '');
    if (!TOP.some((t) => token === t || token.startsWith(`${t}/`))) continue;
    if (/[<>*{}$|]|\.\.\./.test(token)) continue; // a pattern or a placeholder, not a path
    found.push({ path: token.replace(/\/$/, ''), from: `\`${m[1]}\`` });
  }
  return found;
}

function npmScriptsIn(doc: string): string[] {
  // `npm run bench:*` names a family, not a script.
  return [...text(doc).matchAll(/npm run ([a-z][\w:-]*)(\*)?/g)].filter((m) => !m[2]).map((m) => m[1]!);
}

/** Every long option of the CLI, its subcommands' and the long-running commands' included. */
let flagsOnce: Promise<Set<string>> | undefined;
const cliFlags = () => (flagsOnce ??= allCliFlags());
async function allCliFlags(): Promise<Set<string>> {
  const program = buildProgram();
  await loadServerCommands(program);
  const flags = new Set<string>(['--help', '--version']);
  const walk = (c: Command) => {
    for (const o of c.options) if (o.long) flags.add(o.long);
    for (const sub of c.commands) walk(sub);
  };
  walk(program);
  return flags;
}

/** `--flag`s on lines that run the CLI (`gardenless …`, `bin/gardenless …`). */
function cliFlagsIn(doc: string): string[] {
  return text(doc)
    .split('\n')
    .filter((line) => /\bgardenless (?!-io)[a-z-]+/.test(line) && !/https?:\/\//.test(line))
    .flatMap((line) => [...line.matchAll(/(?<![\w-])(--[a-z][a-z0-9-]*)/g)].map((m) => m[1]!));
}

describe('the docs name only what exists', () => {
  // The long-running commands' modules are heavy: load them once, before the cases.
  beforeAll(() => cliFlags(), 60_000);

  it.each(docs)('%s: every file and link', (doc) => {
    const missing = pathsIn(doc)
      .filter(({ path }) => !RUNTIME.some((r) => r.test(path)))
      .filter(({ path }) => !existsSync(join(root, path)))
      .map(({ path, from }) => `${path} (${from})`);
    expect(missing).toEqual([]);
  });

  it.each(docs)('%s: every npm script', (doc) => {
    const scripts = Object.keys(
      (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts,
    );
    expect(npmScriptsIn(doc).filter((s) => !scripts.includes(s))).toEqual([]);
  });

  it.each(docs)('%s: every CLI flag', async (doc) => {
    const flags = await cliFlags();
    expect(cliFlagsIn(doc).filter((f) => !flags.has(f))).toEqual([]);
  });

  it('would notice a file, a script or a flag that does not exist', async () => {
    const flags = await cliFlags();
    expect(existsSync(join(root, 'seed/agent/no-such-file.ts'))).toBe(false);
    expect(flags.has('--no-such-flag')).toBe(false);
    expect(flags.has('--watch')).toBe(true);
    expect(cliFlagsIn('README.md').length).toBeGreaterThan(3);
    expect(pathsIn('README.md').length).toBeGreaterThan(10);
    expect(npmScriptsIn('README.md')).toContain('demo');
  });
});
