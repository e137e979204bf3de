// Builds the CLI once into dist/cli/ (esbuild: one ES module per entry and shared chunks, npm packages
// left to node_modules), so that `gardenless` starts in node directly instead of compiling TypeScript with
// tsx at every call. Run by `npm ci`/`npm install` (prepare), `npm run build`, and by bin/gardenless when a
// source is newer than the build. Concurrent builds are safe: each writes into its own directory and
// renames the files into place, the entry last (chunk names carry their content hash).
import { build } from 'esbuild';
import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'cli');
const tmp = join(root, 'dist', `.cli-${process.pid}`);
const ENTRY = 'gardenless.js';

rmSync(tmp, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { gardenless: 'cli/main.ts' },
  outdir: tmp,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: 'chunk-[hash]',
  sourcemap: 'linked',
  logLevel: 'warning',
});
mkdirSync(out, { recursive: true });
const files = readdirSync(tmp).sort((a, b) => Number(a.startsWith(ENTRY)) - Number(b.startsWith(ENTRY)));
for (const f of files) renameSync(join(tmp, f), join(out, f));
rmSync(tmp, { recursive: true, force: true });
// Chunks of earlier builds that the new entry no longer imports are left; a clean build removes dist/.
