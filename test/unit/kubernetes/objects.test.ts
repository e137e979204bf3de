import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPONENTS, type ComponentName } from '../../../core/ha/layout.js';
import { SeedAgentConfigError } from '../../../seed/agent/errors.js';
import { imageVector, readImageVector } from '../../../seed/kubernetes/image-vector.js';
import {
  API_SERVER_PORT,
  CONTROL_PLANE_FILES_SECRET,
  controlPlaneFilesSecret,
  controlPlaneObjects,
  REMEMBERED_REPLICAS,
  sidecarArgs,
  type ControlPlaneObjectsOptions,
} from '../../../seed/kubernetes/objects.js';
import { kubeApiServerFlags } from '../../../seed/agent/kube/component-flags.js';
import { CONTROL_PLANE_FILES, controlPlanePaths } from '../../../seed/agent/kube/control-plane-files.js';

const shoot = { project: 'dev', name: 'api1', technicalID: 'shoot--dev--api1' };
const ones = Object.fromEntries(COMPONENTS.map((c) => [c, 1])) as Record<ComponentName, number>;
const base: ControlPlaneObjectsOptions = {
  shoot,
  namespace: shoot.technicalID,
  seed: { name: 'aws-eu1', zones: ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'] },
  replicas: ones,
  backupBucket: 'gl-backup-aws-eu1',
  images: imageVector(),
  sidecar: {
    identity: 'aws-eu1-1234',
    owner: { mode: 'dns', internalDomain: 'gardenless.example.com' },
    aws: { region: 'eu-west-1' },
    sidecar: { ownership: { ownerCheckInterval: 5_000 } },
  },
};
type Obj = {
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string>; annotations?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests read deep into generated objects
  spec: Record<string, any>;
};
const objects = (o: Partial<ControlPlaneObjectsOptions> = {}) =>
  controlPlaneObjects({ ...base, ...o }) as unknown as Obj[];
const find = (list: Obj[], kind: string, name: string) =>
  list.find((x) => x.kind === kind && x.metadata.name === name)!;

describe('controlPlaneObjects', () => {
  const kube = { etcdServers: ['http://10.96.0.20:2379'], apiDomain: 'api.api1.dev.example.com', filesChecksum: 'c1' };

  it("runs kube-apiserver with the command line a local seed runs, its files from the shoot's Secret", () => {
    const deployment = find(objects({ kube }), 'Deployment', 'kube-apiserver');
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;
    const dir = container.volumeMounts[0].mountPath;
    expect(container.command).toEqual([
      'kube-apiserver',
      ...kubeApiServerFlags({
        paths: controlPlanePaths(dir),
        etcdServers: kube.etcdServers,
        bindAddress: '0.0.0.0',
        securePort: API_SERVER_PORT,
        apiDomain: kube.apiDomain,
      }),
    ]);
    expect(pod.volumes).toEqual([
      { name: container.volumeMounts[0].name, secret: { secretName: CONTROL_PLANE_FILES_SECRET, defaultMode: 0o440 } },
    ]);
    expect(container.readinessProbe.httpGet.port).toBe(API_SERVER_PORT);
    expect(find(objects({ kube }), 'Service', 'kube-apiserver').spec.ports[0]).toMatchObject({
      port: 443,
      targetPort: API_SERVER_PORT,
    });
  });

  it('rolls the pods that read the files when what the files were made from changes, and only those', () => {
    const checksums = (filesChecksum: string) =>
      Object.fromEntries(
        objects({ kube: { ...kube, filesChecksum } })
          .filter((o) => o.kind === 'Deployment')
          .map((o) => [o.metadata.name, o.spec.template.metadata.annotations?.['checksum/kube-control-plane']]),
      );
    expect(checksums('c2')).toEqual({
      'kube-apiserver': 'c2',
      'kube-controller-manager': 'c2',
      'kube-scheduler': 'c2',
      'gardener-resource-manager': undefined,
      'machine-controller-manager': undefined,
      'cluster-autoscaler': undefined,
    });
  });

  it("elects a leader among the controllers where the layout runs more than one, whatever the watchdog's hold", () => {
    const command = (o: Partial<ControlPlaneObjectsOptions>) =>
      find(objects({ kube, ...o }), 'Deployment', 'kube-controller-manager').spec.template.spec.containers[0]
        .command as string[];
    expect(command({})).toContain('--leader-elect=false');
    expect(command({ failureTolerance: 'zone' })).toContain('--leader-elect=true');
    expect(command({ failureTolerance: 'zone', replicas: { ...ones, 'kube-controller-manager': 0 } })).toContain(
      '--leader-elect=true',
    );
  });

  it("gives etcd's sidecar the seed's AWS environment from a Secret only where the seed names one", () => {
    const envFrom = (credentialsSecret?: string) =>
      find(
        objects({ sidecar: { ...base.sidecar, ...(credentialsSecret ? { credentialsSecret } : {}) } }),
        'StatefulSet',
        'etcd',
      ).spec.template.spec.containers[0].envFrom;
    expect(envFrom('backup-credentials')).toEqual([{ secretRef: { name: 'backup-credentials' } }]);
    expect(envFrom()).toBeUndefined();
  });

  it("keeps the files' Secret to the components' files: the agent's own access stays with the agent", () => {
    const contents = Object.fromEntries(Object.keys(CONTROL_PLANE_FILES).map((f) => [f, `content of ${f}`])) as Record<
      keyof typeof CONTROL_PLANE_FILES,
      string
    >;
    const secret = controlPlaneFilesSecret({ namespace: 'ns', labels: {}, contents, annotations: {} }) as unknown as {
      data: Record<string, string>;
    };
    expect(Object.keys(secret.data)).not.toContain(CONTROL_PLANE_FILES.agentKubeconfig);
    expect(Buffer.from(secret.data[CONTROL_PLANE_FILES.apiServerKey]!, 'base64').toString()).toBe(
      'content of apiServerKey',
    );
    expect(Object.keys(secret.data)).toHaveLength(Object.keys(CONTROL_PLANE_FILES).length - 1);
  });

  it("lays out every component with its PDB, the Services (kube-apiserver behind a LoadBalancer) and etcd's NetworkPolicy, in the namespace", () => {
    const list = objects();
    expect(list.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Service/etcd-client',
      'Service/etcd-peer',
      'Service/kube-apiserver',
      'NetworkPolicy/etcd',
      ...COMPONENTS.flatMap((c) => [`${c === 'etcd' ? 'StatefulSet' : 'Deployment'}/${c}`, `PodDisruptionBudget/${c}`]),
    ]);
    expect(
      list.every(
        (o) => o.metadata.namespace === shoot.technicalID && o.metadata.labels['seed.gardenless.io/name'] === 'aws-eu1',
      ),
    ).toBe(true);
    expect(find(list, 'Service', 'kube-apiserver').spec.type).toBe('LoadBalancer');
    expect(
      find(list, 'NetworkPolicy', 'etcd').spec.ingress.flatMap((r: { ports: { port: number }[] }) =>
        r.ports.map((p) => p.port),
      ),
    ).toEqual([2379, 2380]);
  });

  it.each([
    ['a watchdog hold', { 'kube-controller-manager': 0 }, { 'kube-controller-manager': 1 }],
    ['hibernation', Object.fromEntries(COMPONENTS.map((c) => [c, 0])), {}],
  ])('takes the replicas it is given (%s) and writes what the watchdog remembered', (_case, replicas, remembered) => {
    const list = objects({ replicas: { ...ones, ...replicas }, remembered });
    for (const c of COMPONENTS) {
      const w = find(list, c === 'etcd' ? 'StatefulSet' : 'Deployment', c);
      expect(w.spec.replicas).toBe({ ...ones, ...replicas }[c]);
      expect(w.metadata.annotations?.[REMEMBERED_REPLICAS]).toBe((remembered as Record<string, number>)[c]?.toString());
    }
  });

  it("runs the backup-restore sidecar in etcd's pods with the seed's identity, bucket, owner record and timings, on a volume", () => {
    const etcd = find(objects(), 'StatefulSet', 'etcd');
    const [container] = etcd.spec.template.spec.containers;
    expect(container.name).toBe('backup-restore');
    expect(container.image).toBe('ghcr.io/gardenless/gardenless:0.1.0');
    expect(container.args).toEqual(sidecarArgs(base));
    const arg = (flag: string) => container.args[container.args.indexOf(flag) + 1];
    expect([
      arg('--owner-record'),
      arg('--identity'),
      arg('--bucket'),
      arg('--owner-check-interval'),
      arg('--owner-mode'),
    ]).toEqual(['owner.api1.dev.gardenless.example.com', 'aws-eu1-1234', 'gl-backup-aws-eu1', '5s', 'dns']);
    expect(container.args).not.toContain('--restore');
    expect(etcd.spec.volumeClaimTemplates[0].metadata.name).toBe('etcd-data');
    expect(etcd.spec.template.metadata.labels).toMatchObject({
      app: 'etcd',
      role: 'main',
      'gardener.cloud/role': 'controlplane',
      'gardener.cloud/shoot': shoot.technicalID,
    });
    expect(container.securityContext).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false });
  });

  it('a restore tells the sidecar to restore up to the expected revision', () => {
    const args = sidecarArgs({ ...base, restore: { expectedLastRevision: 4711 } });
    expect(args.slice(-3)).toEqual(['--restore', '--expected-revision', '4711']);
    expect(sidecarArgs({ ...base, restore: {} }).at(-1)).toBe('--restore');
  });

  it('keeps the GEP-20 placement of the layout: node tolerance pins to one zone, etcd one member per node', () => {
    const etcd = find(objects({ failureTolerance: 'node', replicas: { ...ones, etcd: 3 } }), 'StatefulSet', 'etcd');
    const affinity = etcd.spec.template.spec.affinity;
    expect(
      affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]
        .values,
    ).toHaveLength(1);
    expect(affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey).toBe(
      'kubernetes.io/hostname',
    );
  });
});

