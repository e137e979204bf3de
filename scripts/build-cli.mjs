// Builds the CLI once into dist/cli/ (esbuild: one ES module per entry and shared chunks), so that `gardenless` starts in node directly instead of compiling TypeScript with
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
  // The packages every call loads (commander, the SigV4 signer) are bundled: one file each instead of
  // hundreds of module resolutions. The heavy ones that only the agent and sidecar use, and those that
  // read files next to their sources (etcd3's protos), stay in node_modules.
  // ES modules first where a package ships both and no `exports`: the SigV4 signer's CommonJS build
  // requires all of @smithy/core (about 330 KB to compile at every call); its ES build lets esbuild keep
  // the 35 KB it uses.
  mainFields: ['module', 'main'],
  external: ['etcd3', '@kubernetes/client-node', '@aws-sdk/*', 'listr2', 'zod', 'yaml'],
  // Bundled CommonJS packages require node's own modules.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  chunkNames: 'chunk-[hash]',
  sourcemap: 'linked',
  logLevel: 'warning',
});
mkdirSync(out, { recursive: true });
const files = readdirSync(tmp).sort((a, b) => Number(a.startsWith(ENTRY)) - Number(b.startsWith(ENTRY)));
for (const f of files) renameSync(join(tmp, f), join(out, f));
rmSync(tmp, { recursive: true, force: true });
// Chunks of earlier builds that the new entry no longer imports are left; a clean build removes dist/.
