import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dueExecutionName } from '../../../adapters/sfn/evacuation-due-timer.js';

const require = createRequire(import.meta.url);
const validator = require('asl-validator') as (definition: unknown) => { isValid: boolean; errorsText: () => string };
const raw = readFileSync(
  join(import.meta.dirname, '..', '..', '..', 'state-machines', 'evacuation-due.asl.json'),
  'utf8',
);

describe('state-machines/evacuation-due.asl.json', () => {
  it('is valid ASL once the bus is substituted: it waits until the moment, then puts EvacuationDue on the bus', () => {
    expect([...raw.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1])).toEqual(['EventBusName']);
    const definition = JSON.parse(raw.replace('${EventBusName}', 'gardenless')) as {
      StartAt: string;
      States: Record<string, Record<string, unknown>>;
    };
    expect(validator(definition).errorsText()).toBe('');
    expect(definition.States[definition.StartAt]).toMatchObject({ Type: 'Wait', TimestampPath: '$.dueAt' });
    const due = definition.States.Due!;
    expect(due).toMatchObject({ Resource: 'arn:aws:states:::events:putEvents', End: true });
    expect(JSON.stringify(due.Parameters)).toContain('"DetailType":"EvacuationDue"');
    // Retried on EventBridge's transient errors, never caught: a failed wake-up leaves it to the scheduled round.
    expect(JSON.stringify(due.Retry)).not.toContain('States.ALL');
    expect(due.Catch).toBeUndefined();
  });
});

describe('dueExecutionName', () => {
  it.each([
    ['a short seed', 'lost', '2026-01-01T00:01:06.000Z'],
    ['a 63-character seed', 'a'.repeat(63), '2026-12-31T23:59:59.999Z'],
  ])('is one name per seed and moment, at most 80 characters of [A-Za-z0-9-]: %s', (_case, seed, dueAt) => {
    const name = dueExecutionName(seed, dueAt);
    expect(name).toMatch(/^[A-Za-z0-9-]{1,80}$/);
    expect(dueExecutionName(seed, dueAt)).toBe(name);
    expect(dueExecutionName(seed, '2027-01-01T00:00:00.000Z')).not.toBe(name);
    expect(dueExecutionName(`${seed}x`, dueAt)).not.toBe(name);
  });
});
