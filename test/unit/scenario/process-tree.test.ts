import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { killProcessTree, processTree } from '../../../harness/scenario/process-tree.js';

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone: what the test wanted.
    }
  }
});

const gone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false;
  } catch {
    return true;
  }
};

describe('killProcessTree', () => {
  it('kills a child and a grandchild that runs in its own process group, as a sidecar does', async () => {
    // Prepare: sh (the "agent") starts a detached node (the "sidecar", own group) that starts a sleep (its "etcd").
    const script = `require('node:child_process').spawn('sleep', ['30'], { stdio: 'ignore' }); setTimeout(() => undefined, 30000);`;
    const root = spawn('sh', ['-c', `setsid ${process.execPath} -e "${script}" & sleep 30`], { stdio: 'ignore' });
    started.push(root.pid!);
    let tree: number[] = [];
    for (let i = 0; i < 100 && tree.length < 4; i++) {
      await new Promise((r) => setTimeout(r, 20));
      tree = processTree(root.pid!);
    }
    started.push(...tree);
    expect(tree.length).toBeGreaterThanOrEqual(4);
    // Act
    const killed = await killProcessTree(root.pid!);
    // Assess
    expect(killed.sort()).toEqual([...tree].sort());
    for (const pid of tree) expect(gone(pid)).toBe(true);
  });

  it('a pid that no longer exists is an empty tree', async () => {
    expect(await killProcessTree(2 ** 22 + 1)).toEqual([]);
  });
});
