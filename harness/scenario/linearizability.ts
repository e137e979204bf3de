import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HistoryRecorder } from './history.js';

/**
 * The linearizability checker (tools/linearizability: Porcupine with a register per key), built by
 * `npm run setup` into `.tools/bin/`, run over a history file. Histories and the visualizations of
 * failing ones are kept under `test-results/linearizability/` (git-ignored) as test artifacts.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const checkerBinary = join(root, '.tools/bin/linearizability');
export const historiesDir = join(root, 'test-results/linearizability');

/** The checker's one-line verdict (tools/linearizability/README.md). */
export interface LinearizabilityVerdict {
  readonly history: string;
  readonly result: 'linearizable' | 'not-linearizable' | 'timeout';
  readonly linearizable: boolean;
  /** Operations recorded in the file, distinct clients, distinct keys. */
  readonly operations: number;
  readonly clients: number;
  readonly keys: number;
  /** Checked by Porcupine: ok operations plus the puts of unknown outcome whose value a read returned. */
  readonly checked: number;
  readonly pendingPuts: number;
  /** Failed operations, reads without an answer and unobserved puts: they cannot change the verdict. */
  readonly leftOut: number;
  /** Puts of unknown outcome whose value no read returned (counted in `leftOut`). */
  readonly unobservedPuts: number;
  readonly illegalKeys: readonly string[];
  readonly illegalKeyCount: number;
  /** The HTML visualization, when one was written. */
  readonly visualization?: string;
  readonly checkMs: number;
}

export class LinearizabilityCheckerError extends Error {
  override readonly name = 'LinearizabilityCheckerError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export interface CheckHistoryOptions {
  /** When to write the HTML visualization next to the history. Default `failure`. */
  readonly visualize?: 'failure' | 'always' | 'never';
  /** Porcupine gives up after this (verdict `timeout`). Default 60 s. */
  readonly timeoutSeconds?: number;
}

/** Runs the checker over a history file; resolves with its verdict whatever it is. */
export async function checkHistoryFile(
  file: string,
  options: CheckHistoryOptions = {},
): Promise<LinearizabilityVerdict> {
  if (!existsSync(checkerBinary))
    throw new LinearizabilityCheckerError(`${checkerBinary} is missing: run npm run setup`);
  const args = ['-visualize', options.visualize ?? 'failure', '-timeout', `${options.timeoutSeconds ?? 60}s`, file];
  // Exit 0 linearizable, 1 not, 2 timeout: each prints a verdict. Exit 3 is bad usage or input.
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (done) => {
      execFile(checkerBinary, args, { maxBuffer: 1024 * 1024 }, (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
      );
    },
  );
  if (code === null || code > 2)
    throw new LinearizabilityCheckerError(`linearizability checker failed on ${file} (exit ${code}): ${stderr.trim()}`);
  try {
    return JSON.parse(stdout) as LinearizabilityVerdict;
  } catch (cause) {
    throw new LinearizabilityCheckerError(
      `linearizability checker printed no verdict for ${file}: ${stdout.slice(0, 200)}`,
      { cause },
    );
  }
}

/**
 * Writes `history` to `test-results/linearizability/<name>.jsonl`, checks it, prints the verdict as one
 * line (`linearizability <name>: {...}`) and returns it. A visualization left by an earlier run under
 * the same name is removed first, so that the one present belongs to this history.
 */
export async function checkHistory(
  name: string,
  history: HistoryRecorder,
  options: CheckHistoryOptions = {},
): Promise<LinearizabilityVerdict> {
  const file = join(historiesDir, `${name}.jsonl`);
  rmSync(join(historiesDir, `${name}.html`), { force: true });
  history.write(file);
  const verdict = await checkHistoryFile(file, options);
  console.log(
    `linearizability ${name}: ${JSON.stringify({ ...verdict, history: relative(root, verdict.history), visualization: verdict.visualization && relative(root, verdict.visualization) })}`,
  );
  return verdict;
}
