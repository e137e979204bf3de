import { Command } from 'commander';
import { registerBackupRestoreCommand } from '../../../cli/backup-restore-command.js';

/**
 * The program as `gardenless` builds it (its own global --region, cli/program.ts, and the sidecar's
 * commands), every subcommand's action replaced by one that keeps what commander handed it.
 */
export function backupRestoreProgram(): { program: Command; seen: () => Record<string, unknown> } {
  const p = new Command('gardenless').option('--region <region>', 'AWS region for SigV4 signing').exitOverride();
  const group = registerBackupRestoreCommand(p);
  let seen: Record<string, unknown> = {};
  for (const sub of group.commands) sub.exitOverride().action((flags: Record<string, unknown>) => void (seen = flags));
  return { program: p, seen: () => seen };
}
