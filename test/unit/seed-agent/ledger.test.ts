import { describe, expect, it } from 'vitest';
import { COMMAND_API_VERSION, commandSuccess, type CommandOf } from '../../../core/commands/index.js';
import { CommandLedger, type CommandAnswer } from '../../../seed/agent/ledger.js';

const shoot = { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' };
const envelope = { apiVersion: COMMAND_API_VERSION, shoot, issuedAt: '2025-01-01T00:00:00.000Z' } as const;
const success = (commandId: string): CommandAnswer => ({
  kind: 'success',
  output: commandSuccess(
    {
      ...envelope,
      seed: 'src',
      commandId,
      type: 'restart',
      pod: 'p',
      dependency: 'kube-apiserver',
    } as CommandOf<'restart'>,
    { pod: 'p', restarted: true },
    new Date(0),
  ),
});

describe('CommandLedger', () => {
  it('runs a command once, attaches a second token while it runs, and answers both', () => {
    // Prepare
    const ledger = new CommandLedger();

    // Act
    const first = ledger.begin('m/1', 't1');
    const second = ledger.begin('m/1', 't2');
    const tokens = ledger.finish('m/1', success('m/1'));

    // Assess
    expect(first).toEqual({ action: 'run' });
    expect(second).toEqual({ action: 'attached' });
    expect(tokens).toEqual(['t1', 't2']);
  });

  it('replays a recorded success to a retried command with a new token', () => {
    const ledger = new CommandLedger();
    ledger.begin('m/1', 't1');
    const answer = success('m/1');
    ledger.finish('m/1', answer);

    expect(ledger.begin('m/1', 't3')).toEqual({ action: 'replay', answer });
  });

  it('forgets a failure, so that a resumed migration runs the command again', () => {
    const ledger = new CommandLedger();
    ledger.begin('m/restore-etcd', 't1');
    ledger.finish('m/restore-etcd', { kind: 'failure', error: 'EtcdRestoreFailed', cause: '{}' });

    expect(ledger.begin('m/restore-etcd', 't2')).toEqual({ action: 'run' });
  });
});
