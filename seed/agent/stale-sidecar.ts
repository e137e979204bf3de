import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { processRunning, signalProcessGroup } from './process-group.js';

/**
 * A sidecar's process group outlives an agent that was killed (SIGKILL runs no exit hook), still serving
 * its etcd from the data dir. Before a restarted agent starts a sidecar on that data dir, the one left
 * running is stopped: two etcds must never share a data dir, and the new one must start fenced. The pid
 * file says which group it was; the process is only signalled while its command line still names the
 * same data dir, so a pid reused by another process is left alone.
 */
export async function stopStaleSidecar(input: {
  pidFile: string;
  dataDir: string;
  timeoutMs?: number;
  log?: (entry: Record<string, unknown>) => void;
}): Promise<void> {
  const pid = readPid(input.pidFile);
  if (pid === undefined || !runsWith(pid, input.dataDir)) return;
  input.log?.({ event: 'stale-sidecar-stopped', pid, dataDir: input.dataDir });
  signalProcessGroup(pid, 'SIGTERM');
  const deadline = Date.now() + (input.timeoutMs ?? 10_000);
  while (processRunning(pid) && Date.now() < deadline) await sleep(100);
  // The leader is gone or did not go in time: whatever is left of its group (etcd) goes now.
  signalProcessGroup(pid, 'SIGKILL');
  while (processRunning(pid)) await sleep(50);
}

/** Records the group of a sidecar just started (its leader's pid is the group id). */
export function recordSidecar(pidFile: string, pid: number | undefined): void {
  if (pid === undefined) rmSync(pidFile, { force: true });
  else writeFileSync(pidFile, String(pid));
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    // No file: no sidecar was started from this directory before.
    return undefined;
  }
}

function runsWith(pid: number, dataDir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(dataDir);
  } catch {
    // Gone (or no /proc): nothing to stop.
    return false;
  }
}
