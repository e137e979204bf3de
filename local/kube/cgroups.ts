import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killUntilNone, sleepSync } from './processes.js';

/**
 * The cgroup tree a test node's kubelet puts its pods in (its `cgroupRoot`), created at the same path
 * in every mounted hierarchy (cgroup v1 has one per controller; the kubelet and runc use them all), so
 * that a stop finds every container, a run killed before its teardown leaves a tree a later one finds,
 * and each pod's memory is measured.
 */

/** Mount points of the cgroup hierarchies (v1 and v2), from this process's mount table. */
export function cgroupHierarchies(): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter((line) => / - cgroup2? /.test(line))
    .map((line) => line.split(' ')[4]!)
    .filter((mount) => existsSync(join(mount, 'cgroup.procs')));
}

/** Whether the machine runs cgroup v1 (the kubelet's cgroupfs driver on v2 needs controllers this code does not delegate). */
export function cgroupV1(): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8').includes(' - cgroup cgroup ');
}

/** Creates `path` (and its parents) in every hierarchy; cpuset's children start with their parent's CPUs and memory nodes. */
export function createCgroup(path: string): void {
  for (const mount of cgroupHierarchies()) {
    let dir = mount;
    for (const part of path.split('/').filter(Boolean)) {
      const parent = dir;
      dir = join(dir, part);
      if (existsSync(dir)) continue;
      mkdirSync(dir);
      // Pseudo-files: read and written, not copied (their size is 0).
      for (const file of ['cpuset.cpus', 'cpuset.mems']) {
        if (existsSync(join(parent, file))) writeFileSync(join(dir, file), readFileSync(join(parent, file)));
      }
    }
  }
}

/** Every process in `root` or below, in any hierarchy. */
export function cgroupPids(root: string): number[] {
  const pids = new Set<number>();
  for (const mount of cgroupHierarchies()) {
    for (const dir of subtree(join(mount, root))) {
      for (const line of readIfExists(join(dir, 'cgroup.procs')).split('\n')) if (line) pids.add(Number(line));
    }
  }
  return [...pids];
}

/** SIGKILL to every process in the tree until none is left. */
export function killCgroupTree(root: string, timeoutMs = 10_000): void {
  killUntilNone(`cgroup ${root}`, () => cgroupPids(root), timeoutMs);
}

/** Removes the tree (deepest first) from every hierarchy; its processes must be gone (killCgroupTree). */
export function removeCgroupTree(root: string): void {
  for (const mount of cgroupHierarchies()) {
    for (const dir of subtree(join(mount, root)).reverse()) {
      for (let attempt = 0; ; attempt++) {
        try {
          rmdirSync(dir);
          break;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') break;
          // EBUSY: a task that has just been killed is still leaving.
          if (code !== 'EBUSY' || attempt >= 100) throw error;
          sleepSync(50);
        }
      }
    }
  }
}

/** The memory a cgroup's processes use (v1 `memory.stat`: resident anonymous memory and page cache, below it included). */
export function cgroupMemory(path: string): { rss: number; cache: number } | undefined {
  const mount = cgroupHierarchies().find((m) => existsSync(join(m, 'memory.stat')));
  if (!mount) return undefined;
  const stat = readIfExists(join(mount, path, 'memory.stat'));
  if (!stat) return undefined;
  const field = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(stat)?.[1] ?? 0);
  return { rss: field('total_rss'), cache: field('total_cache') };
}

/** `dir` and every cgroup below it, parents first. */
function subtree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const dirs = [dir];
  for (const name of readdirSync(dir)) {
    const child = join(dir, name);
    if (statSync(child).isDirectory()) dirs.push(...subtree(child));
  }
  return dirs;
}

function readIfExists(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    // The cgroup went away meanwhile (its last process exited and it was removed).
    return '';
  }
}
