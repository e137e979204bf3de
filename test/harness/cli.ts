import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { emulatorCredentialsEnv } from '../../local/aws-env.js';
import { PROJECT_ROOT } from '../../local/emulator.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The built CLI (bin/gardenless) as a subprocess against a deployed stack, with the emulator's credentials. */
export function runCli(
  target: { apiUrl: string; region: string },
  args: string[],
  options: { input?: string; env?: Record<string, string> } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      join(PROJECT_ROOT, 'bin', 'gardenless'),
      ['--api-url', target.apiUrl, '--region', target.region, ...args],
      {
        cwd: PROJECT_ROOT,
        env: {
          ...process.env,
          ...emulatorCredentialsEnv(target.region),
          GARDENLESS_API_URL: '',
          ...options.env,
        },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
