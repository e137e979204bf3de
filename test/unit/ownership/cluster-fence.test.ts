import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clusterFenceStep, type ClusterMemberRef } from '../../../core/ownership/index.js';

const m = (id: string, isLearner = false): ClusterMemberRef => ({ id, name: `etcd-main-${id}`, isLearner });
const MEMBERS = [m('1'), m('2'), m('3')];

describe('clusterFenceStep', () => {
  it('ready once every member acknowledged its fence', () => {
    expect(
      clusterFenceStep({
        members: MEMBERS,
        acknowledged: new Set(['1', '2', '3']),
        waitingSince: 0,
        now: 0,
        memberFenceTimeout: 10_000,
      }),
    ).toEqual({ kind: 'ready' });
  });

  it('waits for the others within the member fence timeout, and says when they would be removed', () => {
    const step = clusterFenceStep({
      members: MEMBERS,
      acknowledged: new Set(['1']),
      waitingSince: 1_000,
      now: 5_000,
      memberFenceTimeout: 10_000,
    });
    expect(step).toEqual({ kind: 'wait', unacknowledged: [m('2'), m('3')], removeAfter: 11_000 });
  });

  it('after the timeout removes the members that did not acknowledge, learners first', () => {
    const members = [m('1'), m('2'), m('3', true)];
    const step = clusterFenceStep({
      members,
      acknowledged: new Set(['1']),
      waitingSince: 0,
      now: 10_000,
      memberFenceTimeout: 10_000,
    });
    expect(step).toEqual({ kind: 'remove', members: [m('3', true), m('2')] });
  });

  it('never ready while a member could still serve clients (property)', () => {
    fc.assert(
      fc.property(fc.subarray(['1', '2', '3']), fc.nat(20_000), fc.nat(20_000), (acked, waited, timeout) => {
        const step = clusterFenceStep({
          members: MEMBERS,
          acknowledged: new Set(acked),
          waitingSince: 0,
          now: waited,
          memberFenceTimeout: timeout,
        });
        if (step.kind === 'ready') return acked.length === 3;
        const pending = step.kind === 'wait' ? step.unacknowledged : step.members;
        return pending.length === 3 - acked.length && pending.every((p) => !acked.includes(p.id));
      }),
    );
  });

  it('refuses a negative timeout', () => {
    expect(() =>
      clusterFenceStep({ members: MEMBERS, acknowledged: new Set(), waitingSince: 0, now: 0, memberFenceTimeout: -1 }),
    ).toThrow(RangeError);
  });
});
