import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { signalProcess } from '../../seed/agent/process-group.js';

/** A process of a test seed cluster that did not come up; `logFile` says why. */
export class KubeClusterError extends Error {
  constructor(
    message: string,
    readonly logFile?: string,
    options?: { cause?: unknown },
  ) {
    super(logFile ? `${message}\n--- last lines of ${logFile} ---\n${tail(logFile, 30)}` : message, options);
    this.name = 'KubeClusterError';
  }
}

export interface StartedProcess {
  name: string;
  child: ChildProcess;
  logFile: string;
}

/** Starts one process of a cluster, its output in `<dir>/<name>.log`; how (namespaces, cgroups) is the caller's. */
export type StartProcess = (name: string, command: string, args: string[]) => StartedProcess;

/**
 * A `StartProcess` that runs each process in its own process group (so that a stop reaches its
 * children), detached from this one, and records its group in `groups`.
 */
export function processStarter(
  dir: string,
  groups: { name: string; pgid: number }[],
  wrap: (
    name: string,
    command: string,
    args: string[],
  ) => { command: string; args: string[]; env?: NodeJS.ProcessEnv } = (_name, command, args) => ({ command, args }),
): StartProcess {
  return (name, command, args) => {
    const logFile = join(dir, `${name}.log`);
    const out = openSync(logFile, 'a');
    const wrapped = wrap(name, command, args);
    const child = spawn(wrapped.command, wrapped.args, {
      stdio: ['ignore', out, out],
      detached: true,
      cwd: dir,
      ...(wrapped.env ? { env: wrapped.env } : {}),
    });
    child.unref();
    if (child.pid === undefined) throw new KubeClusterError(`${name} did not start`, logFile);
    groups.push({ name, pgid: child.pid });
    return { name, child, logFile };
  };
}

export function httpsStatus(url: string, token: string, ca: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` }, ca, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** Polls `check` until it holds; fails at once, with its log, when one of `processes` exits. */
export async function waitFor(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
  processes: { child: { exitCode: number | null }; logFile: string }[],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const dead = processes.find((p) => p.child.exitCode !== null);
    if (dead)
      throw new KubeClusterError(
        `waiting for ${what}: a process exited with code ${dead.child.exitCode}`,
        dead.logFile,
      );
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new KubeClusterError(
        `${what} not reached within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`,
        processes.at(-1)?.logFile,
        { cause: last },
      );
    }
    await sleep(250);
  }
}

export function tail(file: string, lines: number): string {
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * SIGKILL to every process `pids` lists until it lists none (a process forked meanwhile is found by the
 * next round); throws naming `what` when some outlive `timeoutMs`. Synchronous: it also runs at exit.
 */
export function killUntilNone(what: string, pids: () => number[], timeoutMs = 10_000): void {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = pids();
    if (left.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`${what}: processes ${left.join(', ')} still alive ${timeoutMs} ms after SIGKILL`);
    for (const pid of left) signalProcess(pid, 'SIGKILL');
    sleepSync(50);
  }
}

export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
