import { Command } from 'commander';
import { registerBackupRestoreCommand } from './backup-restore-command.js';

/**
 * `gardenless backup-restore …` alone: the entry point the local runtime starts its sidecars with. It
 * loads only the sidecar's modules, so a sidecar process starts in a third of the full CLI's time, which
 * counts three times over when the members of an HA shoot's etcd start or restore together.
 */
const program = new Command('gardenless');
registerBackupRestoreCommand(program);
try {
  await program.parseAsync(process.argv);
} catch (error) {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
