import { KubeConfig, loadYaml, type KubernetesObject, type V1Deployment, type V1Secret } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { kubeTools } from '../../local/kube/tools.js';
import type { KubeCluster } from '../../local/kube/cluster.js';
import { imageVector, imageVectorSchema } from '../../seed/kubernetes/image-vector.js';
import { KubeObjects } from '../../seed/kubernetes/kube-api.js';
import { CONTROL_PLANE_FILES_SECRET } from '../../seed/kubernetes/objects.js';
import { CONTROL_PLANE_FILES } from '../../seed/agent/kube/control-plane-files.js';
import { COMMAND_API_VERSION, type CommandOf, type SeedCommand } from '../../core/commands/index.js';
import { InMemoryBlobStore } from '../../core/shootstate/index.js';
import { InMemorySnapshotStore } from '../../core/snapshots/index.js';
import { kubernetesRuntime } from '../../seed/kubernetes/agent.js';
import { contractSecrets } from '../contract/seed-runtime.contract.js';
import { renderChart } from '../../local/kube/helm.js';
import { testSeedCluster } from '../harness/kube/seed-cluster.js';

const NAMESPACE = 'gardenless-system';
const values = {
  'seed.name': 'aws-eu1',
  'owner.internalDomain': 'gardenless.example.com',
  'garden.apiUrl': 'https://garden.example.com',
  backupBucket: 'gl-backup-aws-eu1',
};
let cluster: KubeCluster;
let admin: KubeObjects;

