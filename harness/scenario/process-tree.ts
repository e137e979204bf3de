import { readdirSync, readFileSync } from 'node:fs';
import { processRunning } from '../../seed/agent/process-group.js';

/**
 * Stopping a seed in S3 means its whole process tree: the agent and every sidecar and etcd below it.
 * Sidecars run in their own process groups (so that the agent can stop one without the others), so a
 * signal to the agent's group does not reach them; this walks the parent links in /proc instead.
 */

export class ProcessTreeError extends Error {
  override readonly name = 'ProcessTreeError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Parent pid of every process visible in /proc (Linux only). */
function parents(): Map<number, number> {
  const result = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (field 2) may contain spaces and parentheses: read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      result.set(Number(entry), ppid);
    } catch {
      // The process exited between the listing and the read: it is no longer part of any tree.
    }
  }
  return result;
}

/** `pid` and all its descendants, parents before children. */
export function processTree(pid: number): number[] {
  const byParent = new Map<number, number[]>();
  for (const [child, parent] of parents()) byParent.set(parent, [...(byParent.get(parent) ?? []), child]);
  const tree: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift()!;
    tree.push(next);
    queue.push(...(byParent.get(next) ?? []));
  }
  return tree;
}

/**
 * SIGSTOP the whole tree first (so nothing forks or restarts a child while we walk), then SIGKILL it:
 * a crash of the machine, not a graceful stop. Resolves once every process is gone, or throws after
 * `timeoutMs` naming the survivors.
 */
export async function killProcessTree(pid: number, options: { timeoutMs?: number } = {}): Promise<number[]> {
  const stopped = new Set<number>();
  // Repeat the walk until no new descendant appears: a child forked during the first walk is caught by the second.
  for (let round = 0; round < 5; round++) {
    const tree = processTree(pid).filter((p) => !stopped.has(p));
    if (tree.length === 0) break;
    for (const p of tree) {
      try {
        process.kill(p, 'SIGSTOP');
        stopped.add(p);
      } catch {
        // Already gone.
      }
    }
  }
  for (const p of stopped) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  const deadline = Date.now() + (options.timeoutMs ?? 5_000);
  // Zombies of our own children are gone enough: their parent (us, for the root) reaps them.
  while ([...stopped].some(processRunning)) {
    if (Date.now() > deadline)
      throw new ProcessTreeError(
        `processes of tree ${pid} still alive after SIGKILL: ${[...stopped].filter(processRunning).join(', ')}`,
      );
    await new Promise((r) => setTimeout(r, 20));
  }
  return [...stopped];
}
