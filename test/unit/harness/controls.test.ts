import { describe, expect, it } from 'vitest';
import { AgentControls, controlledKind } from '../../../harness/agent/controls.js';

describe('AgentControls', () => {
  it.each([
    { name: 'no controls', setup: (_c: AgentControls) => {}, decisions: ['run', 'run', 'run'] },
    {
      name: 'failOn migrate',
      setup: (c: AgentControls) => c.failOn('migrate', 'RuntimeUnavailable'),
      decisions: ['fail', 'run', 'fail'],
    },
    {
      name: 'failOn migrate once',
      setup: (c: AgentControls) => c.failOn('migrate', 'RuntimeUnavailable', { times: 1 }),
      decisions: ['fail', 'run', 'run'],
    },
    {
      name: 'silenceAfter migrate',
      setup: (c: AgentControls) => c.silenceAfter('migrate'),
      decisions: ['run', 'ignore', 'ignore'],
    },
    {
      name: 'silenceAfter restore',
      setup: (c: AgentControls) => c.silenceAfter('restore'),
      decisions: ['run', 'run', 'run'],
    },
  ])('$name', ({ setup, decisions }) => {
    // Prepare
    const controls = new AgentControls();
    setup(controls);
    const commands = [
      { type: 'migrate' as const, commandId: 'm/migrate-extensions' },
      { type: 'delete-control-plane' as const, commandId: 'm/delete-source-control-plane' },
      { type: 'migrate' as const, commandId: 'n/migrate-extensions' },
    ];

    // Act
    const kinds = commands.map((c) => controls.decide(c).kind);

    // Assess
    expect(kinds).toEqual(decisions);
  });

  it.each([
    {
      name: 'failOn restore: the normal restores, not the restore ahead',
      setup: (c: AgentControls) => c.failOn('restore', 'EtcdRestoreFailed'),
      decisions: ['run', 'fail', 'fail'],
    },
    {
      name: 'failOn restore-ahead: the restore ahead only',
      setup: (c: AgentControls) => c.failOn('restore-ahead', 'RuntimeUnavailable'),
      decisions: ['fail', 'run', 'run'],
    },
    {
      name: 'silenceAfter restore-ahead',
      setup: (c: AgentControls) => c.silenceAfter('restore-ahead'),
      decisions: ['run', 'ignore', 'ignore'],
    },
  ])('$name', ({ setup, decisions }) => {
    // Prepare: the destination's commands of one migration with a pre-copy.
    const controls = new AgentControls();
    setup(controls);
    const commands = [
      { type: 'restore' as const, commandId: 'm/restore-etcd-ahead', etcd: { ahead: true } },
      { type: 'restore' as const, commandId: 'm/restore-etcd', etcd: {} },
      { type: 'restore' as const, commandId: 'm/restore-extensions' },
    ];

    // Act / Assess
    expect(commands.map((c) => controls.decide(c).kind)).toEqual(decisions);
    expect(controlledKind(commands[0]!)).toBe('restore-ahead');
  });

  it('still answers a redelivery of the command it went silent after', () => {
    const controls = new AgentControls();
    controls.silenceAfter('migrate');
    controls.decide({ type: 'migrate', commandId: 'm/migrate-extensions' });

    expect(controls.decide({ type: 'migrate', commandId: 'm/migrate-extensions' }).kind).toBe('run');
    expect(controls.silenced).toBe('m/migrate-extensions');
  });

  it('refuses failure names the protocol does not know', () => {
    expect(() => new AgentControls().failOn('migrate', 'Nope' as never)).toThrow(RangeError);
  });
});
