import { Route53Client } from '@aws-sdk/client-route-53';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import {
  CoreV1Api,
  Exec,
  Log,
  type KubernetesObject,
  type V1Pod,
  type V1Secret,
  type V1Service,
} from '@kubernetes/client-node';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { ownerRecordName } from '../../core/ownership/index.js';
import type { KubeCluster } from '../../local/kube/cluster.js';
import type { TestImage, TestImageName } from '../../local/kube/images.js';
import { LOAD_BALANCER_ADDRESSES } from '../../local/kube/load-balancers.js';
import { exposeHostPort, freezeNode, loadImages, nodeMemory, thawNode } from '../../local/kube/node-cluster.js';
import type { LastOperation } from '../../core/model/common.js';
import { s3Backup } from '../../seed/backup-restore/aws.js';
import { KubeObjects } from '../../seed/kubernetes/kube-api.js';
import { CONTROL_PLANE_FILES_SECRET, ETCD_PORTS, SIDECAR_CONTAINER } from '../../seed/kubernetes/objects.js';
import type { HostedControlPlane } from '../../core/model/seed.js';
import { backedSeed, fixture } from '../../harness/fixtures/index.js';
import { realKubeBinDir } from '../../harness/kube/binaries.js';
import { kubectl, kubectlOk, migrateShoot, printKubeconfig } from '../harness/kubectl.js';
import { registerSeedWithAgent, type AgentProcess } from '../../harness/agent-process.js';
import { TEST_OWNERSHIP_TIMINGS } from '../../harness/timings.js';
import { testGarden } from '../harness/garden.js';
import { uninstallChart } from '../../local/kube/helm.js';
import { runtimeEtcdObjects } from '../../harness/kube/node-etcd.js';
import {
  AGENT_NAMESPACE,
  CREDENTIALS_SECRET,
  installNodeSeedAgent,
  NODE_SEED_IMAGES,
} from '../../local/kube/node-seed.js';
import { testSeedNode } from '../harness/kube/seed-cluster.js';
import { logTail, until } from '../../harness/until.js';

// The test seed's real node (local/kube/node-cluster.ts): containerd, the kubelet and kube-proxy run the
// pods. The kubernetes runtime's own etcd StatefulSet runs a real etcd under the backup-restore sidecar of
// the gardenless image (built by local/kube/images.ts) against the emulator's S3 and Route 53; the agent
// is installed by its Helm chart and heartbeats to the deployed garden from its pod.

const garden = testGarden();
const { deployment, aws } = garden;
const internalDomain = deployment.outputs.InternalDomain;
const SEED = 'node-a';
const BUCKET = `gl-backup-${SEED}`;
const IDENTITY = `${SEED}-0001`;
const shoot = { project: 'node', name: 'etcd', technicalID: 'shoot--node--etcd' };
const NAMESPACE = shoot.technicalID;
/** The shoot the garden places on the seed (its agent from the chart). */
const served = { project: 'node', name: 'pods', technicalID: 'shoot--node--pods' };
/** The kernel settings the kubelet sets on a host (it must set its node's own copies). */
const KERNEL = [
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
  'net/ipv4/ip_forward',
];
const kernel = () => Object.fromEntries(KERNEL.map((k) => [k, readFileSync(`/proc/sys/${k}`, 'utf8').trim()]));
const before = kernel();

let cluster: KubeCluster;
let kube: KubeObjects;
let core: CoreV1Api;
/** The emulator as the node's pods reach it. */
let podEndpoint: string;
let gardenlessImage: TestImage;
let images: Record<TestImageName, TestImage>;
let kubeBin = '';
const workDir = mkdtempSync(join(tmpdir(), 'gl-kube-node-'));
/** The shoot's admin kubeconfig as `gardenless shoot kubeconfig` printed it. */
const ADMIN = join(workDir, 'admin.yaml');
/** A local seed the shoot moves to and back from, its load balancer on an address of its own. */
const LOCAL_SEED = 'node-local';
const LOCAL_LB = '127.0.0.72';
let local: AgentProcess | undefined;

