/**
 * `npm run bench:cli`: how long a CLI call takes from exec to exit with its output read through a pipe,
 * median of N rounds that run every case once, measured in one run against two baselines: an empty `node -e 0` (what no CLI can beat) and the CLI as it used to run,
 * compiled by tsx at every start. A `get` talks to a loopback stand-in of the API that answers one seed at
 * once, so that what is measured is the CLI (start, signing, rendering), not the emulator.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../local/emulator.js';
import { aim, startBenchRun } from './bench-results.js';
import { median } from './bench-stats.js';
import { emulatorCredentialsEnv } from '../local/aws-env.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const record = startBenchRun({
  bench: 'cli',
  title: 'CLI start',
  command: 'npm run bench:cli',
  about:
    'A CLI call from exec to exit with its output read through a pipe, median of interleaved rounds that run every ' +
    'case once, against an empty `node -e 0` (the floor) and the CLI compiled by tsx at every start (the former ' +
    'path); a `get` talks to a loopback stand-in of the API, so the CLI is measured, not the emulator.',
});
const bin = join(PROJECT_ROOT, 'bin', 'gardenless');
const tsx = join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx');
const main = join(PROJECT_ROOT, 'cli', 'main.ts');

const seed = {
  apiVersion: 'core.gardenless.io/v1',
  kind: 'Seed',
  metadata: {
    name: 'bench',
    uid: 'u',
    resourceVersion: '1',
    generation: 1,
    creationTimestamp: new Date().toISOString(),
    labels: {},
    annotations: {},
  },
  spec: {
    provider: { type: 'aws', region: 'eu-west-1', zones: ['eu-west-1a'] },
    networks: { pods: '10.1.0.0/16', services: '10.2.0.0/16' },
  },
  status: {
    identity: 'bench-1',
    conditions: [{ type: 'GardenletReady', status: 'True' }],
    shoots: 0,
    labels: {},
    lastHeartbeatTime: new Date().toISOString(),
    leaseDurationSeconds: 3600,
  },
};
const server = createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(req.url?.startsWith('/seeds/') ? seed : { kind: 'SeedList', items: [seed], metadata: {} }));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
const apiUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
const env = { ...process.env, ...emulatorCredentialsEnv('us-east-1') };

/**
 * Milliseconds from spawn to exit of one run. stdout is a pipe, as in `gardenless ... | grep`, and must hold
 * `expect`: a CLI that exits before its output has drained would be fast and wrong.
 */
function once(c: Case): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(c.command, c.args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code === 0 && c.expect.test(stdout)) resolve(ms);
      else
        reject(
          new Error(
            `${c.command} ${c.args.join(' ')} exited ${code} printing ${JSON.stringify(stdout.slice(0, 200))}: ${stderr}`,
          ),
        );
    });
  });
}

type Case = { name: string; command: string; args: string[]; expect: RegExp };
const get = ['--api-url', apiUrl, 'seed', 'get', 'bench'];
const seedRow = /^bench +aws +eu-west-1 .* True /m;
const cases: Case[] = [
  { name: 'baseline: node -e 0', command: process.execPath, args: ['-e', '0'], expect: /^$/ },
  {
    name: 'before: tsx cli/main.ts --help (compiled at every start)',
    command: tsx,
    args: [main, '--help'],
    expect: /^Usage: gardenless/,
  },
  { name: 'before: tsx cli/main.ts seed get', command: tsx, args: [main, ...get], expect: seedRow },
  { name: 'gardenless --help', command: bin, args: ['--help'], expect: /^Usage: gardenless/ },
  {
    name: 'npx gardenless --help (npx resolving the bin first)',
    command: 'npx',
    args: ['gardenless', '--help'],
    expect: /^Usage: gardenless/,
  },
  { name: 'gardenless --version', command: bin, args: ['--version'], expect: /^\d+\.\d+\.\d+/ },
  { name: 'gardenless seed get (API stand-in on loopback)', command: bin, args: get, expect: seedRow },
];

spawnSync(process.execPath, [join(PROJECT_ROOT, 'scripts', 'build-cli.mjs')], { stdio: 'inherit' });
// One warm-up round, then rounds that run every case once each: the machine's load, which changes by the
// minute on a shared machine, weighs on all cases alike rather than on whichever ran while it peaked.
for (const c of cases) await once(c);
const times = cases.map(() => [] as number[]);
for (let round = 0; round < RUNS; round++) for (const [i, c] of cases.entries()) times[i]!.push(await once(c));
const results = cases.map((c, i) => ({ name: c.name, median: median(times[i]!) }));
server.close();

const base = results[0]!.median;
console.log(
  `CLI start to exit (stdout a pipe), median of ${RUNS} interleaved rounds (after one warm-up), load average ${(await import('node:os')).loadavg()[0]!.toFixed(2)}:`,
);
for (const r of results)
  console.log(
    `  ${r.name.padEnd(58)} ${r.median.toFixed(0).padStart(6)} ms   (${(r.median / base).toFixed(1)}x node -e 0, ${(r.median - base).toFixed(0)} ms above it)`,
  );
record.save({
  settings: { rounds: RUNS },
  tables: [
    {
      title: 'Start to exit (ms)',
      columns: ['call', 'median', 'above node -e 0'],
      rows: results.map((r) => [r.name, r.median, r.median - base]),
      decimals: [undefined, 0, 0],
    },
  ],
  aims: results
    .filter((r) => r.name.startsWith('gardenless --help') || r.name.startsWith('gardenless seed get'))
    .map((r) => aim(r.name, Math.round(r.median), '<=', 300, 'ms')),
});
