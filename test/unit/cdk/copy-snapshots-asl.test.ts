import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PERMANENT_TASK_ERRORS, TRANSIENT_TASK_ERRORS } from '../../../functions/shared/task-errors.js';

const require = createRequire(import.meta.url);
const validator = require('asl-validator') as (definition: unknown) => { isValid: boolean; errorsText: () => string };

const FILE = join(import.meta.dirname, '..', '..', '..', 'state-machines', 'copy-snapshots.asl.json');
const raw = readFileSync(FILE, 'utf8');

interface Retrier {
  ErrorEquals: string[];
  JitterStrategy?: string;
  MaxAttempts?: number;
}
interface State {
  Type: string;
  Resource?: string;
  Retry?: Retrier[];
  Catch?: { ErrorEquals: string[]; Next: string }[];
  ItemProcessor?: { States: Record<string, State> };
}

/** The definition as CDK deploys it: every `${...}` replaced by a function ARN. */
function substituted(): { States: Record<string, State> } {
  return JSON.parse(
    raw.replace(/\$\{(\w+)\}/g, (_, name: string) => `arn:aws:lambda:eu-west-1:123456789012:function:${name}`),
  ) as { States: Record<string, State> };
}

function allStates(states: Record<string, State>): [string, State, State | undefined][] {
  return Object.entries(states).flatMap(([name, s]) => [
    [name, s, undefined] as [string, State, State | undefined],
    ...(s.ItemProcessor
      ? allStates(s.ItemProcessor.States).map(([n, inner]) => [n, inner, s] as [string, State, State | undefined])
      : []),
  ]);
}

describe('state-machines/copy-snapshots.asl.json', () => {
  it('is valid ASL once its substitutions are applied', () => {
    const result = validator(substituted());
    expect(result.errorsText()).toBe('');
    expect(result.isValid).toBe(true);
  });

  it('substitutes exactly the six task functions', () => {
    const names = new Set([...raw.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]));
    expect([...names].sort()).toEqual([
      'CopyBatchFunctionArn',
      'FindFinalFunctionArn',
      'PlanFunctionArn',
      'SummariseFunctionArn',
      'ValidateFunctionArn',
      'VerifyFunctionArn',
    ]);
  });

  const tasks = allStates(substituted().States).filter(([, s]) => s.Type === 'Task');

  it.each(tasks.map(([name, s, parent]) => ({ name, s, parent })))(
    'task $name retries named transient errors with jitter, never a catch-all',
    ({ s }) => {
      expect(s.Retry?.length).toBeGreaterThan(0);
      for (const r of s.Retry ?? []) {
        expect(r.JitterStrategy).toBe('FULL');
        expect(r.ErrorEquals).not.toContain('States.ALL');
        expect(r.ErrorEquals).not.toContain('States.TaskFailed');
        for (const e of r.ErrorEquals)
          expect(
            [...TRANSIENT_TASK_ERRORS, 'States.Timeout', 'Sandbox.Timedout'].includes(e as never) ||
              e.startsWith('Lambda.'),
          ).toBe(true);
      }
    },
  );

  it.each(tasks.map(([name, s, parent]) => ({ name, s, parent })))(
    'task $name (or its Map) catches permanent errors apart from exhausted retries',
    ({ s, parent }) => {
      const catches = (s.Catch ?? parent?.Catch)!;
      expect(catches).toBeDefined();
      const rejected = catches.find((c) => c.Next === 'Rejected');
      const gaveUp = catches.find((c) => c.Next === 'GaveUpRetrying');
      for (const name of [
        'SnapshotStoreMissingBucket',
        'SnapshotStoreAccessDenied',
        'EmptySource',
        'NoSnapshotBeforeTimeout',
        'InvalidInput',
      ])
        expect(rejected?.ErrorEquals).toContain(name);
      expect(gaveUp?.ErrorEquals).toEqual(
        expect.arrayContaining(['SnapshotStoreThrottled', 'SnapshotStoreUnavailable', 'Lambda.ServiceException']),
      );
      for (const c of catches) expect(c.ErrorEquals).not.toContain('States.ALL');
      // No error is both "give up" and "try again later".
      expect(rejected?.ErrorEquals.filter((e) => gaveUp?.ErrorEquals.includes(e))).toEqual([]);
    },
  );

  it('a pre-copy goes from Validate straight to Plan: no wait for a final snapshot', () => {
    const states = substituted().States as Record<
      string,
      State & {
        Next?: string;
        Default?: string;
        Choices?: { Variable: string; BooleanEquals?: boolean; Next: string }[];
      }
    >;
    expect(states.Validate?.Next).toBe('PreCopy?');
    expect(states['PreCopy?']).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.config.precopy', BooleanEquals: true, Next: 'Plan' }],
      Default: 'FindFinal',
    });
  });

  it('names only errors the task functions throw', () => {
    const named = new Set(
      tasks.flatMap(([, s, parent]) =>
        [...(s.Retry ?? []), ...(s.Catch ?? parent?.Catch ?? [])].flatMap((r) => r.ErrorEquals),
      ),
    );
    const known = new Set<string>([
      ...TRANSIENT_TASK_ERRORS,
      ...PERMANENT_TASK_ERRORS,
      'States.Timeout',
      'Sandbox.Timedout',
    ]);
    for (const e of named) expect(known.has(e) || e.startsWith('Lambda.'), e).toBe(true);
  });
});