/** Runs `command` in a container through the API server and the kubelet (what `kubectl exec` does). */
async function exec(pod: string, container: string, command: string[], namespace = NAMESPACE): Promise<string> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  err.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const status = await new Promise<{ status?: string; message?: string }>((resolve, reject) => {
    new Exec(cluster.kubeConfig())
      .exec(namespace, pod, container, command, out, err, null, false, (s) => resolve(s as { status?: string }))
      .catch(reject);
  });
  if (status.status !== 'Success') throw new Error(`exec ${command.join(' ')}: ${status.message}\n${stderr}`);
  return stdout;
}

describe("the test seed's real node", () => {
  beforeAll(async () => {
    cluster = await testSeedNode();
    kube = new KubeObjects(cluster.kubeConfig());
    core = cluster.kubeConfig().makeApiClient(CoreV1Api);
    podEndpoint = `http://${await exposeHostPort(cluster, Number(new URL(deployment.awsEndpoint).port))}`;
    images = await loadImages(cluster, NODE_SEED_IMAGES);
    gardenlessImage = images.gardenless;
    kubeBin = await realKubeBinDir();
    await new S3Client({ ...aws, forcePathStyle: true })
      .send(new CreateBucketCommand({ Bucket: BUCKET }))
      .catch((error: unknown) => {
        if ((error as { name?: string }).name !== 'BucketAlreadyOwnedByYou') throw error;
      });
    // The per-seed credentials Secret that docs/kubernetes-seed.md describes for clusters without IRSA.
    await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    await kube.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: CREDENTIALS_SECRET, namespace: NAMESPACE },
      stringData: { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' },
    } as KubernetesObject);
  }, 900_000);

  afterAll(async () => {
    await local?.stop();
    if (!cluster) return;
    await uninstallChart({
      release: 'agent',
      namespace: AGENT_NAMESPACE,
      kubeconfig: cluster.info.kubeconfigPath,
    }).catch(() => undefined);
    for (const name of [NAMESPACE, AGENT_NAMESPACE, served.technicalID])
      await kube.delete({ apiVersion: 'v1', kind: 'Namespace', name }).catch(() => undefined);
    rmSync(workDir, { recursive: true, force: true });
  });

  it("runs the kubernetes runtime's etcd StatefulSet: a real etcd under its sidecar, snapshots in the bucket, logs and exec through the API server", async () => {
    // Prepare: the shoot's owner record names this seed, so the sidecar serves.
    await new Route53OwnerRecords({
      hostedZoneId: deployment.outputs.HostedZoneId,
      api: route53Api(new Route53Client(aws)),
    }).set({ name: ownerRecordName({ shoot: shoot.name, project: shoot.project, internalDomain }), value: IDENTITY });
    const objects = runtimeEtcdObjects({
      shoot,
      namespace: NAMESPACE,
      seed: { name: SEED, zones: cluster.info.zones },
      bucket: BUCKET,
      image: gardenlessImage,
      identity: IDENTITY,
      internalDomain,
      hostedZoneId: deployment.outputs.HostedZoneId,
      region: deployment.region,
      s3Endpoint: podEndpoint,
    });

    // Act: the StatefulSet and its Services, as the runtime applies them.
    for (const o of objects) await kube.apply(o);

    // Assess: the pod Ready on its local volume (the sidecar's /readyz: etcd serves, the owner check passed).
    const pod = await until(
      'the etcd pod Ready',
      async () => {
        const p = await kube.read<V1Pod>({ apiVersion: 'v1', kind: 'Pod', name: 'etcd-0', namespace: NAMESPACE });
        return p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await podReport('etcd-0')}`);
    });
    expect(pod.spec?.nodeName).toBe('localhost');
    expect(pod.spec?.containers[0]?.image).toBe(gardenlessImage.ref);
    expect(await exec('etcd-0', SIDECAR_CONTAINER, ['id', '-u'])).toBe('65532\n');

    // A write through the etcd-client Service's cluster IP (kube-proxy's rules in the node's namespace).
    const service = await kube.read<V1Service>({
      apiVersion: 'v1',
      kind: 'Service',
      name: 'etcd-client',
      namespace: NAMESPACE,
    });
    const endpoint = `http://${service!.spec!.clusterIP}:2379`;
    await exec('etcd-0', SIDECAR_CONTAINER, [
      'etcdctl',
      `--endpoints=${endpoint}`,
      'put',
      '/node/key',
      'on-a-real-node',
    ]);
    expect(
      await exec('etcd-0', SIDECAR_CONTAINER, [
        'etcdctl',
        `--endpoints=${endpoint}`,
        'get',
        '--print-value-only',
        '/node/key',
      ]),
    ).toBe('on-a-real-node\n');
    const revision = Number(
      JSON.parse(
        await exec('etcd-0', SIDECAR_CONTAINER, [
          'etcdctl',
          `--endpoints=${endpoint}`,
          'get',
          '/node/key',
          '-w',
          'json',
        ]),
      ).header.revision,
    );

    // The write reaches the bucket: a full snapshot and the deltas up to its revision.
    const { store } = s3Backup({ bucket: BUCKET, client: new S3Client({ ...aws, forcePathStyle: true }) });
    const snapshots = await until(
      `snapshots up to revision ${revision} in ${BUCKET}`,
      async () => {
        const list = await store.list(shoot.technicalID);
        return list.some((s) => s.kind === 'Full') && list.some((s) => s.lastRevision >= revision) ? list : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1_000 },
    );
    expect(snapshots[0]?.kind).toBe('Full');

    // The sidecar's log through the API server and the kubelet (what `kubectl logs` reads).
    const log = await core.readNamespacedPodLog({ name: 'etcd-0', namespace: NAMESPACE, container: SIDECAR_CONTAINER });
    expect(log).toContain('"event":"snapshot"');
  }, 600_000);

  it('installs the agent with its Helm chart: Running and Ready by its readiness probe as its ServiceAccount, heartbeating with the credentials of a Secret', async () => {
    // Prepare: the seed registered (the agent registers nothing); the garden as the pod reaches it.
    expect((await garden.setup.request('PUT', `/seeds/${SEED}`, { body: backedSeed(SEED, 71) })).status).toBe(201);

    // Act
    await installNodeSeedAgent({
      cluster,
      seed: SEED,
      bucket: BUCKET,
      apiUrl: deployment.apiUrl,
      awsEndpoint: deployment.awsEndpoint,
      region: deployment.region,
      hostedZoneId: deployment.outputs.HostedZoneId,
      internalDomain,
      heartbeatIntervalSeconds: 2,
      images,
    }).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await podReport(undefined, AGENT_NAMESPACE)}`);
    });

    // Assess: the pod as the chart defines it, on a real kubelet.
    const pods = await kube.list<V1Pod>('v1', 'Pod', { namespace: AGENT_NAMESPACE });
    expect(pods).toHaveLength(1);
    const agent = pods[0]!;
    expect(agent.status?.phase).toBe('Running');
    // Ready through its probe, not by having started: the kubelet asked the agent's /readyz on the pod IP.
    const container = agent.spec!.containers[0]!;
    expect(container.readinessProbe?.httpGet).toMatchObject({ path: '/readyz', port: 'health' });
    expect(container.livenessProbe?.httpGet).toMatchObject({ path: '/healthz', port: 'health' });
    expect(agent.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(agent.status?.containerStatuses?.[0]?.ready).toBe(true);
    expect(agent.status?.containerStatuses?.[0]?.restartCount).toBe(0);
    // What it answers there: every check passed, the garden's acceptance and the adoption among them.
    const ready = await until('the agent answering /readyz 200 on its pod IP', () => agentHealth(agent, 'readyz'));
    expect(ready.checks.map((c) => [c.name, c.ok])).toEqual([
      ['heartbeat', true],
      ['commands', true],
      ['records', true],
      ['garden', true],
      ['adoption', true],
    ]);
    expect((await agentHealth(agent, 'healthz')).ok).toBe(true);
    expect(agent.spec?.serviceAccountName).toBe('gardenless-seed-agent');
    expect(agent.status?.qosClass).toBe('Burstable');
    // Its heartbeats reach the garden: the API through the node's forward, signed with the Secret's keys.
    const seed = await until(
      'a heartbeat of the agent in its pod',
      async () => {
        const res = await garden.api.request<{ status: { lastHeartbeatTime?: string } }>('GET', `/seeds/${SEED}`);
        return res.body.status.lastHeartbeatTime ? res.body : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1_000 },
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await podReport(agent.metadata!.name!, AGENT_NAMESPACE)}`);
    });
    expect(Date.parse(seed.status.lastHeartbeatTime!)).toBeGreaterThan(Date.parse(agent.status!.startTime!.toString()));
    console.log(`kube: memory of the node's parts ${JSON.stringify(nodeMemory(cluster.info))}`);
  }, 600_000);

  it("serves a shoot from the node's pods: its kube-apiserver behind the seed's load balancer, kubectl with the printed kubeconfig", async () => {
    // Prepare: a shoot placed on the seed whose agent runs from the chart.
    const body = fixture('shoot-dev-api1');
    body.metadata = { name: served.name };
    body.spec.seedName = SEED;
    delete body.spec.tolerations;
    delete body.spec.controlPlane;

    // Act
    expect(
      (await garden.api.request('PUT', `/projects/${served.project}/shoots/${served.name}`, { body })).status,
    ).toBe(201);

    // Assess: its Create succeeds with every part of it in pods on the node.
    await until(
      `the Create of ${served.project}/${served.name}`,
      async () => {
        const res = await garden.api.request<{ status: { lastOperation?: LastOperation } }>(
          'GET',
          `/projects/${served.project}/shoots/${served.name}`,
        );
        const op = res.body.status.lastOperation;
        if (op?.state === 'Failed') throw new Error(`the Create failed: ${op.description}`);
        return op?.state === 'Succeeded' ? op : undefined;
      },
      { timeoutMs: 600_000, intervalMs: 2_000 },
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${await podReport(undefined, served.technicalID)}`);
    });
    const lb = await kube.read<V1Service>({
      apiVersion: 'v1',
      kind: 'Service',
      name: 'kube-apiserver',
      namespace: served.technicalID,
    });
    const ingress = lb?.status?.loadBalancer?.ingress?.[0];
    expect(LOAD_BALANCER_ADDRESSES).toContain(ingress?.ip);
    expect(ingress?.ports?.[0]?.port).toBe(cluster.info.node!.loadBalancerPort);
    // The files its components read: made from the shoot's CAs, none of the CAs' keys among them.
    const files = await kube.read<V1Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      name: CONTROL_PLANE_FILES_SECRET,
      namespace: served.technicalID,
    });
    const text = Object.values(files?.data ?? {})
      .map((v) => Buffer.from(v, 'base64').toString())
      .join('\n');
    expect(text).toContain('BEGIN CERTIFICATE');
    expect(Object.keys(files?.data ?? {})).not.toContain('ca.key');
    // The heartbeat tells the garden what the etcd pod's sidecar runs with (read from the pod's command line),
    // as the sidecar itself says it: a bad path away from this seed waits by it, not the fixed wait.
    const own = JSON.parse(
      await exec(
        'etcd-0',
        SIDECAR_CONTAINER,
        [
          'node',
          '-e',
          `fetch('http://127.0.0.1:${ETCD_PORTS.status}/status').then((r) => r.json()).then((s) => console.log(JSON.stringify(s.settings)))`,
        ],
        served.technicalID,
      ),
    ) as unknown;
    const reported = await until('the sidecar settings in the seed heartbeat', async () => {
      const seed = await garden.api.request<{ status: { controlPlanes?: HostedControlPlane[] } }>(
        'GET',
        `/seeds/${SEED}`,
      );
      return seed.body.status.controlPlanes?.find((c) => c.technicalID === served.technicalID)?.sidecarSettings;
    });
    expect(reported).toEqual(own);

    // kubectl with the kubeconfig as printed, through the landscape's proxy to the seed's load balancer.
    const config = (await printKubeconfig(deployment, `${served.project}/${served.name}`, ADMIN)) as {
      clusters: { cluster: { server: string } }[];
    };
    expect(new URL(config.clusters[0]!.cluster.server).port).toBe(String(cluster.info.node!.loadBalancerPort));
    await admin('create', 'configmap', 'before', '--from-literal=k=on-the-node');
    expect(await admin('get', 'configmap', 'before', '-o', 'jsonpath={.data.k}')).toBe('on-the-node');
    // The viewers' binding is the agent's, as on a local seed: a viewer reads objects but not Secrets.
    const viewer = join(workDir, 'viewer.yaml');
    await printKubeconfig(deployment, `${served.project}/${served.name}`, viewer, '--viewer');
    expect(
      await kubectlOk(
        { kubeBin, until, what: 'the viewer reads a ConfigMap', kubeconfig: viewer },
        'get',
        'configmap',
        'before',
        '-o',
        'jsonpath={.data.k}',
      ),
    ).toBe('on-the-node');
    const secrets = await kubectl(kubeBin, { kubeconfig: viewer, args: ['get', 'secrets', '-n', 'default'] });
    expect(secrets.stderr).toContain('Forbidden');
    // kube-controller-manager runs: it makes every namespace's root CA ConfigMap.
    expect(await admin('get', 'configmap', 'kube-root-ca.crt', '-n', 'default', '-o', 'name')).toBe(
      'configmap/kube-root-ca.crt',
    );
  }, 900_000);

  it('moves the shoot to a local seed and back on the good path: every object on each side, the same kubeconfig, the pods gone from the source', async () => {
    // Prepare: a local seed whose load balancer serves on the port every seed of the landscape serves on.
    local = await registerSeedWithAgent({
      garden: garden.setup,
      seed: LOCAL_SEED,
      body: backedSeed(LOCAL_SEED, 72),
      workDir,
      deployment,
      ownership: TEST_OWNERSHIP_TIMINGS,
      kube: 'real',
      loadBalancer: { host: LOCAL_LB, port: cluster.info.node!.loadBalancerPort },
    });
    await seedReady(LOCAL_SEED);

    // Act / Assess: to the local seed; what the shoot held is there, read with the same kubeconfig.
    await moveShoot('good', LOCAL_SEED);
    expect(await admin('get', 'configmap', 'before', '-o', 'jsonpath={.data.k}')).toBe('on-the-node');
    await admin('create', 'configmap', 'on-local', '--from-literal=k=written-on-the-local-seed');
    // The source's control plane is gone from the node: its namespace with it.
    await untilServedGone(`namespace ${served.technicalID} gone from the node`, 180_000);

    // ... and back to the node: both objects there, served by the node's pods again.
    await moveShoot('good', SEED);
    expect(await admin('get', 'configmap', 'before', '-o', 'jsonpath={.data.k}')).toBe('on-the-node');
    expect(await admin('get', 'configmap', 'on-local', '-o', 'jsonpath={.data.k}')).toBe('written-on-the-local-seed');
    expect(await servedServersReady()).toEqual(['True', 'True']);
    // Its sidecar backs the restored etcd up again into the node's bucket.
    const log = await servedSidecarLog();
    expect(log).toContain('"event":"snapshot"');
  }, 1_500_000);

  it("moves the shoot to the local seed on the bad path with the node's agent deleted, and back with the local seed's agent frozen", async () => {
    // Prepare: an object written on the node, at the version the node's etcd acknowledged.
    await admin('create', 'configmap', 'before-bad', '--from-literal=k=written-before-the-agent-went');
    const version = await admin('get', 'configmap', 'before-bad', '-o', 'jsonpath={.metadata.resourceVersion}');
    const agentDeployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'gardenless-seed-agent',
      namespace: AGENT_NAMESPACE,
    };

    // Act: the node's agent is deleted (its Deployment scaled to none; the shoot's pods run on), the shoot
    // moves on the bad path; then the agent comes back.
    await kube.mergePatch(agentDeployment, { spec: { replicas: 0 } });
    await until(
      'the agent pod gone',
      async () => (await kube.list<V1Pod>('v1', 'Pod', { namespace: AGENT_NAMESPACE })).length === 0,
      { timeoutMs: 120_000, intervalMs: 1_000 },
    );
    await moveShoot('bad', LOCAL_SEED);
    const afterMove = await admin('get', 'configmap', 'before-bad', '-o', 'jsonpath={.metadata.resourceVersion}');
    // The node's etcd, its agent gone, fences itself on the owner record alone.
    await until("the node's sidecar fenced", async () => (await servedSidecarLog()).includes('"event":"fenced"'), {
      timeoutMs: 120_000,
      intervalMs: 1_000,
    });
    await kube.mergePatch(agentDeployment, { spec: { replicas: 1 } });

    // Assess: the object at its version on the local seed, a write there; the returned agent removes what
    // it hosted of the shoot.
    expect(afterMove).toBe(version);
    await admin('create', 'configmap', 'after-bad', '--from-literal=k=written-on-the-local-seed');
    await untilServedGone(`namespace ${served.technicalID} gone from the node once its agent is back`, 300_000);

    // Act: back to the node on the bad path, the local seed's agent frozen (its etcd and sidecar run on).
    expect(local!.freeze().length).toBeGreaterThan(0);
    try {
      await moveShoot('bad', SEED);
    } finally {
      local!.thaw();
    }

    // Assess: every object on the node, served from its pods; the node's sidecar backs it up again.
    expect(await admin('get', 'configmap', 'before-bad', '-o', 'jsonpath={.metadata.resourceVersion}')).toBe(version);
    expect(await admin('get', 'configmap', 'after-bad', '-o', 'jsonpath={.data.k}')).toBe('written-on-the-local-seed');
    expect(await admin('get', 'configmap', 'on-local', '-o', 'jsonpath={.data.k}')).toBe('written-on-the-local-seed');
    expect(await servedServersReady()).toEqual(['True', 'True']);
    await until(
      "a snapshot by the node's sidecar after the move",
      async () => (await servedSidecarLog()).includes('"event":"snapshot"'),
      { timeoutMs: 120_000, intervalMs: 2_000 },
    );
  }, 1_800_000);

  it('moves the shoot away on the bad path while the whole node is stopped; the node, resumed, fences and lets it go', async () => {
    // Prepare: an object written on the node and backed up; the local seed ready again (its agent was frozen).
    await seedReady(LOCAL_SEED);
    await admin('create', 'configmap', 'before-stop', '--from-literal=k=written-before-the-node-stopped');
    const version = await admin('get', 'configmap', 'before-stop', '-o', 'jsonpath={.metadata.resourceVersion}');
    // A machine that stops loses what its bucket lacks, within the backup lag limit (docs/design.md,
    // section 6: the bad path's bound): the write is in a delta before the node stops.
    const { store } = s3Backup({ bucket: BUCKET, client: new S3Client({ ...aws, forcePathStyle: true }) });
    await until(
      `a snapshot of revision ${version} in ${BUCKET}`,
      async () => (await store.list(served.technicalID)).some((s) => s.lastRevision >= Number(version)),
      { timeoutMs: 120_000, intervalMs: 1_000 },
    );

    // The sidecar's log is followed from before the stop: once resumed, the node's agent may delete the pod
    // within a second of its fence, and a deleted pod's log can no longer be read.
    const sidecar = await followSidecarLog();

    // Act: every process of the node stops (its API server, kubelet, containerd, load balancers and every
    // container: the shoot's etcd, kube-apiserver and the agent); the shoot moves; then the node resumes.
    const frozen = freezeNode(cluster);
    let whileStopped: string;
    try {
      await moveShoot('bad', LOCAL_SEED);
      whileStopped = await admin('get', 'configmap', 'before-stop', '-o', 'jsonpath={.metadata.resourceVersion}');
      await admin('create', 'configmap', 'while-stopped', '--from-literal=k=written-while-the-node-was-stopped');
    } finally {
      thawNode(frozen);
    }

    // Assess: the object at its version on the local seed; the resumed node's etcd fences on the owner
    // record and its agent removes the shoot's pods; what was written meanwhile stays.
    expect(frozen.length).toBeGreaterThan(10);
    expect(whileStopped).toBe(version);
    try {
      await until(
        "the resumed node's sidecar fenced",
        async () => {
          const fenced = (log: string) => log.includes('"event":"fenced"');
          // A stream cut short (not the container's exit) leaves the pod's log to read, if it is still there.
          return fenced(sidecar.text()) || (sidecar.ended() && fenced(await servedSidecarLog().catch(() => '')));
        },
        {
          timeoutMs: 180_000,
          intervalMs: 1_000,
          explain: async () => `the sidecar's log as followed${sidecar.ended() ? ' (ended)' : ''}:\n${sidecar.text()}`,
        },
      );
    } finally {
      sidecar.stop();
    }
    await untilServedGone(`namespace ${served.technicalID} gone from the resumed node`, 300_000);
    expect(await admin('get', 'configmap', 'while-stopped', '-o', 'jsonpath={.data.k}')).toBe(
      'written-while-the-node-was-stopped',
    );
  }, 1_800_000);

  it("leaves the host's kernel settings as they were", () => {
    expect(kernel()).toEqual(before);
  });
});

