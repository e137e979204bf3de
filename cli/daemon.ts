/** What the long-running commands (seed-agent, backup-restore serve) share: their log and their shutdown. */

export type DaemonLog = (entry: Record<string, unknown>) => void;

/** One JSON line on stderr, stamped: stdout stays for what a command prints as its answer. */
export const logLine: DaemonLog = (entry) => {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
};

/**
 * Resolves once SIGTERM or SIGINT came and `stop` has finished: the command then returns and the process
 * ends. A stop that fails is logged, not thrown: the process must end either way. Only the first signal
 * stops gracefully; a second one (either) meets Node's default and ends the process at once, as a second
 * Ctrl-C does.
 */
export function untilSignalled(stop: () => Promise<void>, log: DaemonLog = logLine): Promise<void> {
  return new Promise((resolve) => {
    const onTerm = () => shutdown('SIGTERM');
    const onInt = () => shutdown('SIGINT');
    const shutdown = (signal: NodeJS.Signals) => {
      process.removeListener('SIGTERM', onTerm).removeListener('SIGINT', onInt);
      log({ event: 'shutdown', signal });
      stop().then(resolve, (error: unknown) => {
        log({ event: 'shutdown-failed', error: String(error) });
        resolve();
      });
    };
    process.once('SIGTERM', onTerm).once('SIGINT', onInt);
  });
}
