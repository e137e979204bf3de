import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { emulatorCredentialsEnv } from '../../local/aws-env.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const garden = testGarden();

/** Bounds of the run: a few minutes on two cores. */
const MAX_EXAMPLES = Number(process.env.SCHEMATHESIS_MAX_EXAMPLES ?? 12);
const MAX_TIME_SECONDS = Number(process.env.SCHEMATHESIS_MAX_TIME ?? 240);

interface Run {
  code: number | null;
  output: string;
}

function schemathesis(reportDir: string, schemaFile: string): Promise<Run> {
  const { apiUrl, region } = garden.deployment;
  mkdirSync(reportDir, { recursive: true });
  const args = [
    '--config-file',
    join(ROOT, 'test', 'schemathesis', 'schemathesis.toml'),
    '--no-color',
    'run',
    schemaFile,
    '--url',
    apiUrl,
    '--checks',
    'all',
    '--exclude-checks',
    'missing_required_header',
    '--max-examples',
    String(MAX_EXAMPLES),
    '--max-time',
    String(MAX_TIME_SECONDS),
    '--workers',
    '2',
    '--seed',
    '20261123',
    '--request-timeout',
    '60',
    '--report',
    'ndjson',
    '--report-dir',
    reportDir,
  ];
  return new Promise((resolveRun, reject) => {
    const child = spawn(join(ROOT, '.venv', 'bin', 'schemathesis'), args, {
      cwd: ROOT,
      env: {
        ...process.env,
        PYTHONPATH: join(ROOT, 'test', 'schemathesis'),
        SCHEMATHESIS_HOOKS: 'gardenless_hooks',
        ...emulatorCredentialsEnv(region),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolveRun({ code, output }));
  });
}

describe('schemathesis against the deployed API (OpenAPI at /openapi.json, SigV4-signed, every check)', () => {
  let reportDir: string;
  beforeAll(async () => {
    await resetGardenState(garden);
    reportDir = mkdtempSync(join(tmpdir(), 'gardenless-schemathesis-'));
  });
  afterAll(async () => {
    rmSync(reportDir, { recursive: true, force: true });
    await resetGardenState(garden);
  });

  it(
    'finds no failure',
    async () => {
      // Prepare: the document as the deployed API serves it (a signed GET; schemathesis loads it from a file).
      const served = await garden.setup.request('GET', '/openapi.json');
      expect(served.status).toBe(200);
      const schemaFile = join(reportDir, 'openapi.json');
      writeFileSync(schemaFile, JSON.stringify(served.body));
      // Act
      const runDir = join(reportDir, 'run');
      const run = await schemathesis(runDir, schemaFile);
      // Assess
      const summary = run.output
        .split('\n')
        .filter((l) => /test cases|generated|passed|failed|Failures|errors?\b/i.test(l))
        .slice(-12)
        .join('\n');
      console.log(
        `schemathesis (max ${MAX_EXAMPLES} examples per operation, ${MAX_TIME_SECONDS} s budget):\n${summary}`,
      );
      expect(run.code, run.output.slice(-20_000)).toBe(0);
      const cases = /(\d[\d,]*) generated/.exec(run.output)?.[1];
      expect(Number((cases ?? '0').replace(/,/g, ''))).toBeGreaterThan(300);
      const reports = readdirSync(runDir).filter((f) => f.endsWith('.ndjson'));
      expect(reports.map((f) => readFileSync(join(runDir, f), 'utf8').length)).toEqual([expect.any(Number)]);
    },
    (MAX_TIME_SECONDS + 300) * 1000,
  );
});