/** kubectl with the shoot's admin kubeconfig as printed (`ADMIN`). */
const admin = (...args: string[]) =>
  kubectlOk({ kubeBin, until, what: `kubectl ${args.join(' ')}`, kubeconfig: ADMIN }, ...args);

/** Migrates the served shoot and expects it to succeed on the path asked for. */
async function moveShoot(mode: 'good' | 'bad', destinationSeed: string): Promise<void> {
  const record = await migrateShoot({
    api: garden.api,
    project: served.project,
    shoot: served.name,
    destinationSeed,
    mode,
    until: (what, fn) => until(what, fn, { timeoutMs: 600_000, intervalMs: 2_000 }),
  });
  if (record.state !== 'Succeeded') {
    const steps = record.steps
      .filter((s) => s.startedAt !== undefined)
      .map((s) => `${s.id} ${s.state} ${s.startedAt} .. ${s.endedAt ?? ''} ${s.message ?? ''}`);
    expect.fail(
      [
        `migration to ${destinationSeed} on the ${mode} path: ${record.state} ${JSON.stringify(record.error)}`,
        ...steps,
        local ? logTail({ file: local.logFile, lines: 60, matching: served.technicalID }) : '(no local agent)',
        await podReport(undefined, [AGENT_NAMESPACE, served.technicalID]),
      ].join('\n'),
    );
  }
  expect(record.path).toBe(mode);
}

