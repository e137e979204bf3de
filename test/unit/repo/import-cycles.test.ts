import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');
const fixtures = join(root, 'test/fixtures/lint/cycle');

/**
 * Every relative import of every TypeScript file the project compiles, type-only imports included: ESLint's
 * `import-x/no-cycle` skips those (they vanish at run time), but a cycle held by types still ties two
 * modules' meanings together.
 */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((i) => i.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts')));
    graph.set(file, targets);
  }
  return graph;
}

/** One cycle per strongly connected group of files, as a path that starts and ends at the same file. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const visit = (file: string, path: string[]): void => {
    const at = path.indexOf(file);
    if (at >= 0) {
      found.push([...path.slice(at), file]);
      return;
    }
    if (done.has(file)) return;
    for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
    done.add(file);
  };
  for (const file of graph.keys()) visit(file, []);
  return found;
}

function projectFiles(): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  return config!.fileNames.filter((f) => !f.startsWith(`${fixtures}/`));
}

describe('import cycles', () => {
  it('the project has none, counting type-only imports', () => {
    const found = cycles(importGraph(projectFiles())).map((c) => c.map((f) => relative(root, f)).join(' -> '));
    expect(found).toEqual([]);
  });

  it('the graph check finds a cycle held together by type imports', () => {
    const files = ['types-a.ts', 'types-b.ts'].map((f) => join(fixtures, f));
    const found = cycles(importGraph(files)).map((c) => c.map((f) => relative(fixtures, f)));
    expect(found).toEqual([['types-a.ts', 'types-b.ts', 'types-a.ts']]);
  });

  it('the lint rule refuses a cycle of value imports', async () => {
    const eslint = new ESLint({ cwd: root, ignore: false });
    const [result] = await eslint.lintFiles([join(fixtures, 'a.ts')]);
    expect(result!.messages.map((m) => m.ruleId)).toContain('import-x/no-cycle');
  }, 60_000);
});
