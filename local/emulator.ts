import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { signalProcessGroup } from '../seed/agent/process-group.js';
import { freePort } from '../seed/ports.js';

// Every local tool (landscape, benchmarks, demo, tests) imports this module: the AWS SDK's eight-line
// warning that its 2027 releases need Node 22 is known (README, known limits) and silenced here, for this
// process and every child it starts.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export { PROJECT_ROOT } from './project-root.js';
import { PROJECT_ROOT } from './project-root.js';
const MINISTACK_BIN = join(PROJECT_ROOT, '.venv', 'bin', 'ministack');

export interface Emulator {
  /** The endpoint every AWS client uses (AWS_ENDPOINT_URL). */
  readonly endpoint: string;
  /** Whether this process started it (and so stops it). */
  readonly owned: boolean;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

export interface StartEmulatorOptions {
  /** Where the emulator writes its log. */
  logFile?: string;
  /** Port to bind; a free one when absent. */
  port?: number;
  /** Let the emulator outlive this process (the landscape); tests keep it tied to themselves. */
  detached?: boolean;
  healthTimeoutMs?: number;
}

/**
 * Uses AWS_ENDPOINT_URL when it is set (a LocalStack container, say) and starts nothing; otherwise
 * starts the pinned MiniStack from the project's virtual environment on 127.0.0.1 and a free port.
 */
export async function startEmulator(options: StartEmulatorOptions = {}): Promise<Emulator> {
  const given = process.env.AWS_ENDPOINT_URL;
  if (given) {
    await waitForHealth(given, options.healthTimeoutMs ?? 30_000);
    return { endpoint: given, owned: false, pid: undefined, stop: async () => {} };
  }
  if (!existsSync(MINISTACK_BIN)) {
    throw new Error(`The emulator is not installed (${MINISTACK_BIN} missing): run scripts/setup.sh first`);
  }
  const port = options.port ?? (await freePort());
  const endpoint = `http://127.0.0.1:${port}`;
  const logFile = options.logFile ?? join(PROJECT_ROOT, '.landscape', `ministack-${port}.log`);
  mkdirSync(resolve(logFile, '..'), { recursive: true });
  const out = openSync(logFile, 'a');
  // Each Lambda worker unpacks its code into a temporary directory that the emulator never removes: they go
  // into one directory per emulator, removed with it (stop, or the landscape's stop). Never inside the
  // project: Node would take the project's package.json ("type": "module") for the functions' bundles.
  const scratch = emulatorScratchDir(port);
  mkdirSync(scratch, { recursive: true });
  const child = spawn(MINISTACK_BIN, [], {
    env: {
      ...process.env,
      TMPDIR: scratch,
      BIND_HOST: '127.0.0.1',
      GATEWAY_PORT: String(port),
      MINISTACK_HOST: '127.0.0.1',
      LOG_LEVEL: process.env.MINISTACK_LOG_LEVEL ?? 'WARNING',
      // Keep started Lambda workers for the whole run: a worker started anew on a loaded machine is what
      // answers 502 at the gateway when its start takes too long.
      LAMBDA_WARM_TTL_SECONDS: process.env.LAMBDA_WARM_TTL_SECONDS ?? '3600',
    },
    stdio: ['ignore', out, out],
    // Its own process group, so that stopping it also stops the Lambda workers it spawns.
    detached: true,
  });
  if (options.detached) child.unref();
  try {
    await waitForHealth(endpoint, options.healthTimeoutMs ?? 60_000, child);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`The emulator did not become healthy; see ${logFile}`, { cause: error });
  }
  return {
    endpoint,
    owned: true,
    pid: child.pid,
    stop: async () => {
      await stopProcess(child);
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/** Where the emulator on `port` keeps its Lambda workers' files. */
export function emulatorScratchDir(port: number): string {
  return join(tmpdir(), `gl-emulator-${port}`);
}

export async function waitForHealth(endpoint: string, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`emulator exited with code ${child.exitCode}`);
    try {
      const res = await fetch(`${endpoint}/_localstack/health`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return;
      lastError = new Error(`health answered ${res.status}`);
    } catch (error) {
      lastError = error;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`emulator at ${endpoint} not healthy after ${timeoutMs} ms`, { cause: lastError });
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return Promise.resolve();
  const pid = child.pid;
  return new Promise((resolveStop) => {
    const timer = setTimeout(() => signalProcessGroup(pid, 'SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      // Workers may outlive the emulator's own exit by a moment; the group goes with it.
      signalProcessGroup(pid, 'SIGKILL');
      resolveStop();
    });
    signalProcessGroup(pid, 'SIGTERM');
  });
}