/** Waits until the served shoot's namespace is gone from the node; the agent's pod shows why not. */
async function untilServedGone(what: string, timeoutMs: number): Promise<void> {
  await until(
    what,
    async () => (await kube.read({ apiVersion: 'v1', kind: 'Namespace', name: served.technicalID })) === undefined,
    { timeoutMs, intervalMs: 2_000 },
  ).catch(async (error: unknown) => {
    throw new Error(`${String(error)}\n${await podReport(undefined, AGENT_NAMESPACE)}`);
  });
}

/** The served shoot's etcd sidecar log on the node. */
const servedSidecarLog = () =>
  core.readNamespacedPodLog({ name: 'etcd-0', namespace: served.technicalID, container: SIDECAR_CONTAINER });

/**
 * The served shoot's etcd sidecar log as the kubelet streams it (`kubectl logs -f`): every line from the
 * container's start until it exits, including the lines of a pod deleted meanwhile.
 */
async function followSidecarLog(): Promise<{ text: () => string; ended: () => boolean; stop: () => void }> {
  const stream = new PassThrough();
  let text = '';
  let ended = false;
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  stream.on('end', () => (ended = true));
  const abort = await new Log(cluster.kubeConfig()).log(served.technicalID, 'etcd-0', SIDECAR_CONTAINER, stream, {
    follow: true,
  });
  return { text: () => text, ended: () => ended, stop: () => abort.abort() };
}

