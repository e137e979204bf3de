import { describe, expect, it } from 'vitest';
import { AgentControls } from '../../harness/agent/controls.js';

describe('AgentControls', () => {
  it.each([
    { name: 'no controls', setup: (_c: AgentControls) => {}, decisions: ['run', 'run', 'run'] },
    { name: 'failOn migrate', setup: (c: AgentControls) => c.failOn('migrate', 'RuntimeUnavailable'), decisions: ['fail', 'run', 'fail'] },
    { name: 'failOn migrate once', setup: (c: AgentControls) => c.failOn('migrate', 'RuntimeUnavailable', { times: 1 }), decisions: ['fail', 'run', 'run'] },
    { name: 'silenceAfter migrate', setup: (c: AgentControls) => c.silenceAfter('migrate'), decisions: ['run', 'ignore', 'ignore'] },
    { name: 'silenceAfter restore', setup: (c: AgentControls) => c.silenceAfter('restore'), decisions: ['run', 'run', 'run'] },
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
