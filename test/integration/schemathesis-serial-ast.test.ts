import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const HOOKS = join(ROOT, 'test', 'schemathesis');

async function race(...mode: string[]): Promise<{ version: string; crashes: number }> {
  const { stdout } = await promisify(execFile)(
    join(ROOT, '.venv', 'bin', 'python'),
    [join(HOOKS, 'ast_race.py'), '3', ...mode],
    {
      cwd: HOOKS,
      env: { ...process.env, PYTHONPATH: HOOKS },
      timeout: 60_000,
    },
  );
  const found = /^python (\S+): (\d+) SystemError$/m.exec(stdout);
  expect(found, stdout).not.toBeNull();
  return { version: found![1] ?? '', crashes: Number(found![2]) };
}

// schemathesis's worker threads and CPython 3.11's AST recursion counter (gh-106905): see serial_ast.py.
describe('the schemathesis hooks serialize ast.parse (the interpreter of the project environment)', () => {
  it('three threads building ASTs crash it without the hooks, on CPython 3.11', async () => {
    const { version, crashes } = await race();
    if (version !== '3.11') {
      console.log(`python ${version}: the race is CPython 3.11's; ${crashes} SystemError without the hooks`);
      return;
    }
    expect(crashes).toBeGreaterThan(0);
  }, 60_000);

  it('and never with serial_ast loaded', async () => {
    expect((await race('serial')).crashes).toBe(0);
  }, 60_000);
});
