import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { processRunning, signalProcessGroup } from './process-group.js';

/**
 * A process group the local runtime started outlives an agent that was killed (SIGKILL runs no exit hook):
 * a sidecar still serving its etcd from the data dir, a kube-apiserver still holding its port. Before a
 * restarted agent starts one again, the one left running is stopped: two etcds must never share a data dir
 * (and the new one must start fenced), two kube-apiservers never a port. The pid file says which group it
 * was; the process is only signalled while its command line still holds `argument` (the data dir, a file
 * only this plane's component is started with), so a pid reused by another process is left alone.
 */
export async function stopStaleProcess(input: {
  pidFile: string;
  argument: string;
  timeoutMs?: number;
  log?: (entry: Record<string, unknown>) => void;
}): Promise<void> {
  const pid = readPid(input.pidFile);
  if (pid === undefined || !runsWith(pid, input.argument)) return;
  input.log?.({ event: 'stale-process-stopped', pid, argument: input.argument });
  signalProcessGroup(pid, 'SIGTERM');
  const deadline = Date.now() + (input.timeoutMs ?? 10_000);
  while (processRunning(pid) && Date.now() < deadline) await sleep(100);
  // The leader is gone or did not go in time: whatever is left of its group (etcd) goes now.
  signalProcessGroup(pid, 'SIGKILL');
  while (processRunning(pid)) await sleep(50);
}

/** Records the group of a process just started (its leader's pid is the group id). */
export function recordProcess(pidFile: string, pid: number | undefined): void {
  if (pid === undefined) rmSync(pidFile, { force: true });
  else writeFileSync(pidFile, String(pid));
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    // No file: nothing was started from this directory before.
    return undefined;
  }
}

function runsWith(pid: number, argument: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(argument);
  } catch {
    // Gone (or no /proc): nothing to stop.
    return false;
  }
}
