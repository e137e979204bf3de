import { describe, expect, it } from 'vitest';
import {
  checkOwner,
  needsCluster,
  type OwnerCheckResult,
  type OwnerLookupOutcome,
} from '../../../core/ownership/index.js';
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

  describe('the value of a live walk', () => {
    const live = `${ME}+${OTHER}@c0ffee`;
    it.each<[string, string, string | undefined, OwnerCheckResult]>([
      ['admits a member of its cluster on the source', ME, 'c0ffee', 'owner'],
      ['admits a member of its cluster on the destination', OTHER, 'c0ffee', 'owner'],
      ['refuses another cluster on either seed (a standby, a leftover)', ME, 'beef', 'not-owner'],
      ['refuses a third seed', 'aws-eu3-3333', 'c0ffee', 'not-owner'],
      ['does not know a member that cannot tell its cluster', ME, undefined, 'unknown'],
    ])('%s', (_case, identity, cluster, expected) => {
      const check = checkOwner({
        outcome: { kind: 'found', values: [live] },
        identity,
        ...(cluster ? { cluster } : {}),
      });
      expect(check.result).toBe(expected);
      if (expected === 'not-owner' && identity === ME) expect(check.reason).toContain('another etcd cluster');
    });

    it('asks for the cluster only where a value is a live one', () => {
      expect(needsCluster({ kind: 'found', values: [live] })).toBe(true);
      expect(needsCluster({ kind: 'found', values: [ME] })).toBe(false);
      expect(needsCluster({ kind: 'absent', reason: 'nxdomain' })).toBe(false);
    });
  });

  it('requires an identity', () => {
    expect(() => checkOwner({ outcome: { kind: 'found', values: [''] }, identity: '' })).toThrow(ValidationError);
  });
});
