import { describe, expect, it } from 'vitest';
import { checkOwner, type OwnerCheckResult, type OwnerLookupOutcome } from '../../../core/ownership/index.js';
import { ValidationError } from '../../../core/errors.js';

const ME = 'aws-eu1-1111';
const OTHER = 'aws-eu2-2222';

describe('checkOwner', () => {
  it.each<[string, OwnerLookupOutcome, OwnerCheckResult]>([
    ['the value is this seed', { kind: 'found', values: [ME] }, 'owner'],
    ['the value repeated', { kind: 'found', values: [ME, ME] }, 'owner'],
    ['another seed', { kind: 'found', values: [OTHER] }, 'not-owner'],
    ['a value that only starts like this seed', { kind: 'found', values: [`${ME}0`] }, 'not-owner'],
    ['NXDOMAIN (record deleted)', { kind: 'absent', reason: 'nxdomain' }, 'not-owner'],
    ['no TXT data', { kind: 'absent', reason: 'nodata' }, 'not-owner'],
    ['an empty answer', { kind: 'found', values: [] }, 'not-owner'],
    ['conflicting values', { kind: 'found', values: [ME, OTHER] }, 'unknown'],
    ['a timeout', { kind: 'failed', failure: 'timeout' }, 'unknown'],
    ['SERVFAIL', { kind: 'failed', failure: 'servfail' }, 'unknown'],
    ['connection refused', { kind: 'failed', failure: 'refused' }, 'unknown'],
    ['a network error', { kind: 'failed', failure: 'network' }, 'unknown'],
    ['throttling', { kind: 'failed', failure: 'throttled' }, 'unknown'],
  ])('%s', (_case, outcome, expected) => {
    const check = checkOwner({ outcome, identity: ME });
    expect(check.result).toBe(expected);
    expect(check.reason.length).toBeGreaterThan(0);
  });

  it('requires an identity', () => {
    expect(() => checkOwner({ outcome: { kind: 'found', values: [''] }, identity: '' })).toThrow(ValidationError);
  });
});
