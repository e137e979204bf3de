import { describe, expect, it } from 'vitest';
import { backupRestoreProgram as program } from './backup-restore-program.js';

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
