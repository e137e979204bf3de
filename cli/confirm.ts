import { createInterface } from 'node:readline';

/** The operator did not confirm a destructive command; nothing was done. */
export class NotConfirmedError extends Error {
  constructor(what: string) {
    super(`${what} not confirmed; nothing done (answer y, or pass --yes)`);
    this.name = 'NotConfirmedError';
  }
}

/**
 * Asks `question` on stderr and reads one answer line from stdin (a terminal or a pipe, so that scripts
 * can answer); `yes` skips the question. True only for y or yes.
 */
export async function confirm(
  question: string,
  options: { yes?: boolean; input?: NodeJS.ReadableStream; output?: NodeJS.WritableStream } = {},
): Promise<boolean> {
  if (options.yes) return true;
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stderr;
  output.write(`${question} [y/N] `);
  const rl = createInterface({ input, terminal: false });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.once('line', resolve);
      rl.once('close', () => resolve(''));
    });
    if (!(input as { isTTY?: boolean }).isTTY) output.write('\n');
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    rl.close();
  }
}

/** Asks, and throws NotConfirmedError unless the answer is yes. */
export async function requireConfirmation(
  what: string,
  question: string,
  options: { yes?: boolean } = {},
): Promise<void> {
  if (!(await confirm(question, options))) throw new NotConfirmedError(what);
}
