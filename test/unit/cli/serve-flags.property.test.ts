import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sidecarArgs as localSidecarArgs, type SidecarDefaults } from '../../../seed/agent/sidecar-args.js';
import type { EtcdSpec } from '../../../seed/agent/hosting.js';
import {
  serveArgv,
  serveFlagsFrom,
  type ServeFlags,
  type ServeOptionValues,
} from '../../../seed/backup-restore/serve-flags.js';
import { sidecarArgs as podSidecarArgs } from '../../../seed/kubernetes/objects.js';
import { parseServeArgv } from '../../../seed/backup-restore/served-settings.js';
import { backupRestoreProgram } from './backup-restore-program.js';

const base = (): Omit<ServeFlags, 'dataDir'> => ({
  technicalID: 'shoot--dev--api1',
  ownerRecord: 'owner.api1.dev.internal.example',
  identity: 'seed-a',
  bucket: 'gl-backup-a',
  owner: { mode: 'dns' },
});

/** What the CLI makes of a sidecar's command line: commander's parse, then the sidecar's own reading. */
async function parsed(argv: string[]): Promise<ServeFlags> {
  const { program, seen } = backupRestoreProgram();
  await program.parseAsync(argv, { from: 'user' });
  return serveFlagsFrom(seen() as unknown as ServeOptionValues);
}

// Values as hostings give them: none is empty or looks like a flag.
const word = fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,20}$/);
const path = word.map((w) => `/var/${w}`);
const url = fc.tuple(word, fc.integer({ min: 1, max: 65_535 })).map(([h, p]) => `http://${h}:${p}`);
const port = fc.integer({ min: 0, max: 65_535 });
const ms = fc.nat({ max: 100_000_000 });
const yes = fc.constant(true as const);
const member = fc.record(
  { name: fc.stringMatching(/^etcd-[a-z0-9]{1,8}$/), zone: word, peerUrl: url, clientUrl: url, privateUrl: url },
  { requiredKeys: ['name', 'peerUrl', 'clientUrl', 'privateUrl'], noNullPrototype: true },
);
const cluster = fc
  .record(
    {
      members: fc.array(member, { minLength: 1, maxLength: 5 }),
      token: word,
      state: fc.constantFrom('new' as const, 'existing' as const),
      leaderCheckInterval: ms,
      handoverDelay: ms,
      memberFenceTimeout: ms,
    },
    { requiredKeys: ['members', 'token', 'state'], noNullPrototype: true },
  )
  .chain((c) => fc.constantFrom(...c.members).map((m) => ({ ...c, self: m.name })));
const join = fc
  .array(fc.record({ name: fc.stringMatching(/^etcd-[a-z0-9]{1,8}$/), peerUrl: url }, { noNullPrototype: true }), {
    minLength: 1,
    maxLength: 4,
  })
  .chain((members) => fc.constantFrom(...members).map((m) => ({ name: m.name, members })));
const flags: fc.Arbitrary<ServeFlags> = fc
  .record(
    {
      technicalID: word,
      prefix: word,
      ownerRecord: word,
      identity: word,
      bucket: word,
      region: word,
      s3Endpoint: url,
      owner: fc.oneof(
        fc.record(
          { mode: fc.constant('api' as const), hostedZoneId: word, route53Endpoint: url },
          { requiredKeys: ['mode', 'hostedZoneId'], noNullPrototype: true },
        ),
        fc.record(
          { mode: fc.constant('dns' as const), servers: fc.array(word, { minLength: 1, maxLength: 3 }) },
          { requiredKeys: ['mode'], noNullPrototype: true },
        ),
      ),
      dataDir: path,
      etcdLog: path,
      host: word,
      clientPort: port,
      peerPort: port,
      privatePort: port,
      apiServerPort: port,
      peerTls: fc.record({ certFile: path, keyFile: path, trustedCaFile: path }, { noNullPrototype: true }),
      statusHost: word,
      statusPort: port,
      cluster,
      join,
      forceNewCluster: fc.constant(true),
      ownerCheckInterval: ms,
      unknownGrace: ms,
      checkTimeout: ms,
      fullSnapshotInterval: ms,
      deltaSnapshotInterval: ms,
      backupLagLimit: ms,
      compression: fc.constantFrom('gzip' as const, 'none' as const),
      restore: fc.record(
        { ahead: yes, expectedLastRevision: fc.nat(), file: path, acceptDigestMismatch: yes },
        { requiredKeys: [], noNullPrototype: true },
      ),
    },
    { requiredKeys: ['technicalID', 'ownerRecord', 'identity', 'bucket', 'owner', 'dataDir'], noNullPrototype: true },
    // A member of a cluster knows its cluster from --member; only a single member joins one.
  )
  .map(({ join: joining, ...f }) => (f.cluster || !joining ? f : { ...f, join: joining }))
  // So is a single member alone forced into a cluster of its own.
  .map(({ forceNewCluster, ...f }) => (f.cluster || !forceNewCluster ? f : { ...f, forceNewCluster }))
  // A member with peer TLS names its peers by https URLs, and only then.
  .map((f) => (f.peerTls ? withPeerScheme(f, 'https') : f));

function withPeerScheme(f: ServeFlags, scheme: 'http' | 'https'): ServeFlags {
  const at = (url: string) => url.replace(/^https?:/, `${scheme}:`);
  return {
    ...f,
    ...(f.cluster
      ? { cluster: { ...f.cluster, members: f.cluster.members.map((m) => ({ ...m, peerUrl: at(m.peerUrl) })) } }
      : {}),
    ...(f.join ? { join: { ...f.join, members: f.join.members.map((m) => ({ ...m, peerUrl: at(m.peerUrl) })) } } : {}),
  };
}