/** Readiness of the served shoot's etcd and kube-apiserver pods on the node. */
async function servedServersReady(): Promise<(string | undefined)[]> {
  const pods = await kube.list<V1Pod>('v1', 'Pod', { namespace: served.technicalID });
  return pods
    .filter((p) => ['etcd', 'kube-apiserver'].includes(p.metadata?.labels?.app ?? ''))
    .map((p) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status);
}

/**
 * The agent's health endpoint where the kubelet probes it, on the pod's IP at its `health` port: through
 * the API server's pod proxy (the API server runs in the node's network namespace). A 503 throws, with
 * the endpoint's answer.
 */
async function agentHealth(
  pod: V1Pod,
  path: 'healthz' | 'readyz',
): Promise<{ ok: boolean; checks: { name: string; ok: boolean; detail: string }[] }> {
  const port = pod.spec!.containers[0]!.ports!.find((p) => p.name === 'health')!.containerPort;
  const body: unknown = await core.connectGetNamespacedPodProxyWithPath({
    name: `${pod.metadata!.name!}:${port}`,
    namespace: AGENT_NAMESPACE,
    path,
  });
  return (typeof body === 'string' ? JSON.parse(body) : body) as Awaited<ReturnType<typeof agentHealth>>;
}

/** Waits until the seed's lease is fresh (GardenletReady True). */
async function seedReady(seed: string): Promise<void> {
  await until(
    `${seed} ready`,
    async () =>
      (
        await garden.api.request<{ status: { conditions: { type: string; status: string }[] } }>(
          'GET',
          `/seeds/${seed}`,
        )
      ).body.status.conditions.some((c) => c.type === 'GardenletReady' && c.status === 'True'),
    { timeoutMs: 120_000, intervalMs: 1_000 },
  );
}

