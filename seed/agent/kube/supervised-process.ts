import { closeSync, createWriteStream, fstatSync, mkdirSync, openSync, readSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { ProcessGroup } from '../process-group.js';
import { recordProcess, stopStaleProcess } from '../stale-process.js';

export interface SupervisedLaunch {
  /** For logs: `<technicalID>/<component>`. */
  name: string;
  /** Called before every start (certificates and ports are prepared there): what to run. */
  prepare: () => Promise<{ command: string; args: readonly string[]; env?: NodeJS.ProcessEnv }>;
  /** stdout and stderr are appended here. */
  logFile: string;
  /**
   * Where the running group's leader is recorded: a group an earlier agent left running (killed, so no exit
   * hook ran) is stopped before this one starts, if its command line still holds the same first argument.
   */
  pidFile: string;
  /** Before a process that died is started again: 1 s, doubling to 30 s; back to 1 s after a minute of running. */
  restartDelayMs?: number;
  log?: (entry: Record<string, unknown>) => void;
}

const MAX_DELAY_MS = 30_000;
const STABLE_MS = 60_000;

/**
 * One long-running process of a control plane (kube-apiserver, kube-controller-manager, kube-scheduler) in
 * its own process group, started again when it dies while it should run, with a growing delay, as a
 * kubelet restarts a container (CrashLoopBackOff). `stop` ends it and every process it started.
 */
export class SupervisedProcess {
  private group: ProcessGroup | undefined;
  private wanted = false;
  private timer: NodeJS.Timeout | undefined;
  private delay: number;
  private startedAt = 0;
  private log: WriteStream | undefined;
  private frozen = false;
  /** How often it was started again after dying. */
  restarts = 0;
  lastExit: { code: number | null; signal: NodeJS.Signals | null; at: string } | undefined;

  constructor(private readonly launch: SupervisedLaunch) {
    this.delay = launch.restartDelayMs ?? 1_000;
  }

  get running(): boolean {
    return this.group?.running ?? false;
  }

  get pid(): number | undefined {
    return this.group?.running ? this.group.pid : undefined;
  }

  /** Starts it unless it runs; it is kept running until `stop`. */
  async start(): Promise<void> {
    this.wanted = true;
    if (this.group?.running) return;
    clearTimeout(this.timer);
    await this.spawn();
  }

  async stop(timeoutMs = 10_000): Promise<void> {
    this.wanted = false;
    clearTimeout(this.timer);
    const group = this.group;
    this.group = undefined;
    if (this.frozen) group?.signal('SIGCONT');
    this.frozen = false;
    await group?.stop({ timeoutMs });
    this.log?.end();
    this.log = undefined;
  }

  /** A test seam: SIGSTOP (a hung server: connections open, nothing answers) or SIGCONT. */
  freeze(frozen: boolean): void {
    this.frozen = frozen;
    this.group?.signal(frozen ? 'SIGSTOP' : 'SIGCONT');
  }

  /** Kills it as a crash would (SIGKILL to its group): the supervisor starts it again. */
  kill(): void {
    this.group?.signal('SIGKILL');
  }

  private async spawn(): Promise<void> {
    const { command, args, env } = await this.launch.prepare();
    if (!this.wanted) return;
    if (args[0] !== undefined)
      await stopStaleProcess({
        pidFile: this.launch.pidFile,
        argument: args[0],
        ...(this.launch.log ? { log: this.launch.log } : {}),
      });
    mkdirSync(dirname(this.launch.logFile), { recursive: true });
    this.log ??= createWriteStream(this.launch.logFile, { flags: 'a' });
    const group = ProcessGroup.start(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(env ? { env } : {}),
    });
    this.group = group;
    recordProcess(this.launch.pidFile, group.pid);
    this.startedAt = Date.now();
    group.child.stdout?.pipe(this.log, { end: false });
    group.child.stderr?.pipe(this.log, { end: false });
    void group.exited.then((exit) => this.exited(group, exit));
  }

  private exited(group: ProcessGroup, exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    if (this.group !== group) return;
    this.lastExit = { ...exit, at: new Date().toISOString() };
    if (!this.wanted) return;
    if (Date.now() - this.startedAt > STABLE_MS) this.delay = this.launch.restartDelayMs ?? 1_000;
    this.launch.log?.({
      event: 'component-exited',
      component: this.launch.name,
      ...exit,
      restartInMs: this.delay,
      // As a kubelet's "last state: terminated" message: why it died is usually in its last lines.
      lastLines: lastLines(this.launch.logFile, 3),
    });
    this.restartLater();
  }

  private restartLater(): void {
    this.timer = setTimeout(() => {
      if (!this.wanted || this.group?.running) return;
      this.restarts += 1;
      this.spawn().catch((error: unknown) => {
        this.launch.log?.({ event: 'component-start-failed', component: this.launch.name, error: String(error) });
        if (this.wanted) this.restartLater();
      });
    }, this.delay);
    this.delay = Math.min(this.delay * 2, MAX_DELAY_MS);
  }
}

/** The last `count` lines of a log, read from its last 4 KiB (a kube-apiserver's log grows large). */
function lastLines(file: string, count: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.min(size, 4096));
    readSync(fd, buffer, 0, buffer.length, size - buffer.length);
    return buffer.toString('utf8').trimEnd().split('\n').slice(-count).join(' | ');
  } catch {
    return '(no log)';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