describe('the seed agent chart (helm template) on the test seed cluster', () => {
  beforeAll(async () => {
    cluster = await testSeedCluster();
    admin = new KubeObjects(cluster.kubeConfig());
    await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
  }, 600_000);

  it('renders objects the API server admits (server-side dry run), none of them stored; the agent probed on its health port', async () => {
    const objects = await renderChart({
      release: 'agent',
      namespace: NAMESPACE,
      set: values,
      kubeVersion: kubeTools().kubernetesVersion,
    });
    expect(objects.map((o) => o.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'Deployment',
      'ServiceAccount',
    ]);
    for (const object of objects) {
      const admitted = await admin.apply(object, { dryRun: true });
      expect(admitted.metadata?.uid, `${object.kind} ${object.metadata?.name}`).toBeDefined();
    }
    expect(
      await admin.read({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'gardenless-seed-agent',
        namespace: NAMESPACE,
      }),
    ).toBeUndefined();
    const deployment = objects.find((o) => o.kind === 'Deployment') as V1Deployment;
    const container = deployment.spec!.template.spec!.containers[0]!;
    expect(container.args).toEqual(
      expect.arrayContaining([
        'seed-agent',
        '--seed=aws-eu1',
        '--runtime=kubernetes',
        '--in-cluster',
        '--owner-mode=dns',
        '--backup-bucket=gl-backup-aws-eu1',
      ]),
    );
    expect(deployment.spec!.template.spec!.securityContext?.runAsNonRoot).toBe(true);
    expect(container.securityContext?.readOnlyRootFilesystem).toBe(true);
    // The agent's health endpoint, on the named port the probes use (seed/agent/health.ts).
    const health = container.ports?.find((p) => p.name === 'health');
    expect(health?.containerPort).toBeGreaterThan(0);
    expect(container.args).toContain(`--health-port=${health!.containerPort}`);
    expect(container.readinessProbe?.httpGet).toMatchObject({ path: '/readyz', port: 'health' });
    expect(container.livenessProbe?.httpGet).toMatchObject({ path: '/healthz', port: 'health' });
  });

  it('renders the image vector the agent reads: empty by default, overrides by name', async () => {
    const vectorOf = async (set: Record<string, string>) => {
      const objects = await renderChart({
        release: 'agent',
        namespace: NAMESPACE,
        set: { ...values, ...set },
        kubeVersion: kubeTools().kubernetesVersion,
      });
      const cm = objects.find((o) => o.kind === 'ConfigMap') as KubernetesObject & { data: Record<string, string> };
      return imageVectorSchema.parse(loadYaml(cm.data['images.yaml']!));
    };
    expect(await vectorOf({})).toEqual({ images: [] });
    const mirrored = await vectorOf({
      'imageVector[0].name': 'kube-apiserver',
      'imageVector[0].repository': 'mirror.example.com/kube-apiserver',
      'imageVector[0].tag': 'v1.30.14',
    });
    expect(imageVector(mirrored)['kube-apiserver']).toBe('mirror.example.com/kube-apiserver:v1.30.14');
  });

  it("the chart's RBAC is enough for every command of the runtime, and no more than it touches", async () => {
    // Prepare: the ServiceAccount and its RBAC really applied; the runtime acts as that ServiceAccount.
    const objects = await renderChart({
      release: 'agent',
      namespace: NAMESPACE,
      set: values,
      kubeVersion: kubeTools().kubernetesVersion,
    });
    for (const o of objects.filter((x) => ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'].includes(x.kind!)))
      await admin.apply(o);
    const asAgent = new KubeConfig();
    asAgent.loadFromOptions({
      ...cluster.kubeConfig(),
      users: cluster
        .kubeConfig()
        .users.map((u) => ({ ...u, impersonateUser: `system:serviceaccount:${NAMESPACE}:gardenless-seed-agent` })),
    });
    const secrets = contractSecrets('rbac-seed');
    const { runtime } = kubernetesRuntime({
      seed: 'rbac-seed',
      kubeConfig: asAgent,
      zones: cluster.info.zones,
      sidecar: {
        identity: 'rbac-seed-0001',
        owner: { mode: 'dns', internalDomain: 'gardenless.example.com' },
        aws: { region: 'eu-west-1' },
      },
      blobStore: () => new InMemoryBlobStore(),
      snapshotStore: () => new InMemorySnapshotStore(),
      openSecrets: secrets.openSecrets,
    });
    const shoot = { project: 'rbac', name: 'one', technicalID: 'shoot--rbac--one' };
    let serial = 0;
    const cmd = <T extends SeedCommand['type']>(type: T, fields: Record<string, unknown>) =>
      ({
        apiVersion: COMMAND_API_VERSION,
        commandId: `rbac/${++serial}`,
        shoot,
        seed: 'rbac-seed',
        issuedAt: new Date().toISOString(),
        type,
        ...fields,
      }) as unknown as CommandOf<T>;

    // Act / Assess: every command type and the heartbeat, as the agent's ServiceAccount.
    const created = await runtime.execute(
      cmd('create-control-plane', {
        controlPlane: { hibernated: false, backup: { bucket: 'b-rbac' } },
        secrets: await secrets.seal(shoot),
        apiDomain: 'api.one.rbac.gardenless.example.com',
      }),
    );
    expect(created.etcdReady).toBe(true);
    // Its components' files: made from the shoot's secrets, the Secret of the one name it may write.
    const files = await admin.read<V1Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      name: CONTROL_PLANE_FILES_SECRET,
      namespace: 'shoot--rbac--one',
    });
    expect(Object.keys(files?.data ?? {}).sort()).toEqual(
      Object.values(CONTROL_PLANE_FILES)
        .filter((f) => f !== CONTROL_PLANE_FILES.agentKubeconfig)
        .sort(),
    );
    expect(await runtime.execute(cmd('scale', { component: 'kube-controller-manager', replicas: 0 }))).toMatchObject({
      previousReplicas: 1,
    });
    const [plane] = await runtime.controlPlanes();
    expect(plane?.components?.['kube-controller-manager']).toEqual({ replicas: 0 });
    const controllerManager = await admin.read<V1Deployment>({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'kube-controller-manager',
      namespace: 'shoot--rbac--one',
    });
    expect(controllerManager?.spec?.replicas).toBe(0);
    const pod = plane!.pods![0]!;
    expect(await runtime.execute(cmd('restart', { pod: pod.name, dependency: 'etcd' }))).toEqual({
      pod: pod.name,
      restarted: false,
    });
    await runtime.execute(cmd('migrate', { stateBucket: 's' }));
    expect(
      await runtime.execute(cmd('delete-control-plane', { keepBackups: true, keepExternalResources: true })),
    ).toMatchObject({ deleted: true });
    // ... and nothing it does not need: no other Secret, no cluster-wide writes beyond namespaces.
    const asAgentObjects = new KubeObjects(asAgent);
    await expect(asAgentObjects.list('v1', 'Secret', { namespace: 'default' })).rejects.toMatchObject({ code: 403 });
    await expect(
      asAgentObjects.apply({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'another', namespace: 'default' },
        stringData: { a: 'b' },
      } as KubernetesObject),
    ).rejects.toMatchObject({ code: 403 });
    await expect(
      asAgentObjects.apply({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'escalate' },
        rules: [],
      } as KubernetesObject),
    ).rejects.toMatchObject({ code: 403 });
  });
});
