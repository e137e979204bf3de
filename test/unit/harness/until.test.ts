import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logTail, until, UntilTimeoutError } from '../../../harness/until.js';

describe('until', () => {
  it('returns the first truthy value, polling through falsy values and errors', async () => {
    let calls = 0;
    const value = await until(
      'the third call',
      () => {
        calls += 1;
        if (calls === 1) throw new Error('not started yet');
        return calls === 3 ? { calls } : false;
      },
      { intervalMs: 1 },
    );
    expect(value).toEqual({ calls: 3 });
  });

  it('times out naming what it waited for, the last error, the explanation and the tail of the log', async () => {
    // Prepare: a log of 50 lines.
    const log = join(mkdtempSync(join(tmpdir(), 'gl-until-')), 'agent.log');
    writeFileSync(log, Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n'));
    const cause = new Error('connection refused');

    // Act
    const error = await until(
      'the agent to report',
      () => {
        throw cause;
      },
      { timeoutMs: 20, intervalMs: 5, logTail: { file: log, lines: 3 }, explain: () => ({ report: 'none' }) },
    ).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(UntilTimeoutError);
    expect((error as Error).cause).toBe(cause);
    expect((error as Error).message).toBe(
      [
        'timed out after 20 ms waiting for the agent to report',
        'last error: connection refused',
        '{"report":"none"}',
        `--- last 3 lines of ${log} ---`,
        'line 48',
        'line 49',
        'line 50',
      ].join('\n'),
    );
  });

  it('tails only the lines that contain what it is asked to match', () => {
    const log = join(mkdtempSync(join(tmpdir(), 'gl-until-')), 'agent.log');
    writeFileSync(log, Array.from({ length: 50 }, (_, i) => `line ${i + 1} shoot-${i % 2 ? 'a' : 'b'}`).join('\n'));
    expect(logTail({ file: log, lines: 2, matching: 'shoot-a' })).toBe(
      [`--- last 2 lines containing shoot-a of ${log} ---`, 'line 48 shoot-a', 'line 50 shoot-a'].join('\n'),
    );
  });

  it('says so when the log file to tail does not exist', async () => {
    const error = await until('nothing', () => false, { timeoutMs: 0, logTail: '/nonexistent/agent.log' }).catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toBe(
      'timed out after 0 ms waiting for nothing\n--- /nonexistent/agent.log: no such file ---',
    );
  });
});
