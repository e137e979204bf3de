import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { Route53Client } from '@aws-sdk/client-route-53';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import {
  CoreV1Api,
  Watch,
  type KubernetesObject,
  type V1Deployment,
  type V1Pod,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Route53ApiRecords } from '../../adapters/route53/api-records.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { sendTaskCommand } from '../../adapters/sqs/command-sender.js';
import { COMMAND_API_VERSION, type SeedCommand } from '../../core/commands/index.js';
import { apiDomainName } from '../../core/dns/index.js';
import { SCALE_DOWN_ORDER } from '../../core/dwd/components.js';
import type { HostedControlPlane } from '../../core/model/seed.js';
import { technicalID } from '../../core/model/names.js';
import { ownerRecordName } from '../../core/ownership/index.js';
import { freePort } from '../../seed/ports.js';
import type { KubeCluster } from '../../local/kube/cluster.js';
import type { SeedAgent } from '../../seed/agent/agent.js';
import { kubernetesSeedAgent } from '../../seed/kubernetes/agent.js';
import { KubeObjects } from '../../seed/kubernetes/kube-api.js';
import { REMEMBERED_REPLICAS, SEED_LABEL } from '../../seed/kubernetes/objects.js';
import { backedSeed, fixture } from '../../harness/fixtures/index.js';
import { FakeSidecar } from '../../harness/fake-sidecar.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { testSeedCluster } from '../harness/kube/seed-cluster.js';
import { untilWith } from '../../harness/until.js';

// Two seed agents with the kubernetes runtime on the deployed stack, both on the run's test seed cluster
// (kube-b's namespaces carry a prefix: two namespaces' worth of seeds on one API server). kwok runs no
// containers, so a stand-in sidecar writes the source's snapshots; everything else is real: provisioning,
// the watchdog Lambda, the migrate-shoot state machine, the agents and the API server.

const garden = testGarden();
const { api, deployment, aws } = garden;
const sqs = new SQSClient(aws);
const lambda = new LambdaClient(aws);
const owners = new Route53OwnerRecords({
  hostedZoneId: deployment.outputs.HostedZoneId,
  api: route53Api(new Route53Client(aws)),
});
const internalDomain = deployment.outputs.InternalDomain;
const apiRecords = new Route53ApiRecords({
  hostedZoneId: deployment.outputs.ApiHostedZoneId!,
  api: route53Api(new Route53Client(aws)),
});
const PROJECT = 'kube';
const NAME = 'web';
const ID = technicalID(PROJECT, NAME);
const shootRef = { project: PROJECT, name: NAME, technicalID: ID };
const API = apiDomainName({ shoot: NAME, project: PROJECT, externalDomain: deployment.outputs.ExternalDomain! });
/** kube-b's load balancer address, as its cloud controller would write it (nothing needs to answer there). */
const LB_B = '127.0.0.7';
const SEEDS = { a: { name: 'kube-a', prefix: '' }, b: { name: 'kube-b', prefix: 'kube-b--' } } as const;

let cluster: KubeCluster;
let kube: KubeObjects;
const agents: Record<string, SeedAgent> = {};
const stops: (() => Promise<unknown>)[] = [];
const logs: string[] = [];

/** The test plays the cloud's load balancer: an HTTP endpoint whose health it switches. */
let lbHealthy = true;
let lb: Server;
let lbPort: number;

async function startAgent(seed: { name: string; prefix: string }, networkIndex: number): Promise<SeedAgent> {
  await new S3Client({ ...aws, forcePathStyle: true }).send(
    new CreateBucketCommand({ Bucket: `gl-backup-${seed.name}` }),
  );
  expect((await api.request('PUT', `/seeds/${seed.name}`, { body: backedSeed(seed.name, networkIndex) })).status).toBe(
    201,
  );
  return runAgent(seed);
}

