import { readdirSync, readlinkSync } from 'node:fs';

/** `mnt:[4026532179]`: the identity of a process's namespace of `kind`, as /proc shows it. */
export function namespaceOf(pid: number, kind: 'mnt' | 'net'): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/${kind}`);
  } catch {
    // It exited meanwhile.
    return undefined;
  }
}

/** Every process in the namespace `id` (of `kind`). */
export function namespaceMembers(kind: 'mnt' | 'net', id: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => pid !== process.pid && namespaceOf(pid, kind) === id);
}

/** SIGKILL to every process of the namespace until none is left; the namespace ends with its last one. */
export function killNamespaceMembers(kind: 'mnt' | 'net', id: string, timeoutMs = 10_000): void {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = namespaceMembers(kind, id);
    if (pids.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`namespace ${id}: processes ${pids.join(', ')} still alive ${timeoutMs} ms after SIGKILL`);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
}
