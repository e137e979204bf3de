import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  ProcessGroup,
  processGroupAlive,
  processRunning,
  signalProcessGroup,
} from '../../../seed/agent/process-group.js';
import { until } from '../../../harness/until.js';

describe('process groups', () => {
  it('stops a leader and the child it started, and says when the group is gone', async () => {
    // Prepare: a shell leading its own group, with a sleep of its own that a signal to the shell alone would orphan.
    const group = ProcessGroup.start('sh', ['-c', 'sleep 30 & wait'], { stdio: 'ignore' });
    const pid = group.pid!;
    expect(processGroupAlive(pid)).toBe(true);
    expect(processRunning(pid)).toBe(true);

    // Act
    await group.stop({ timeoutMs: 5_000 });

    // Assess: the sleep was killed with the group; once init has reaped it, nothing of the group is left.
    expect(processRunning(pid)).toBe(false);
    await until('the orphaned sleep reaped', () => !processGroupAlive(pid), { timeoutMs: 5_000, intervalMs: 20 });
  });

  it('signals a group by its leader, and a group already gone is no error', async () => {
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const exited = once(child, 'exit');

    signalProcessGroup(child.pid!, 'SIGKILL');

    expect(await exited).toEqual([null, 'SIGKILL']);
    expect(processRunning(child.pid!)).toBe(false);
    expect(() => signalProcessGroup(child.pid!, 'SIGTERM')).not.toThrow();
  });

  it('does not count a zombie as running', async () => {
    // Prepare: a parent that forks a child which exits at once, and never reaps it (a shell might).
    const group = ProcessGroup.start(
      'python3',
      ['-c', 'import os, time\npid = os.fork()\nif pid == 0: os._exit(0)\nprint(pid, flush=True)\ntime.sleep(30)'],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const [line] = (await once(group.child.stdout!, 'data')) as [Buffer];
    const zombie = Number(line.toString().trim());
    await until('the child to exit', () => !processRunning(zombie), { timeoutMs: 5_000, intervalMs: 20 });

    // Assess: the signal still reaches it, but it does not run.
    expect(() => process.kill(zombie, 0)).not.toThrow();
    expect(processRunning(zombie)).toBe(false);
    expect(processRunning(group.pid!)).toBe(true);
    await group.stop();
  });
});
