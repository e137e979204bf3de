import { describe, expect, it } from 'vitest';
import { sidecarArgs, type SidecarDefaults } from '../../../seed/agent/sidecar-args.js';
import type { EtcdSpec } from '../../../seed/agent/hosting.js';

describe('sidecarArgs', () => {
  const spec = {
    shoot: { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' },
    bucket: 'gl-backup-a',
  } as EtcdSpec;
  const defaults = (sidecar: SidecarDefaults['sidecar']): SidecarDefaults => ({
    identity: 'seed-a',
    aws: { region: 'eu-west-1' },
    owner: { mode: 'api', hostedZoneId: 'Z1', internalDomain: 'internal.example' },
    sidecar,
  });
  const args = (sidecar: SidecarDefaults['sidecar']) =>
    sidecarArgs({ defaults: defaults(sidecar), spec, dataDir: '/d', etcdLog: '/l' });
  const flag = (list: string[], name: string) => (list.includes(name) ? list[list.indexOf(name) + 1] : undefined);

  it("passes the write guard's limit on as it does the delta interval", () => {
    const list = args({ deltaSnapshotInterval: 1_000, backupLagLimit: 2_500 });
    expect(flag(list, '--delta-snapshot-interval')).toBe('1s');
    expect(flag(list, '--backup-lag-limit')).toBe('2500ms');
  });

  it("leaves it to the sidecar's default when the seed sets none", () => {
    expect(args({ deltaSnapshotInterval: 1_000 })).not.toContain('--backup-lag-limit');
  });

  it("gives a single etcd its ports, the kube-apiserver's own among them", () => {
    const list = sidecarArgs({
      defaults: defaults({}),
      spec,
      dataDir: '/d',
      etcdLog: '/l',
      ports: { client: 2379, peer: 2380, apiServerEtcd: 2381 },
    });
    expect([flag(list, '--client-port'), flag(list, '--peer-port'), flag(list, '--api-server-port')]).toEqual([
      '2379',
      '2380',
      '2381',
    ]);
    expect(args({})).not.toContain('--api-server-port');
  });

  it.each<[string, EtcdSpec['restore'], string[]]>([
    ['a restore to a revision', { expectedLastRevision: 42 }, ['--restore', '--expected-revision', '42']],
    ['a restore ahead', { ahead: true }, ['--restore', '--restore-ahead']],
    ['no restore', undefined, []],
  ])('asks for %s', (_case, restore, expected) => {
    const list = sidecarArgs({
      defaults: defaults({}),
      spec: { ...spec, ...(restore ? { restore } : {}) },
      dataDir: '/d',
      etcdLog: '/l',
    });
    expect(
      list.filter(
        (a, i) => a.startsWith('--restore') || a === '--expected-revision' || list[i - 1] === '--expected-revision',
      ),
    ).toEqual(expected);
  });
});