/**
 * What a failing wait shows: the pods' status and events, their containers' last log lines (in each of
 * the namespaces), and the node cluster's own last log lines once.
 */
async function podReport(name: string | undefined, namespaces: string | string[] = NAMESPACE): Promise<string> {
  const lines: string[] = [];
  for (const namespace of [namespaces].flat()) {
    const pods = await kube.list<V1Pod>('v1', 'Pod', { namespace }).catch(() => [] as V1Pod[]);
    for (const pod of pods.filter((p) => name === undefined || p.metadata?.name === name)) {
      lines.push(
        `pod ${pod.metadata?.name}: ${JSON.stringify(pod.status?.containerStatuses ?? pod.status?.conditions)}`,
      );
      for (const c of pod.spec?.containers ?? []) {
        const log = await core
          .readNamespacedPodLog({ name: pod.metadata!.name!, namespace, container: c.name, tailLines: 30 })
          .catch((error: unknown) => `(no log: ${String(error)})`);
        lines.push(`--- ${c.name} ---\n${log}`);
      }
    }
    const events = await kube.list<KubernetesObject & { message?: string; reason?: string }>('v1', 'Event', {
      namespace,
    });
    lines.push(...events.map((e) => `event ${e.reason}: ${e.message}`));
  }
  return `${lines.join('\n')}\n${cluster.logs(10)}`;
}
