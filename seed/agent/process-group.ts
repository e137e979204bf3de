import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * A child started in its own process group and stopped as a group. The sidecar starts etcd (and tsx
 * starts node) as children of its own; a sidecar killed alone leaves them orphaned, still listening.
 * Every live group is also killed synchronously when this process exits, so a seed's whole process tree
 * goes with its agent.
 */
export class ProcessGroup {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private done = false;

  private constructor(command: string, args: readonly string[], options: SpawnOptions) {
    this.child = spawn(command, args, { ...options, detached: true });
    live.add(this);
    this.exited = new Promise((resolve) => {
      const finish = (code: number | null, signal: NodeJS.Signals | null) => {
        this.done = true;
        live.delete(this);
        resolve({ code, signal });
      };
      this.child.once('exit', finish);
      this.child.once('error', () => finish(null, null));
    });
  }

  static start(command: string, args: readonly string[], options: SpawnOptions = {}): ProcessGroup {
    installExitHook();
    return new ProcessGroup(command, args, options);
  }

  get running(): boolean {
    return !this.done;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** SIGTERM to the group (the leader shuts its children down), SIGKILL to the group after `timeoutMs`. */
  async stop(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.child.pid === undefined) return;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), options.timeoutMs ?? 10_000);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
    // The leader is gone; anything it left behind in the group goes now.
    this.signal('SIGKILL');
  }

  /** Signals every process of the group; a group that is already gone is fine. */
  signal(signal: NodeJS.Signals): void {
    if (this.child.pid !== undefined) signalProcessGroup(this.child.pid, signal);
  }
}

/** Signals every process of the group whose leader is `pid`; a group that is already gone is fine. */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): void {
  signalProcess(-pid, signal);
}

/** Signals one process (a group, for a negative `pid`); one that is already gone is fine. */
export function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Whether any process of the group whose leader was `pid` is still there (zombies not yet reaped count). */
export function processGroupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    // EPERM: the group exists but is not ours to signal.
    return true;
  }
}

/**
 * Whether process `pid` still runs. A zombie (exited, not yet reaped by its parent) does not: it holds no
 * port and no file, and only its parent can make it go.
 */
export function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // The command name (field 2) may contain ') ': the state follows the last one.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    // Gone between the signal and the read.
    return false;
  }
}

const live = new Set<ProcessGroup>();
let hooked = false;

function installExitHook(): void {
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const group of live) group.signal('SIGKILL');
  });
}
