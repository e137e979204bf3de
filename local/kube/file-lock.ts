import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Runs `fn` holding an exclusive flock(1) on `path`, the lock the project's shell scripts take
 * (scripts/build-kube.sh), so that two processes building into the shared .tools/ (a test run, the
 * background build, another worktree) build once: the second waits. A child `flock` holds the lock
 * while its stdin is open: it ends when this process closes it, or dies.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
  mkdirSync(dirname(path), { recursive: true });
  const holder = spawn('flock', [path, 'sh', '-c', 'echo locked; exec cat >/dev/null'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      holder.once('error', reject);
      holder.once('exit', (code) => reject(new Error(`flock ${path} exited with ${code}`)));
      holder.stdout.once('data', () => resolve());
    });
    return await fn();
  } finally {
    holder.stdin.end();
    await exited;
  }
}
