import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../local/emulator.js';

/** The CLI's version: the repository's package.json (the same file in sources and in the built CLI). */
export function cliVersion(): string {
  return (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}
