/**
 * `npm run bench:cli`: how long a CLI call takes from exec to exit, median of N runs each, measured in one
 * run against two baselines: an empty `node -e 0` (what no CLI can beat) and the CLI as it used to run,
 * compiled by tsx at every start. A `get` talks to a loopback stand-in of the API that answers one seed at
 * once, so that what is measured is the CLI (start, signing, rendering), not the emulator.
 */
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../local/emulator.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const bin = join(PROJECT_ROOT, 'bin', 'gardenless');
const tsx = join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx');
const main = join(PROJECT_ROOT, 'cli', 'main.ts');

const seed = {
  apiVersion: 'core.gardenless.io/v1', kind: 'Seed',
  metadata: { name: 'bench', uid: 'u', resourceVersion: '1', generation: 1, creationTimestamp: new Date().toISOString(), labels: {}, annotations: {} },
  spec: { provider: { type: 'aws', region: 'eu-west-1', zones: ['eu-west-1a'] }, networks: { pods: '10.1.0.0/16', services: '10.2.0.0/16' } },
  status: { identity: 'bench-1', conditions: [{ type: 'GardenletReady', status: 'True' }], shoots: 0, labels: {}, lastHeartbeatTime: new Date().toISOString(), leaseDurationSeconds: 3600 },
};
const server = createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(req.url?.startsWith('/seeds/') ? seed : { kind: 'SeedList', items: [seed], metadata: {} }));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
const apiUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
const env = { ...process.env, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1' };

/** Milliseconds from spawn to exit of each run (after one warm-up run that also builds the CLI when stale). */
async function measure(command: string, args: string[]): Promise<number[]> {
  const { spawn } = await import('node:child_process');
  const once = () =>
    new Promise<number>((resolve, reject) => {
      const started = process.hrtime.bigint();
      const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}`))));
    });
  await once();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await once());
  return times;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const get = ['--api-url', apiUrl, 'seed', 'get', 'bench'];
const cases: [string, string, string[]][] = [
  ['baseline: node -e 0', process.execPath, ['-e', '0']],
  ['before: tsx cli/main.ts --help (compiled at every start)', tsx, [main, '--help']],
  ['before: tsx cli/main.ts seed get', tsx, [main, ...get]],
  ['gardenless --help', bin, ['--help']],
  ['gardenless --version', bin, ['--version']],
  ['gardenless seed get (API stand-in on loopback)', bin, get],
];

spawnSync(process.execPath, [join(PROJECT_ROOT, 'scripts', 'build-cli.mjs')], { stdio: 'inherit' });
const results: { name: string; median: number }[] = [];
for (const [name, command, args] of cases) {
  const times = await measure(command, args);
  results.push({ name, median: median(times) });
}
server.close();

const base = results[0]!.median;
console.log(`CLI start to exit, median of ${RUNS} runs each (after one warm-up), load average ${(await import('node:os')).loadavg()[0]!.toFixed(2)}:`);
for (const r of results) console.log(`  ${r.name.padEnd(58)} ${r.median.toFixed(0).padStart(6)} ms   (${(r.median / base).toFixed(1)}x node -e 0, ${(r.median - base).toFixed(0)} ms above it)`);
