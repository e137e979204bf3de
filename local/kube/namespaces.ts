import { readdirSync, readlinkSync } from 'node:fs';
import { killUntilNone } from './processes.js';

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
  killUntilNone(`namespace ${id}`, () => namespaceMembers(kind, id), timeoutMs);
}
