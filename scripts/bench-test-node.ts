/**
 * What the test seed's real node costs (local/kube/node-cluster.ts): building its images (found when
 * built before; BENCH_TEST_NODE_COLD=1 builds them all into an empty directory, as on a fresh machine,
 * with debootstrap and npm downloading), its start from built binaries (the gardenless image imported),
 * the kubernetes runtime's etcd pod until Ready (a real etcd under its backup-restore sidecar, against
 * an emulator started here), and the resident memory of every part: the node's processes (containerd's
 * shims counted apart), the control plane, and each pod (its cgroup's total_rss).
 *
 *   npm run bench:test-node            (needs root and cgroup v1, as the node does)
 */
import { CreateHostedZoneCommand, Route53Client } from '@aws-sdk/client-route-53';
import type { V1Pod } from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { route53Api, Route53OwnerRecords } from '../adapters/route53/owner-records.js';
import { ownerRecordName } from '../core/ownership/index.js';
import { emulatorCredentials, LOCAL_REGION } from '../local/aws-env.js';
import { emulatorS3, ensureBucket } from '../local/buckets.js';
import { startEmulator } from '../local/emulator.js';
import { startBenchRun, type Cell } from './bench-results.js';

const COLD = process.env.BENCH_TEST_NODE_COLD === '1';
const record = startBenchRun({
  bench: 'test-node',
  title: "The test seed's real node",
  command: COLD ? 'BENCH_TEST_NODE_COLD=1 npm run bench:test-node' : 'npm run bench:test-node',
  about:
    "Building the real node's images (" +
    (COLD ? 'cold, into an empty directory' : 'as found in .tools/images') +
    '), its start from built binaries, the runtime’s etcd pod until Ready, and the resident memory of each part.',
});
const work = mkdtempSync(join(tmpdir(), 'gl-bench-node-'));
// Before the images module reads it.
if (COLD) process.env.GARDENLESS_IMAGES_DIR = join(work, 'images');
const { buildTestImages, prepareTestImages } = await import('../local/kube/images.js');
const { startNodeCluster, exposeHostPort, nodeMemory } = await import('../local/kube/node-cluster.js');
const { KubeObjects } = await import('../seed/kubernetes/kube-api.js');
const { runtimeEtcdObjects } = await import('../harness/kube/node-etcd.js');
const { CREDENTIALS_SECRET } = await import('../local/kube/node-seed.js');

const seconds = (since: number) => (Date.now() - since) / 1000;
const MiB = (bytes: number | undefined) => (bytes === undefined ? null : bytes / 2 ** 20);
const times: [string, Cell][] = [];
const log = (line: string) => console.log(line);

let t = Date.now();
await prepareTestImages({ log });
times.push(['images that do not depend on the working tree (npm test builds them in the background)', seconds(t)]);
t = Date.now();
const image = (await buildTestImages({ which: ['gardenless'], log })).gardenless;
times.push(['the gardenless image (the bundle of the working tree)', seconds(t)]);

const emulator = await startEmulator({ logFile: join(work, 'emulator.log') });
let importMs: number | undefined;
t = Date.now();
const cluster = await startNodeCluster({
  dir: join(work, 'node'),
  images: ['gardenless'],
  log: (line) => {
    log(line);
    const imported = /gardenless.* imported in (\d+) ms/.exec(line);
    if (imported) importMs = Number(imported[1]);
  },
});
try {
  times.push(['the node Ready with its first pod, the gardenless image imported', seconds(t)]);
  times.push(['  of which the gardenless image import', importMs === undefined ? null : importMs / 1000]);

  // The runtime's etcd, against the emulator.
  const aws = { endpoint: emulator.endpoint, region: LOCAL_REGION, credentials: emulatorCredentials() };
  await ensureBucket(emulatorS3(emulator.endpoint, LOCAL_REGION), 'gl-backup-bench');
  const zone = await new Route53Client(aws).send(
    new CreateHostedZoneCommand({ Name: 'internal.bench.local', CallerReference: `bench-${Date.now()}` }),
  );
  const hostedZoneId = zone.HostedZone!.Id!.replace('/hostedzone/', '');
  const shoot = { project: 'bench', name: 'etcd', technicalID: 'shoot--bench--etcd' };
  await new Route53OwnerRecords({ hostedZoneId, api: route53Api(new Route53Client(aws)) }).set({
    name: ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain: 'internal.bench.local' }),
    value: 'bench-0001',
  });
  const kube = new KubeObjects(cluster.kubeConfig());
  await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: shoot.technicalID } });
  await kube.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: CREDENTIALS_SECRET, namespace: shoot.technicalID },
    stringData: { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' },
  } as never);
  t = Date.now();
  for (const o of runtimeEtcdObjects({
    shoot,
    namespace: shoot.technicalID,
    seed: { name: 'bench', zones: cluster.info.zones },
    bucket: 'gl-backup-bench',
    image,
    identity: 'bench-0001',
    internalDomain: 'internal.bench.local',
    hostedZoneId,
    region: 'us-east-1',
    s3Endpoint: `http://${await exposeHostPort(cluster, Number(new URL(emulator.endpoint).port))}`,
  }))
    await kube.apply(o);
  for (;;) {
    const pod = await kube.read<V1Pod>({ apiVersion: 'v1', kind: 'Pod', name: 'etcd-0', namespace: shoot.technicalID });
    if (pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) break;
    if (seconds(t) > 300) throw new Error(`etcd-0 not Ready in 300 s\n${cluster.logs(10)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  times.push(["the runtime's etcd pod Ready (its volume bound, etcd serving, the owner checked)", seconds(t)]);
  // A few snapshot rounds before the memory is read.
  await new Promise((r) => setTimeout(r, 15_000));
  const memory = nodeMemory(cluster.info);
  const pods = await kube.list<V1Pod>('v1', 'Pod', { namespace: shoot.technicalID });
  const etcdUid = pods.find((p) => p.metadata?.name === 'etcd-0')?.metadata?.uid;
  const processes = Object.entries(memory.processes).sort(([a], [b]) => a.localeCompare(b));
  const memoryRows: Cell[][] = [
    ...processes.map(([name, bytes]): Cell[] => [name, MiB(bytes)]),
    ["the runtime's etcd pod (etcd and its sidecar)", MiB(etcdUid ? memory.pods[etcdUid] : undefined)],
  ];
  record.save({
    settings: { cold: COLD },
    tables: [
      { title: 'Time (s)', columns: ['step', 'seconds'], rows: times, decimals: [undefined, 1] },
      { title: 'Resident memory (MiB)', columns: ['part', 'MiB'], rows: memoryRows, decimals: [undefined, 0] },
    ],
    aims: [],
  });
  for (const [step, s] of times) console.log(`${step}: ${s} s`);
  for (const [part, m] of memoryRows) console.log(`${part}: ${typeof m === 'number' ? m.toFixed(0) : m} MiB`);
} finally {
  await cluster.stop();
  await emulator.stop();
  rmSync(work, { recursive: true, force: true });
}