describe('the sidecar flags: one builder, one parser', () => {
  it('reads back every command line it builds as the values it was built from', async () => {
    await fc.assert(
      fc.asyncProperty(flags, async (f) => {
        expect(await parsed(serveArgv(f))).toStrictEqual(f);
      }),
      { numRuns: 300 },
    );
  });

  it("reads back, outside the CLI (a Kubernetes seed's agent reading its pods), what the CLI reads", async () => {
    await fc.assert(
      fc.property(flags, (f) => {
        expect(parseServeArgv(serveArgv(f))).toStrictEqual(f);
      }),
      { numRuns: 300 },
    );
    expect(parseServeArgv(['backup-restore', 'restore', '--bucket', 'b'])).toBeUndefined();
    expect(parseServeArgv(['backup-restore', 'serve', '--bucket', 'b'])).toBeUndefined();
    expect(parseServeArgv([...serveArgv({ ...base(), dataDir: '/d' }), '--no-such-flag'])).toBeUndefined();
  });

  const spec: EtcdSpec = {
    shoot: { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' },
    bucket: 'gl-backup-a',
    restore: { ahead: true, expectedLastRevision: 42 },
  };
  const defaults: SidecarDefaults = {
    identity: 'seed-a-0001',
    aws: { region: 'eu-west-1', endpoint: 'http://127.0.0.1:4566' },
    owner: { mode: 'dns', internalDomain: 'internal.example', servers: ['127.0.0.1:5353'] },
    sidecar: {
      ownership: { ownerCheckInterval: 500, unknownGrace: 3_000, checkTimeout: 400 },
      deltaSnapshotInterval: 1_000,
      backupLagLimit: 2_500,
      compression: 'none',
    },
  };
  // What a seed sets for every sidecar reaches it whatever hosts it (the Kubernetes flags once lacked
  // --restore-ahead, --check-timeout and --compression).
  const seedPart = {
    technicalID: 'shoot--dev--api1',
    ownerRecord: 'owner.api1.dev.internal.example',
    identity: 'seed-a-0001',
    bucket: 'gl-backup-a',
    region: 'eu-west-1',
    s3Endpoint: 'http://127.0.0.1:4566',
    owner: { mode: 'dns', servers: ['127.0.0.1:5353'] },
    ownerCheckInterval: 500,
    unknownGrace: 3_000,
    checkTimeout: 400,
    deltaSnapshotInterval: 1_000,
    backupLagLimit: 2_500,
    compression: 'none',
    restore: { ahead: true, expectedLastRevision: 42 },
  };

  it('gives a process on a local seed what the seed sets, and its own ports', async () => {
    const argv = localSidecarArgs({
      defaults,
      spec,
      dataDir: '/d',
      etcdLog: '/l',
      ports: { client: 2379, peer: 2380, apiServerEtcd: 2390 },
    });
    expect(await parsed(argv)).toStrictEqual({
      ...seedPart,
      dataDir: '/d',
      etcdLog: '/l',
      clientPort: 2379,
      peerPort: 2380,
      apiServerPort: 2390,
    });
  });

  it("gives a pod on a Kubernetes seed what the seed sets, and the pod's addresses", async () => {
    const argv = podSidecarArgs({
      shoot: spec.shoot,
      backupBucket: spec.bucket,
      restore: spec.restore,
      sidecar: defaults,
    });
    expect(await parsed(argv)).toStrictEqual({
      ...seedPart,
      dataDir: '/var/etcd/data',
      host: '0.0.0.0',
      clientPort: 2379,
      peerPort: 2380,
      privatePort: 2381,
      statusHost: '0.0.0.0',
      statusPort: 8080,
    });
  });

  it.each([
    ['a port out of range', ['--client-port', '70000'], /--client-port: "70000" is not a port/],
    ['a duration without a number', ['--unknown-grace', 'soon'], /--unknown-grace: "soon" is not a duration/],
    ['a negative revision', ['--restore', '--expected-revision', '-1'], /--expected-revision/],
    [
      'a member without its name',
      ['--member', 'name=a,peer=http://h:1,client=http://h:2,private=http://h:3'],
      /--member-name/,
    ],
    [
      'half of the peer TLS files',
      ['--peer-cert-file', '/c', '--peer-key-file', '/k'],
      /--peer-cert-file, --peer-key-file and --peer-trusted-ca-file go together/,
    ],
    [
      'a plain peer beside peer TLS',
      [
        ...['--peer-cert-file', '/c', '--peer-key-file', '/k', '--peer-trusted-ca-file', '/ca'],
        ...['--join-name', 'a', '--join-member', 'a=https://h:1', '--join-member', 'b=http://h:2'],
      ],
      /peer b is at http:\/\/h:2, but this member's peers are https:/,
    ],
    [
      'a cluster member forced into a cluster of its own',
      [
        '--member',
        'name=a,peer=http://h:1,client=http://h:2,private=http://h:3',
        '--member-name',
        'a',
        '--cluster-token',
        't',
        '--force-new-cluster',
      ],
      /--force-new-cluster is for a single member/,
    ],
    [
      'a TLS peer without peer TLS',
      [
        '--member',
        'name=a,peer=https://h:1,client=http://h:2,private=http://h:3',
        '--member-name',
        'a',
        '--cluster-token',
        't',
      ],
      /peer a is at https:\/\/h:1, but this member's peers are http:/,
    ],
  ])('refuses %s by its flag', async (_case, extra, message) => {
    const base = ['backup-restore', 'serve', '--technical-id', 't', '--owner-record', 'o', '--identity', 'i'];
    await expect(parsed([...base, '--bucket', 'b', '--data-dir', 'd', ...extra])).rejects.toThrow(message);
  });
});
