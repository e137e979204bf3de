import { describe, expect, it } from 'vitest';
import { defaultOwnerMode } from '../../../cli/seed-agent-command.js';

describe('the seed agent reads owner records', () => {
  it('through DNS on AWS, through the Route 53 API against the emulator, whatever credentials the environment has', () => {
    expect(defaultOwnerMode(undefined)).toBe('dns');
    // The landscape, tests and benchmarks start agents with the emulator's endpoint and its credentials in the
    // environment: DNS would find no owner record there, and every create would fail with NotOwner.
    expect(defaultOwnerMode('http://127.0.0.1:4566')).toBe('api');
  });
});
