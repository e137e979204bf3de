import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerBackupRestoreCommand } from '../../../cli/backup-restore-command.js';

/** The program as `gardenless` builds it: its own global --region (cli/program.ts), the sidecar's commands. */
function program(): { program: Command; seen: () => Record<string, unknown> } {
  const p = new Command('gardenless').option('--region <region>', 'AWS region for SigV4 signing').exitOverride();
  const group = registerBackupRestoreCommand(p);
  let seen: Record<string, unknown> = {};
  for (const sub of group.commands) sub.action((flags: Record<string, unknown>) => void (seen = flags));
  return { program: p, seen: () => seen };
}

describe('gardenless backup-restore --region', () => {
  it.each([
    [
      'serve after its own flags',
      [
        'backup-restore',
        'serve',
        '--technical-id',
        't',
        '--owner-record',
        'o',
        '--identity',
        'i',
        '--bucket',
        'b',
        '--data-dir',
        'd',
        '--region',
        'eu-west-1',
      ],
    ],
    [
      'serve before the command',
      [
        '--region',
        'eu-west-1',
        'backup-restore',
        'serve',
        '--technical-id',
        't',
        '--owner-record',
        'o',
        '--identity',
        'i',
        '--bucket',
        'b',
        '--data-dir',
        'd',
      ],
    ],
    [
      'restore',
      ['backup-restore', 'restore', '--technical-id', 't', '--bucket', 'b', '--data-dir', 'd', '--region', 'eu-west-1'],
    ],
    [
      'copy',
      [
        'backup-restore',
        'copy',
        '--technical-id',
        't',
        '--source-bucket',
        'a',
        '--destination-bucket',
        'b',
        '--region',
        'eu-west-1',
      ],
    ],
  ])('reaches %s (the program has a --region of its own)', async (_case, args) => {
    // Prepare
    const { program: p, seen } = program();
    // Act
    await p.parseAsync(args, { from: 'user' });
    // Assess: where AWS_REGION is not set (a pod), this is the only region the S3 and Route 53 clients get.
    expect(seen().region).toBe('eu-west-1');
  });

  it('stays unset when none is given (the SDK then reads AWS_REGION)', async () => {
    const { program: p, seen } = program();
    await p.parseAsync(['backup-restore', 'restore', '--technical-id', 't', '--bucket', 'b', '--data-dir', 'd'], {
      from: 'user',
    });
    expect(seen().region).toBeUndefined();
  });
});