/** An agent of a registered seed: a new one finds the control planes the seed's cluster records. */
async function runAgent(seed: { name: string; prefix: string }): Promise<SeedAgent> {
  const { agent } = await kubernetesSeedAgent({
    seed: seed.name,
    garden: api,
    kube: { kubeConfig: cluster.kubeConfig() },
    aws,
    owner: { mode: 'api', hostedZoneId: deployment.outputs.HostedZoneId, internalDomain },
    backupBucket: `gl-backup-${seed.name}`,
    ...(seed.prefix ? { namespacePrefix: seed.prefix } : {}),
    heartbeatIntervalMs: 2000,
    pollWaitSeconds: 1,
    sidecar: { ownership: { ownerCheckInterval: 5_000 }, deltaSnapshotInterval: 20_000 },
    // The test's load balancer speaks HTTP on a loopback port.
    externalUrl: ({ host, port }) => `http://${host}:${port}`,
    log: (entry) => logs.push(JSON.stringify({ seed: seed.name, ...entry })),
  });
  await agent.start();
  stops.push(() => agent.stop());
  agents[seed.name] = agent;
  return agent;
}

async function reported(seed: string): Promise<HostedControlPlane | undefined> {
  const res = await api.request<{ status: { controlPlanes?: HostedControlPlane[] } }>('GET', `/seeds/${seed}`);
  return res.body.status.controlPlanes?.find((p) => p.technicalID === ID);
}

const until = untilWith({
  timeoutMs: 60_000,
  intervalMs: 250,
  explain: () => `${logs.slice(-20).join('\n')}\n${cluster.logs(10)}`,
});

let serial = 0;
async function send(seed: string, command: Record<string, unknown>): Promise<void> {
  serial += 1;
  const agent = agents[seed]!;
  const full = {
    apiVersion: COMMAND_API_VERSION,
    commandId: `kube-test/${Date.now()}-${serial}`,
    shoot: shootRef,
    seed,
    issuedAt: new Date().toISOString(),
    ...command,
  } as SeedCommand;
  await sendTaskCommand({ client: sqs, queueUrl: agent.queueUrl!, messageGroupId: ID, command: full });
}

async function watchdogRound(seed: string, since: number): Promise<void> {
  await until('a fresh heartbeat', async () => {
    const cp = await reported(seed);
    return cp?.internalProbeTime !== undefined && Date.parse(cp.internalProbeTime) > since;
  });
  const res = await lambda.send(
    new InvokeCommand({
      FunctionName: deployment.outputs.WatchdogFunctionName,
      Payload: Buffer.from(JSON.stringify({ rounds: 1 })),
    }),
  );
  expect(res.FunctionError, Buffer.from(res.Payload ?? new Uint8Array()).toString()).toBeUndefined();
}

const workload = <T extends KubernetesObject>(namespace: string, kind: 'Deployment' | 'StatefulSet', name: string) =>
  kube.read<T>({ apiVersion: 'apps/v1', kind, name, namespace });
const sidecarArgs = (sts: V1StatefulSet | undefined) =>
  sts?.spec?.template.spec?.containers.find((c) => c.name === 'backup-restore')?.args ?? [];
const argOf = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

