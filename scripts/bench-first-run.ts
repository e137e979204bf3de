/**
 * What a newcomer's first run costs: a fresh clone of HEAD in a temporary directory, with empty npm, pip
 * and Go caches of its own (so every package is downloaded and every Go build is cold, as on a fresh
 * machine), then `npm ci`, `npm run setup` (each of its steps as it prints them), `npm start` until the
 * landscape is up and `npm run stop`, then `npm run start:kube` (root: a seed on a real node) and its stop; with BENCH_FIRST_RUN_TEST=1 also `npm test` (as CI runs it). Debian
 * packages the machine already has are not removed (the host is left as it is): their install is not in
 * the figure when they were present, and the result says which were.
 *
 *   npm run bench:first-run                (BENCH_FIRST_RUN_TEST=0)
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../local/emulator.js';
import { RESULTS_DIR, startBenchRun, type Cell } from './bench-results.js';
import { earlierTestRow } from './first-run-rows.js';

const WITH_TEST = process.env.BENCH_FIRST_RUN_TEST === '1';
const record = startBenchRun({
  bench: 'first-run',
  title: 'First run',
  command: 'npm run bench:first-run',
  about:
    'A fresh clone with empty npm, pip and Go caches: `npm ci`, `npm run setup` step by step, `npm start` until ' +
    'the landscape is up, `npm run stop`, `npm run start:kube` (a seed on a real node) and its stop' +
    (WITH_TEST ? ', and `npm test`.' : '. `npm test` on a fresh machine is what CI takes.'),
});

const work = mkdtempSync(join(tmpdir(), 'gl-first-run-'));
const clone = join(work, 'gardenless');
const env = {
  ...process.env,
  npm_config_cache: join(work, 'npm-cache'),
  PIP_NO_CACHE_DIR: '1',
  GOMODCACHE: join(work, 'go-mod'),
  GOCACHE: join(work, 'go-build'),
  GOFLAGS: '-modcacherw',
};

/** Runs one command in the clone, echoing its output; the seconds it took and what it printed. */
function run(command: string): Promise<{ seconds: number; output: string }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    console.log(`first-run: ${command}`);
    const child = spawn('bash', ['-c', command], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const echo = (d: Buffer) => {
      output += d.toString();
      process.stdout.write(d);
    };
    child.stdout.on('data', echo);
    child.stderr.on('data', echo);
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve({ seconds: (Date.now() - started) / 1000, output });
      else reject(new Error(`${command} exited ${code}`));
    });
  });
}

const present = ['etcd', 'etcdctl', 'dnsmasq'].filter((bin) => {
  try {
    execFileSync('bash', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});

const rows: Cell[][] = [];
try {
  execFileSync('git', ['clone', '--quiet', '--no-hardlinks', PROJECT_ROOT, clone]);
  rows.push(['npm ci', (await run('npm ci --no-audit --no-fund')).seconds]);
  const setup = await run('npm run setup');
  // Its own account of each step: "setup: <what> took N s", "build-kube: <what> built in N s".
  for (const m of setup.output.matchAll(/^setup: (.+) took (\d+) s$/gm)) rows.push([`  setup: ${m[1]}`, Number(m[2])]);
  for (const m of setup.output.matchAll(/^build-kube: (.+) (?:built|ready) in (\d+) s/gm))
    rows.push([`  setup: ${m[1]}`, Number(m[2])]);
  rows.push(['npm run setup, in all', setup.seconds]);
  rows.push(['npm start (the landscape up, set-up done)', (await run('npm start')).seconds]);
  rows.push(['npm run stop', (await run('npm run stop')).seconds]);
  // The landscape again with the real node's seed: its images' first build and import, the node, the chart.
  rows.push([
    'npm run start:kube (the landscape and a seed on a real node)',
    (await run('npm run start:kube')).seconds,
  ]);
  rows.push(['npm run stop (with the node)', (await run('npm run stop')).seconds]);
  if (WITH_TEST) rows.push(['npm test', (await run('npm test')).seconds]);
  else {
    // A run without the tests keeps the last measured `npm test`, saying which run it came from.
    const earlier = earlierTestRow(RESULTS_DIR);
    if (earlier) rows.push(earlier);
  }
  record.save({
    settings: { debianPackagesAlreadyPresent: present.join(', ') || 'none', withTest: WITH_TEST },
    tables: [{ title: 'Wall time (s)', columns: ['step', 'seconds'], rows, decimals: [undefined, 0] }],
    aims: [],
  });
} finally {
  await run('npm run stop').catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}
