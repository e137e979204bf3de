import { describe, expect, it } from 'vitest';
import {
  etcdArgs,
  parseDuration,
  refusedForSize,
  REPLAY_LIMIT_ARGS,
  SidecarConfigError,
  validateSidecarOptions,
  watchEvents,
} from '../../../seed/backup-restore/index.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['20s', 20_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['250', 250],
    ['1.5s', 1_500],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text, 'f')).toBe(ms));

  it.each(['', 'soon', '-1s', '5 days'])('rejects %j', (text) =>
    expect(() => parseDuration(text, 'f')).toThrow(SidecarConfigError),
  );
});

describe('validateSidecarOptions', () => {
  const base = { technicalID: 'shoot--dev--api1', owner: { recordName: 'owner.api1.dev.example', identity: 'seed-a' } };
  it('accepts the defaults', () => expect(() => validateSidecarOptions(base)).not.toThrow());
  it('accepts a backup lag limit above the delta interval', () =>
    expect(() =>
      validateSidecarOptions({ ...base, deltaSnapshotInterval: 1_000, backupLagLimit: 2_000 }),
    ).not.toThrow());
  it.each([
    [{ ownerCheckInterval: 0 }, 'ownerCheckInterval'],
    [{ deltaSnapshotInterval: Number.NaN }, 'deltaSnapshotInterval'],
    [{ unknownGrace: -1 }, 'unknownGrace'],
    [{ fullSnapshotInterval: 1_000, deltaSnapshotInterval: 2_000 }, 'deltaSnapshotInterval'],
    [{ technicalID: '' }, 'technicalID'],
    [{ owner: { recordName: 'x', identity: '' } }, 'identity'],
    // The write guard's limit must exceed the delta interval (default 20 s).
    [{ backupLagLimit: 20_000 }, 'backupLagLimit'],
    [{ deltaSnapshotInterval: 1_000, backupLagLimit: 900 }, 'backupLagLimit'],
  ])('rejects %j', (extra, field) => {
    expect(() => validateSidecarOptions({ ...base, ...extra })).toThrow(
      expect.objectContaining({ name: 'SidecarConfigError', field }),
    );
  });
});

describe('etcdArgs', () => {
  it('starts a single member whose client URL is the only one it advertises', () => {
    const args = etcdArgs({
      binary: 'etcd',
      name: 'etcd',
      dataDir: '/d',
      clientUrl: 'http://127.0.0.1:4001',
      peerUrl: 'http://127.0.0.1:4002',
      heartbeatInterval: 50,
      electionTimeout: 250,
      extraArgs: ['--log-level', 'warn'],
    });
    const flag = (name: string) => args[args.indexOf(name) + 1];
    expect(flag('--listen-client-urls')).toBe('http://127.0.0.1:4001');
    expect(flag('--advertise-client-urls')).toBe('http://127.0.0.1:4001');
    expect(flag('--initial-cluster')).toBe('etcd=http://127.0.0.1:4002');
    expect(args.slice(-2)).toEqual(['--log-level', 'warn']);
    expect(args).not.toContain('--quota-backend-bytes');
    expect(args).not.toContain('--max-txn-ops');
  });

  it("speaks mutual TLS to its peers with the shoot's peer CA where it has peer certificates, and only to them", () => {
    // Prepare
    const launch = {
      binary: 'etcd',
      name: 'etcd-a',
      dataDir: '/d',
      clientUrl: 'http://127.0.0.1:4001',
      peerUrl: 'https://127.0.0.1:4002',
      heartbeatInterval: 100,
      electionTimeout: 1000,
      extraArgs: [],
      cluster: {
        state: 'existing' as const,
        token: 't',
        initialCluster: [
          { name: 'etcd-a', peerUrl: 'https://127.0.0.1:4002' },
          { name: 'etcd-b', peerUrl: 'https://127.0.0.1:5002' },
        ],
      },
      peerTls: { certFile: '/pki/peer.crt', keyFile: '/pki/peer.key', trustedCaFile: '/pki/peer-ca.crt' },
    };

    // Act
    const args = etcdArgs(launch);
    const plain = etcdArgs({ ...launch, peerTls: undefined });

    // Assess
    const flag = (name: string) => args[args.indexOf(name) + 1];
    expect(flag('--listen-peer-urls')).toBe('https://127.0.0.1:4002');
    expect(flag('--initial-advertise-peer-urls')).toBe('https://127.0.0.1:4002');
    expect(flag('--initial-cluster')).toBe('etcd-a=https://127.0.0.1:4002,etcd-b=https://127.0.0.1:5002');
    expect(flag('--peer-cert-file')).toBe('/pki/peer.crt');
    expect(flag('--peer-key-file')).toBe('/pki/peer.key');
    expect(flag('--peer-trusted-ca-file')).toBe('/pki/peer-ca.crt');
    expect(args).toContain('--peer-client-cert-auth=true');
    // Client traffic is as before.
    expect(flag('--listen-client-urls')).toBe('http://127.0.0.1:4001');
    expect(args.filter((a) => a.startsWith('--client-') || a === '--cert-file')).toEqual([]);
    expect(plain.filter((a) => a.startsWith('--peer-'))).toEqual([]);
  });

  it('raises the transaction limits only where a replay runs', () => {
    const launch = {
      binary: 'etcd',
      name: 'etcd',
      dataDir: '/d',
      clientUrl: 'http://127.0.0.1:4001',
      peerUrl: 'http://127.0.0.1:4002',
      heartbeatInterval: 50,
      electionTimeout: 250,
      extraArgs: [],
    };
    const args = etcdArgs({ ...launch, replayLimits: true });
    const flag = (name: string) => Number(args[args.indexOf(name) + 1]);
    expect(flag('--max-txn-ops')).toBe(4_294_967_295);
    expect(flag('--max-request-bytes')).toBe(536_870_912);
    expect(args).toEqual(expect.arrayContaining([...REPLAY_LIMIT_ARGS]));
    expect(etcdArgs({ ...launch, replayLimits: false })).not.toContain('--max-request-bytes');
  });
});

describe('refusedForSize', () => {
  it.each([
    ['etcdserver: too many operations in txn request', true],
    ['etcdserver: request is too large', true],
    ['grpc: received message larger than max (3145828 vs. 2097152)', true],
    ['Received message larger than max (3145828 vs. 2097152)', true],
    ['etcdserver: mvcc: required revision has been compacted', false],
    ['14 UNAVAILABLE: No connection established', false],
    ['etcdserver: corrupt cluster', false],
  ])('%s: %s', (message, refused) => expect(refusedForSize(new Error(message))).toBe(refused));

  it('is false for what is not an Error', () => expect(refusedForSize('etcdserver: request is too large')).toBe(false));
});

describe('watchEvents', () => {
  it('turns a watch response into delta events with their mod revisions', () => {
    const kv = (key: string, value: string, rev: string) => ({
      key: Buffer.from(key),
      value: Buffer.from(value),
      mod_revision: rev,
      create_revision: rev,
      version: '1',
      lease: '0',
    });
    const events = watchEvents({
      events: [
        { type: 'Put', kv: kv('a', 'x', '7'), prev_kv: kv('a', '', '1') },
        { type: 'Delete', kv: kv('b', '', '8'), prev_kv: kv('b', '', '1') },
      ],
    });
    expect(events).toEqual([
      { type: 'put', key: 'YQ==', value: 'eA==', revision: 7 },
      { type: 'delete', key: 'Yg==', revision: 8 },
    ]);
  });
});
