import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The repository: the nearest directory up with package.json (from local/ in sources, dist/cli/ when built). */
export const PROJECT_ROOT = projectRoot(import.meta.dirname);

function projectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return resolve(from, '..');
  }
}
