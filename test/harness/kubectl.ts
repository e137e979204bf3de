import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { until as untilFn } from '../../harness/until.js';
import { runCli, type CliRun } from './cli.js';

/**
 * An unmodified kubectl (from `kubeBin`) with only the given kubeconfig: no KUBECONFIG, no flag that could
 * name the server, a 10 s request timeout so that a frozen peer costs a bounded wait.
 */
export function kubectl(
  kubeBin: string,
  options: { kubeconfig: string; args: string[]; input?: string },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.KUBECONFIG;
    const child = spawn(
      join(kubeBin, 'kubectl'),
      ['--kubeconfig', options.kubeconfig, '--request-timeout=10s', ...options.args],
      { env },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: stdout.trim(), stderr: stderr.trim() }));
    child.stdin.end(options.input ?? '');
  });
}

/** kubectl until it succeeds (kube-apiserver starting, the API record's TTL running out); its output. */
export async function kubectlOk(
  input: { kubeBin: string; until: typeof untilFn; what: string; kubeconfig: string; context?: () => string },
  ...args: string[]
): Promise<string> {
  let last: CliRun | undefined;
  return input.until(
    input.what,
    async () => {
      last = await kubectl(input.kubeBin, { kubeconfig: input.kubeconfig, args });
      return last.code === 0 ? last.stdout : undefined;
    },
    { explain: () => `kubectl ${args.join(' ')}: ${last?.stderr}\n${input.context?.() ?? ''}` },
  );
}

/** `gardenless shoot kubeconfig P/N [flags]`, written to `file` as printed; the parsed kubeconfig. */
export async function printKubeconfig(
  target: { apiUrl: string; region: string },
  shoot: string,
  file: string,
  ...flags: string[]
): Promise<Record<string, unknown>> {
  const res = await runCli(target, ['shoot', 'kubeconfig', shoot, ...flags]);
  if (res.code !== 0) throw new Error(`gardenless shoot kubeconfig ${shoot} failed: ${res.stderr}`);
  writeFileSync(file, res.stdout, { mode: 0o600 });
  return parse(res.stdout) as Record<string, unknown>;
}
