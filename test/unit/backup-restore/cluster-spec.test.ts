import { describe, expect, it } from 'vitest';
import {
  formatMemberFlag,
  parseMemberFlag,
  peerEndpoints,
  validateClusterSpec,
  type ClusterMemberSpec,
} from '../../../seed/backup-restore/cluster/spec.js';
import { SidecarConfigError } from '../../../seed/backup-restore/errors.js';
import { memberRows } from '../../../cli/members-command.js';

const member = (i: number, zone?: string): ClusterMemberSpec => ({
  name: `etcd-main-${i}`,
  ...(zone ? { zone } : {}),
  peerUrl: `http://127.0.0.1:${2380 + i * 10}`,
  clientUrl: `http://127.0.0.1:${2379 + i * 10}`,
  privateUrl: `http://127.0.0.1:${2378 + i * 10}`,
});

describe('--member flags', () => {
  it('round-trip with and without a zone', () => {
    for (const m of [member(0, 'eu-west-1a'), member(1)]) expect(parseMemberFlag(formatMemberFlag(m))).toEqual(m);
  });

  it.each([
    ['name=a,peer=http://h:1,client=http://h:2', /needs private=/],
    ['name=a,peer=http://h:1,client=http://h:2,private=https://h:3', /not http:\/\/host:port/],
    ['name=a,port=1', /is not one of/],
  ])('refuses %s', (text, message) => {
    expect(() => parseMemberFlag(text)).toThrow(SidecarConfigError);
    expect(() => parseMemberFlag(text)).toThrow(message);
  });
});

describe('validateClusterSpec', () => {
  const members = [member(0), member(1), member(2)];

  it("returns this sidecar's member; the peers are the others' public and private addresses", () => {
    const spec = { self: 'etcd-main-1', members, token: 't', state: 'new' as const };
    expect(validateClusterSpec(spec)).toEqual(members[1]);
    expect(peerEndpoints(spec)).toEqual([
      members[0]!.clientUrl,
      members[0]!.privateUrl,
      members[2]!.clientUrl,
      members[2]!.privateUrl,
    ]);
  });

  it('refuses a self that is not a member, shared addresses and an empty token', () => {
    expect(() => validateClusterSpec({ self: 'x', members, token: 't', state: 'new' })).toThrow(/not among/);
    expect(() =>
      validateClusterSpec({
        self: 'etcd-main-0',
        members: [members[0]!, { ...members[1]!, peerUrl: members[0]!.peerUrl }],
        token: 't',
        state: 'new',
      }),
    ).toThrow(/own peer/);
    expect(() => validateClusterSpec({ self: 'etcd-main-0', members, token: '', state: 'new' })).toThrow(/token/);
  });
});

describe('gardenless shoot members', () => {
  it('one row per member with zone, role and health', () => {
    const out = memberRows({
      seedName: 's',
      etcd: {
        leader: 'etcd-main-1',
        members: [
          { name: 'etcd-main-0', zone: 'eu-west-1a', role: 'follower', ready: true, healthy: true, fenced: false },
          { name: 'etcd-main-1', role: 'leader', ready: true, healthy: true, fenced: false },
        ],
      },
    });
    expect(out.split('\n')).toEqual([
      expect.stringMatching(/^MEMBER\s+ZONE\s+ROLE\s+READY\s+HEALTHY\s+FENCED$/),
      expect.stringMatching(/^etcd-main-0\s+eu-west-1a\s+follower\s+true\s+true\s+false$/),
      expect.stringMatching(/^etcd-main-1\s+-\s+leader\s+true\s+true\s+false$/),
    ]);
  });

  it('says so when the seed reports no members', () => {
    expect(memberRows({ seedName: 's' })).toMatch(/reports no etcd members/);
  });
});
