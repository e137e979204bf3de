import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from './emulator.js';
import { emulatorEnv } from './aws-env.js';

/** Starts local/api-proxy-main.ts as a detached process group listening at `url` (stopped by `npm run stop`). */
export function startApiProxy(options: {
  url: string;
  endpoint: string;
  region: string;
  hostedZoneId: string;
  domain: string;
  log: string;
}): { url: string; pid: number } {
  const log = openSync(options.log, 'a');
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(PROJECT_ROOT, 'local', 'api-proxy-main.ts'),
      ...['--port', new URL(options.url).port],
      ...['--aws-endpoint', options.endpoint, '--region', options.region],
      ...['--hosted-zone-id', options.hostedZoneId, '--domain', options.domain],
    ],
    {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...emulatorEnv(options.endpoint, options.region) },
      stdio: ['ignore', log, log],
      detached: true,
    },
  );
  child.unref();
  if (!child.pid) throw new Error('the API-domain proxy did not start');
  return { url: options.url, pid: child.pid };
}