/** Plays kube-b's cloud controller: gives the destination's kube-apiserver Service a load balancer address once it exists. */
function cloudControllerOnB(port: number): { stop: () => Promise<void> } {
  let running = true;
  const loop = (async () => {
    const core = cluster.kubeConfig().makeApiClient(CoreV1Api);
    const namespace = `${SEEDS.b.prefix}${ID}`;
    while (running) {
      const svc = await kube
        .read<KubernetesObject & { status?: { loadBalancer?: { ingress?: unknown[] } } }>({
          apiVersion: 'v1',
          kind: 'Service',
          name: 'kube-apiserver',
          namespace,
        })
        .catch(() => undefined);
      if (svc && !svc.status?.loadBalancer?.ingress?.length) {
        await core
          .patchNamespacedServiceStatus({
            name: 'kube-apiserver',
            namespace,
            body: [
              {
                op: 'add',
                path: '/status/loadBalancer',
                value: { ingress: [{ ip: LB_B, ports: [{ port, protocol: 'TCP' }] }] },
              },
            ],
          })
          .catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return { stop: async () => void ((running = false), await loop) };
}

/** Every object of the shoot's control plane that seed `seed` has anywhere on the cluster. */
async function controlPlaneObjects(seed: string): Promise<string[]> {
  const kinds: [string, string][] = [
    ['apps/v1', 'Deployment'],
    ['apps/v1', 'StatefulSet'],
    ['v1', 'Service'],
    ['policy/v1', 'PodDisruptionBudget'],
    ['v1', 'ConfigMap'],
    ['networking.k8s.io/v1', 'NetworkPolicy'],
  ];
  const found: string[] = [];
  for (const [apiVersion, kind] of kinds) {
    for (const o of await kube.list(apiVersion, kind, {
      labelSelector: `${SEED_LABEL}=${seed},gardener.cloud/shoot=${ID}`,
    }))
      found.push(`${kind} ${o.metadata?.namespace}/${o.metadata?.name}`);
  }
  const pods = await kube.list<V1Pod>('v1', 'Pod', { labelSelector: `gardener.cloud/shoot=${ID}` });
  return [
    ...found,
    ...pods
      .filter((p) => p.metadata?.namespace === `${seed === SEEDS.b.name ? SEEDS.b.prefix : ''}${ID}`)
      .map((p) => `Pod ${p.metadata?.namespace}/${p.metadata?.name}`),
  ];
}

describe('the kubernetes runtime on a real API server with kwok nodes, driven by the deployed garden', () => {
  beforeAll(async () => {
    cluster = await testSeedCluster();
    kube = new KubeObjects(cluster.kubeConfig());
    lbPort = await freePort();
    lb = createServer((req, res) =>
      res.writeHead(lbHealthy ? 200 : 503).end(lbHealthy ? 'ok' : 'load balancer broken'),
    );
    await new Promise<void>((resolve) => lb.listen(lbPort, '127.0.0.1', resolve));
    await resetGardenState(garden);
    await startAgent(SEEDS.a, 70);
    await startAgent(SEEDS.b, 71);
  }, 600_000);

  afterAll(async () => {
    for (const stop of stops.splice(0)) await stop();
    lb?.close();
  });

  it('placing a shoot creates its control plane: every component a seed runs is there in its GEP-20 layout, Ready', async () => {
    // Act: provisioning writes the owner record and sends create-control-plane to kube-a's agent.
    const shoot = fixture('shoot-dev-api1');
    shoot.metadata = { name: NAME };
    shoot.spec.seedName = SEEDS.a.name;
    delete shoot.spec.tolerations;
    shoot.spec.controlPlane = { highAvailability: { failureTolerance: { type: 'node' } } };
    expect((await api.request('PUT', `/projects/${PROJECT}/shoots/${NAME}`, { body: shoot })).status).toBe(201);

    // Assess: the heartbeat says active, and the API server says every workload is Ready.
    await until('the control plane active on kube-a', async () => (await reported(SEEDS.a.name))?.active, {
      timeoutMs: 90_000,
    });
    const etcd = await until('etcd 3/3 Ready', async () => {
      const sts = await workload<V1StatefulSet>(ID, 'StatefulSet', 'etcd');
      return sts?.status?.readyReplicas === 3 && sts;
    });
    const expected = { 'kube-apiserver': 3, 'kube-controller-manager': 2, 'kube-scheduler': 2 };
    for (const [name, replicas] of Object.entries(expected)) {
      const d = await until(`${name} ${replicas}/${replicas} available`, async () => {
        const dep = await workload<V1Deployment>(ID, 'Deployment', name);
        return dep?.status?.availableReplicas === replicas && dep;
      });
      expect(d.spec?.replicas).toBe(replicas);
    }
    // Laid out by GEP-20 but run by no seed: a gardenless shoot has no worker pools (components.ts).
    for (const name of ['gardener-resource-manager', 'machine-controller-manager', 'cluster-autoscaler'])
      expect(await workload<V1Deployment>(ID, 'Deployment', name)).toBeUndefined();
    const pods = await kube.list<V1Pod>('v1', 'Pod', { namespace: ID });
    expect(pods).toHaveLength(3 + Object.values(expected).reduce((a, b) => a + b, 0));
    expect(
      pods.every(
        (p) =>
          p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ),
    ).toBe(true);
    // GEP-20, node tolerance: one zone, the three etcd members on three nodes.
    const etcdPods = pods.filter((p) => p.metadata?.labels?.app === 'etcd');
    expect(new Set(etcdPods.map((p) => p.spec?.nodeName)).size).toBe(3);
    expect(new Set(pods.map((p) => p.spec?.nodeName?.replace(/-\d+$/, ''))).size).toBe(1);
    const pdbs = await kube.list<KubernetesObject & { spec: { maxUnavailable: number } }>(
      'policy/v1',
      'PodDisruptionBudget',
      { namespace: ID },
    );
    expect(pdbs.map((p) => [p.metadata?.name, p.spec.maxUnavailable]).sort()).toEqual(
      Object.keys({ etcd: 1, ...expected })
        .sort()
        .map((n) => [n, 1]),
    );
    const lbService = await kube.read<KubernetesObject & { spec: { type: string } }>({
      apiVersion: 'v1',
      kind: 'Service',
      name: 'kube-apiserver',
      namespace: ID,
    });
    expect(lbService?.spec.type).toBe('LoadBalancer');
    const pvcs = await kube.list<KubernetesObject & { status?: { phase?: string } }>('v1', 'PersistentVolumeClaim', {
      namespace: ID,
    });
    expect(pvcs.map((p) => p.status?.phase)).toEqual(['Bound', 'Bound', 'Bound']);
    // The sidecar of every etcd pod: this seed's identity, its bucket, the shoot's owner record, no restore.
    const args = sidecarArgs(etcd);
    expect(argOf(args, '--owner-record')).toBe(ownerRecordName({ shoot: NAME, project: PROJECT, internalDomain }));
    expect(argOf(args, '--identity')).toBe(agents[SEEDS.a.name]!.identity);
    expect(argOf(args, '--bucket')).toBe(`gl-backup-${SEEDS.a.name}`);
    expect(argOf(args, '--owner-check-interval')).toBe('5s');
    expect(args).not.toContain('--restore');
    expect(
      etcd.spec?.template.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.[0]
        ?.topologyKey,
    ).toBe('kubernetes.io/hostname');
  }, 240_000);

  it('the dependency watchdog scales kube-controller-manager to 0 and back on its Deployment, and deploys nothing the seed does not run', async () => {
    // Prepare: the test's load balancer gets an address, as a cloud controller would write it.
    await cluster
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .patchNamespacedServiceStatus({
        name: 'kube-apiserver',
        namespace: ID,
        body: [
          {
            op: 'add',
            path: '/status/loadBalancer',
            value: { ingress: [{ ip: '127.0.0.1', ports: [{ port: lbPort, protocol: 'TCP' }] }] },
          },
        ],
      });
    await until('the external URL and a Success internal probe in the heartbeat', async () => {
      const cp = await reported(SEEDS.a.name);
      return cp?.externalUrl === `http://127.0.0.1:${lbPort}` && cp.internalProbe === 'Success';
    });
    const replicas = async () =>
      Object.fromEntries(
        await Promise.all(
          SCALE_DOWN_ORDER.map(async (c) => [c, (await workload<V1Deployment>(ID, 'Deployment', c))?.spec?.replicas]),
        ),
      );
    const notRun = { 'machine-controller-manager': undefined, 'cluster-autoscaler': undefined };

    // Act: the load balancer breaks while kube-apiserver stays Ready inside the seed.
    lbHealthy = false;
    for (let i = 0; i < 3; i++) await watchdogRound(SEEDS.a.name, Date.now());

    // Assess: kube-controller-manager's Deployment at 0, remembering its 2 replicas; the watchdog's holds of
    // the two components no seed runs are the runtime's model alone (the heartbeat's), no Deployment.
    await until('kube-controller-manager at 0 on the API server', async () => {
      const [cp, now] = await Promise.all([reported(SEEDS.a.name), replicas()]);
      return now['kube-controller-manager'] === 0 && SCALE_DOWN_ORDER.every((c) => cp?.components?.[c]?.replicas === 0);
    });
    expect(await replicas()).toEqual({ 'kube-controller-manager': 0, ...notRun });
    expect(
      (await workload<V1Deployment>(ID, 'Deployment', 'kube-controller-manager'))?.metadata?.annotations?.[
        REMEMBERED_REPLICAS
      ],
    ).toBe('2');
    expect((await workload<V1Deployment>(ID, 'Deployment', 'kube-apiserver'))?.spec?.replicas).toBe(3);

    // An agent in a new pod adopts the plane from the record its namespace keeps, and keeps the hold:
    // it starts what the plane runs again without scaling up what the watchdog holds down.
    await agents[SEEDS.a.name]!.stop();
    const since = Date.now();
    await runAgent(SEEDS.a);
    await until('the new agent reports the plane active', async () => {
      const cp = await reported(SEEDS.a.name);
      return cp?.active === true && cp.internalProbeTime !== undefined && Date.parse(cp.internalProbeTime) > since;
    });
    expect(await replicas()).toEqual({ 'kube-controller-manager': 0, ...notRun });

    lbHealthy = true;
    for (let i = 0; i < 2; i++) await watchdogRound(SEEDS.a.name, Date.now());
    await until('the remembered replicas back on the API server', async () => {
      const now = await replicas();
      return now['kube-controller-manager'] === 2 && now['machine-controller-manager'] === undefined;
    });
    expect(await replicas()).toEqual({ 'kube-controller-manager': 2, ...notRun });
    expect(
      (await workload<V1Deployment>(ID, 'Deployment', 'kube-controller-manager'))?.metadata?.annotations?.[
        REMEMBERED_REPLICAS
      ],
    ).toBeUndefined();
  }, 240_000);

  it("a wake through the garden answers with the Service's load balancer: the API record points there and the shoot advertises the API domain", async () => {
    // The Create answered before the Service had an address: no record yet. Hibernation names none either.
    const operated = async (type: 'Hibernate' | 'Wake', enabled: boolean) => {
      const patched = await api.request('PATCH', `/projects/${PROJECT}/shoots/${NAME}`, {
        body: { spec: { hibernation: { enabled } } },
        headers: { 'content-type': 'application/merge-patch+json' },
      });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      return until(
        `the ${type} Succeeded`,
        async () => {
          const res = await api.request<{
            status: {
              lastOperation?: { type: string; state: string };
              advertisedAddresses?: { name: string; url: string }[];
            };
          }>('GET', `/projects/${PROJECT}/shoots/${NAME}`);
          const last = res.body.status.lastOperation;
          return last?.type === type && last.state === 'Succeeded' && res.body;
        },
        { timeoutMs: 150_000 },
      );
    };
    const asleep = await operated('Hibernate', true);
    expect(await apiRecords.get(API)).toBeUndefined();
    expect(asleep.status.advertisedAddresses).toBeUndefined();

    // Act: the wake's answer names the load balancer the cloud gave the Service above.
    const awake = await operated('Wake', false);

    // Assess
    expect(await apiRecords.get(API)).toMatchObject({ name: API, type: 'A', value: '127.0.0.1' });
    expect(awake.status.advertisedAddresses).toEqual([{ name: 'external', url: `http://${API}:${lbPort}` }]);
  }, 360_000);

  it('hibernation scales every workload to 0 and no control-plane pod is left; waking brings them back', async () => {
    const controlPlane = (hibernated: boolean) => ({
      hibernated,
      failureTolerance: 'node',
      backup: { bucket: `gl-backup-${SEEDS.a.name}` },
    });
    await send(SEEDS.a.name, { type: 'reconcile', controlPlane: controlPlane(true) });
    await until('every workload at 0 and no pods', async () => {
      const cp = await reported(SEEDS.a.name);
      return (
        cp !== undefined &&
        Object.values(cp.components ?? {}).every((c) => c.replicas === 0) &&
        (await kube.list('v1', 'Pod', { namespace: ID })).length === 0
      );
    });
    expect((await workload<V1StatefulSet>(ID, 'StatefulSet', 'etcd'))?.spec?.replicas).toBe(0);

    await send(SEEDS.a.name, { type: 'reconcile', controlPlane: controlPlane(false) });
    await until('etcd and kube-apiserver Ready again', async () => {
      const sts = await workload<V1StatefulSet>(ID, 'StatefulSet', 'etcd');
      const api = await workload<V1Deployment>(ID, 'Deployment', 'kube-apiserver');
      return sts?.status?.readyReplicas === 3 && api?.status?.availableReplicas === 3;
    });
  }, 240_000);

  it('migrate then restore: the source migrates and deletes, then the destination restores etcd and the extensions, in that order', async () => {
    // Prepare: record every StatefulSet and state ConfigMap event on the cluster, in the order the API server sends them.
    const events: {
      type: string;
      namespace: string;
      kind: string;
      migrated?: boolean;
      restore?: boolean;
      expectedRevision?: number;
      restored?: boolean;
    }[] = [];
    const watch = new Watch(cluster.kubeConfig());
    const record = (kind: string) => (type: string, o: KubernetesObject & { data?: Record<string, string> }) => {
      const state = o.data?.['state.json']
        ? (JSON.parse(o.data['state.json']) as {
            migrated: boolean;
            extensions: { status: { lastOperation?: { type: string; state: string } } }[];
          })
        : undefined;
      events.push({
        type,
        kind,
        namespace: o.metadata?.namespace ?? '',
        ...(state
          ? {
              migrated: state.migrated,
              restored:
                state.extensions.length > 0 &&
                state.extensions.every(
                  (e) => e.status.lastOperation?.type === 'Restore' && e.status.lastOperation.state === 'Succeeded',
                ),
            }
          : {}),
        ...(kind === 'StatefulSet'
          ? {
              restore: sidecarArgs(o as V1StatefulSet).includes('--restore'),
              expectedRevision: Number(argOf(sidecarArgs(o as V1StatefulSet), '--expected-revision')),
            }
          : {}),
      });
    };
    const watches = await Promise.all([
      watch.watch(
        '/apis/apps/v1/statefulsets',
        { labelSelector: `gardener.cloud/shoot=${ID}` },
        record('StatefulSet'),
        () => undefined,
      ),
      watch.watch(
        '/api/v1/configmaps',
        { fieldSelector: 'metadata.name=gardenless-control-plane' },
        record('ConfigMap'),
        () => undefined,
      ),
    ]);
    // kwok runs no containers: a stand-in sidecar takes the source's full snapshot and, when the owner record goes, its final one.
    const sidecar = FakeSidecar.onDeployment(deployment, {
      shoot: shootRef,
      identity: agents[SEEDS.a.name]!.identity!,
      bucket: `gl-backup-${SEEDS.a.name}`,
    });
    await sidecar.start();
    stops.push(() => sidecar.stop());

    const cloud = cloudControllerOnB(lbPort);
    stops.push(() => cloud.stop());

    // Act
    const started = await api.request<{ migrationId: string }>('POST', `/projects/${PROJECT}/shoots/${NAME}/migrate`, {
      body: { destinationSeed: SEEDS.b.name, mode: 'good' },
    });
    expect(started.status).toBe(202);
    const m = await until(
      'the migration settled',
      async () => {
        const res = await api.request<{
          state: string;
          path: string;
          error?: unknown;
          steps: { id: string; message?: string }[];
        }>('GET', `/projects/${PROJECT}/shoots/${NAME}/migration`);
        return res.body.state !== 'Running' && res.body;
      },
      { timeoutMs: 180_000 },
    );
    for (const w of watches) w.abort();
    await cloud.stop();

    // Assess: the garden's view.
    expect(m.state, JSON.stringify(m)).toBe('Succeeded');
    expect(m.path).toBe('good');
    // The API record followed the control plane to kube-b's load balancer, once kube-b's heartbeat reported it serving.
    expect(m.steps.find((s) => s.id === 'switch-api-record')?.message).toContain(`A ${LB_B}`);
    expect(await apiRecords.get(API)).toMatchObject({ type: 'A', value: LB_B });
    expect((await owners.get(ownerRecordName({ shoot: NAME, project: PROJECT, internalDomain })))?.value).toBe(
      agents[SEEDS.b.name]!.identity,
    );
    // The source has no control-plane object left; the destination has them all, Ready, its sidecar restoring from its own bucket.
    expect(await controlPlaneObjects(SEEDS.a.name)).toEqual([]);
    const destination = `${SEEDS.b.prefix}${ID}`;
    // The migration's restore command carries no failure tolerance (core/migration), so the destination
    // lays the control plane out without HA: all its etcd members Ready is what counts here.
    const etcd = await until('etcd Ready on the destination', async () => {
      const sts = await workload<V1StatefulSet>(destination, 'StatefulSet', 'etcd');
      return (sts?.spec?.replicas ?? 0) > 0 && sts?.status?.readyReplicas === sts?.spec?.replicas && sts;
    });
    const args = sidecarArgs(etcd);
    expect(argOf(args, '--identity')).toBe(agents[SEEDS.b.name]!.identity);
    expect(argOf(args, '--bucket')).toBe(`gl-backup-${SEEDS.b.name}`);
    expect(argOf(args, '--owner-record')).toBe(ownerRecordName({ shoot: NAME, project: PROJECT, internalDomain }));
    // Restored, its sidecar starts from its data again: no later restart of its pod restores over new writes.
    expect(args).not.toContain('--restore');
    await until('the shoot active on kube-b', async () => (await reported(SEEDS.b.name))?.active);
    // The order of docs/design.md section 5: migrate (source) < delete (source) < restore etcd (destination) < restore extensions (destination).
    const at = (predicate: (e: (typeof events)[number]) => boolean, what: string) => {
      const i = events.findIndex(predicate);
      expect(i, `${what} in ${JSON.stringify(events)}`).toBeGreaterThanOrEqual(0);
      return i;
    };
    const migrated = at(
      (e) => e.kind === 'ConfigMap' && e.namespace === ID && e.migrated === true,
      'the source migrated',
    );
    const deleted = at(
      (e) => e.kind === 'StatefulSet' && e.namespace === ID && e.type === 'DELETED',
      'the source etcd deleted',
    );
    const restoring = at(
      (e) =>
        e.kind === 'StatefulSet' &&
        e.namespace === destination &&
        e.type === 'ADDED' &&
        e.restore === true &&
        (e.expectedRevision ?? 0) > 0,
      'the destination etcd restoring to the source final revision',
    );
    const restored = at(
      (e) => e.kind === 'ConfigMap' && e.namespace === destination && e.restored === true,
      'the destination extensions restored',
    );
    expect([migrated, deleted, restoring, restored]).toEqual(
      [...[migrated, deleted, restoring, restored]].sort((x, y) => x - y),
    );
    expect(new Set([migrated, deleted, restoring, restored]).size).toBe(4);
  }, 300_000);

  it('delete-control-plane leaves no control-plane object on the seed', async () => {
    await send(SEEDS.b.name, { type: 'delete-control-plane', keepBackups: true, keepExternalResources: true });
    await until(
      'the namespace gone',
      async () =>
        (await kube.read({ apiVersion: 'v1', kind: 'Namespace', name: `${SEEDS.b.prefix}${ID}` })) === undefined,
      { timeoutMs: 120_000 },
    );
    expect(await controlPlaneObjects(SEEDS.b.name)).toEqual([]);
    await until('the heartbeat without the shoot', async () => (await reported(SEEDS.b.name)) === undefined);
  }, 240_000);
});
