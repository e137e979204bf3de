import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { etcdMembers, quorum } from '../../../core/ha/index.js';

const ZONES = ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'];

describe('etcdMembers', () => {
  it('one member without a failure tolerance, in the one zone', () => {
    expect(etcdMembers({ tolerance: undefined, zones: ['eu-west-1b'] })).toEqual([
      { name: 'etcd-main-0', ordinal: 0, zone: 'eu-west-1b' },
    ]);
  });

  it('`node`: three members, all in the pinned zone', () => {
    const members = etcdMembers({ tolerance: 'node', zones: ['eu-west-1c'] });
    expect(members.map((m) => m.name)).toEqual(['etcd-main-0', 'etcd-main-1', 'etcd-main-2']);
    expect(members.map((m) => m.zone)).toEqual(['eu-west-1c', 'eu-west-1c', 'eu-west-1c']);
  });

  it('`zone`: one member per zone, so that losing any zone leaves a quorum', () => {
    const members = etcdMembers({ tolerance: 'zone', zones: ZONES });
    expect(members.map((m) => m.zone)).toEqual(ZONES);
    for (const zone of ZONES)
      expect(members.filter((m) => m.zone !== zone).length).toBeGreaterThanOrEqual(quorum(members.length));
  });

  it('no zone known: members without a zone', () => {
    expect(etcdMembers({ tolerance: 'zone', zones: [] }).every((m) => m.zone === undefined)).toBe(true);
  });

  it('quorum is a strict majority', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 99 }), (n) => quorum(n) > n / 2 && quorum(n) - 1 <= n / 2));
    expect([1, 3, 5].map(quorum)).toEqual([1, 2, 3]);
  });
});
