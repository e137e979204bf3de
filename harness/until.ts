import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface UntilOptions {
  /** Default 90 s: generous, a loaded machine is slow, and a passing wait ends as soon as it holds. */
  timeoutMs?: number;
  /** Default 300 ms. */
  intervalMs?: number;
  /**
   * A log file whose last lines the timeout's message carries (an agent's, etcd's): what went wrong is there.
   * `matching`: only the lines that contain it (an agent's lines about one shoot).
   */
  logTail?: string | { file: string; lines?: number; matching?: string };
  /** More for the timeout's message: the last report, lines logged in memory. */
  explain?: () => unknown;
}

export class UntilTimeoutError extends Error {
  override readonly name = 'UntilTimeoutError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Polls `fn` until it gives a truthy value and returns that. An error from `fn` counts as "not yet" (a
 * server still starting, a gateway's 502); after `timeoutMs` it throws, naming `what`, the last error,
 * `explain`'s answer and the tail of `logTail`.
 */
export async function until<T>(
  what: string,
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  options: UntilOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 90_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let lastError: unknown;
    try {
      const value = await fn();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const parts = [`timed out after ${timeoutMs} ms waiting for ${what}`];
      if (lastError !== undefined)
        parts.push(`last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`);
      if (options.explain) parts.push(await describe(options.explain));
      if (options.logTail) parts.push(logTail(options.logTail));
      throw new UntilTimeoutError(parts.join('\n'), lastError === undefined ? undefined : { cause: lastError });
    }
    await sleep(options.intervalMs ?? 300);
  }
}

async function describe(explain: () => unknown): Promise<string> {
  try {
    const said = await explain();
    return typeof said === 'string' ? said : JSON.stringify(said);
  } catch (error) {
    return `(explaining failed: ${String(error)})`;
  }
}

/** The last lines of a log file (of those containing `matching`, where given), headed by its name. */
export function logTail(tail: NonNullable<UntilOptions['logTail']>): string {
  const { file, lines = 30, matching } = typeof tail === 'string' ? { file: tail } : tail;
  if (!existsSync(file)) return `--- ${file}: no such file ---`;
  const all = readFileSync(file, 'utf8').trimEnd().split('\n');
  const kept = matching === undefined ? all : all.filter((l) => l.includes(matching));
  const which = matching === undefined ? '' : ` containing ${matching}`;
  return `--- last ${lines} lines${which} of ${file} ---\n${kept.slice(-lines).join('\n')}`;
}

/** `until` with defaults of a suite's own (its timeout, its logs to show), which a call's options override. */
export function untilWith(defaults: UntilOptions): typeof until {
  return (what, fn, options = {}) => until(what, fn, { ...defaults, ...options });
}