describe('image vector', () => {
  const file = (text: string) => {
    const path = join(mkdtempSync(join(tmpdir(), 'gl-images-')), 'images.yaml');
    writeFileSync(path, text);
    return path;
  };

  it('overrides the defaults entry by entry (tag or digest)', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const v = readImageVector(
      file(
        `images:\n  - name: kube-apiserver\n    repository: mirror.example.com/kube-apiserver\n    tag: v1.30.14\n  - name: cluster-autoscaler\n    repository: mirror.example.com/ca\n    tag: "${digest}"\n`,
      ),
    );
    expect(v['kube-apiserver']).toBe('mirror.example.com/kube-apiserver:v1.30.14');
    expect(v['cluster-autoscaler']).toBe(`mirror.example.com/ca@${digest}`);
    expect(v['kube-scheduler']).toBe(imageVector()['kube-scheduler']);
  });

  it.each([
    ['an unknown image name', 'images:\n  - name: kubelet\n    repository: r\n    tag: v1\n'],
    ['a tag with a space', 'images:\n  - name: kube-apiserver\n    repository: r\n    tag: "v 1"\n'],
    ['not YAML', 'images: [\n'],
  ])('refuses %s with a config error', (_case, text) => {
    expect(() => readImageVector(file(text))).toThrow(SeedAgentConfigError);
  });
});
