import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { apiDomainName } from '../../core/dns/index.js';
import type { MigrationRecord } from '../../core/migration/index.js';
import type { LastOperation } from '../../core/model/common.js';
import { technicalID } from '../../core/model/names.js';
import { fixture } from '../../harness/fixtures/index.js';
import { resetGardenState } from '../../harness/garden.js';
import { realKubeBinDir } from '../../harness/kube/binaries.js';
import { portFreeOn, registerLocalSeed, startLocalSeedAgent, type LocalSeed } from '../../harness/local-seed.js';
import { untilWith } from '../../harness/until.js';
import { testGarden } from '../harness/garden.js';
import {
  kubectl as runKubectl,
  kubectlOk as kubectlUntilOk,
  printKubeconfig as printShootKubeconfig,
} from '../harness/kubectl.js';

/**
 * A shoot as its users meet it: a real kube-apiserver, kube-controller-manager and kube-scheduler per
 * control plane (local runtime), the kubeconfig exactly as `gardenless shoot kubeconfig` prints it, and an
 * unmodified kubectl, on a machine whose resolver knows nothing of the API domain (the kubeconfig names the
 * landscape's proxy, which resolves it through the Route 53 zone). The same kubeconfig file keeps working
 * across a migration, and what the shoot held before it (objects, a Secret encrypted at rest, a
 * ServiceAccount token) is there after it.
 */
const garden = testGarden();
const { api, deployment } = garden;
const project = 'kctl';
const shootName = 'web';
const id = technicalID(project, shootName);
const LB = { 'kctl-a': '127.0.0.4', 'kctl-b': '127.0.0.5' } as const;
type SeedName = keyof typeof LB;
const workDir = mkdtempSync(join(tmpdir(), 'gl-kubectl-'));
const agents = new Map<SeedName, LocalSeed>();
const logs: string[] = [];
let kubeBin = '';
/** The files kubectl is given, as printed by the CLI (admin, viewer) or made from a ServiceAccount token. */
const kubeconfigs = { admin: join(workDir, 'admin.yaml'), viewer: join(workDir, 'viewer.yaml') };

const until = untilWith({ intervalMs: 500, timeoutMs: 120_000, explain: () => logs.slice(-20).join('\n') });

/** kubectl with only the given kubeconfig (no KUBECONFIG, no other flags that could name the server). */
const kubectl = (kubeconfig: string, ...args: string[]) => runKubectl(kubeBin, { kubeconfig, args });
const kubectlWith = (options: { kubeconfig: string; args: string[]; input?: string }) => runKubectl(kubeBin, options);
const kubectlOk = (what: string, kubeconfig: string, ...args: string[]) =>
  kubectlUntilOk({ kubeBin, until, what, kubeconfig, context: () => logs.slice(-10).join('\n') }, ...args);

/** ConfigMap `before`'s value as `kubeconfig` reads it (retried until it can). */
const configMapValue = (what: string, kubeconfig: string) =>
  kubectlOk(what, kubeconfig, 'get', 'configmap', 'before', '-o', 'jsonpath={.data.k}');

const printKubeconfig = (file: string, ...flags: string[]) =>
  printShootKubeconfig(deployment, `${project}/${shootName}`, file, ...flags);

async function startAgent(name: SeedName, lbPort: number): Promise<void> {
  agents.set(
    name,
    await startLocalSeedAgent({
      deployment,
      garden: api,
      name,
      workDir: join(workDir, name),
      kubeBinDir: kubeBin,
      loadBalancer: { host: LB[name], port: lbPort },
      log: (entry) => logs.push(JSON.stringify({ seed: name, ...entry })),
    }),
  );
}

let lbPort = 0;
let robotToken = '';
/** resourceVersions before the migration, by `kind/name`. */
const before = new Map<string, string>();
/** The ConfigMap list's resourceVersion before the migration: a watch resumes from it. */
let listVersion = '';

describe('kubectl with the printed kubeconfig, on real Kubernetes control planes, across a migration', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    kubeBin = await realKubeBinDir();
    lbPort = await portFreeOn([LB['kctl-a'], LB['kctl-b']]);
    for (const [i, name] of (['kctl-a', 'kctl-b'] as const).entries()) {
      await registerLocalSeed({ garden: api, deployment, name, networkIndex: 90 + i });
      await startAgent(name, lbPort);
    }
    const body = fixture('shoot-dev-api1');
    body.metadata = { name: shootName };
    body.spec.seedName = 'kctl-a';
    delete body.spec.tolerations;
    delete body.spec.controlPlane;
    expect((await api.request('PUT', `/projects/${project}/shoots/${shootName}`, { body })).status).toBe(201);
    await until(
      'Create Succeeded',
      async () =>
        (
          await api.request<{ status: { lastOperation?: LastOperation } }>(
            'GET',
            `/projects/${project}/shoots/${shootName}`,
          )
        ).body.status.lastOperation?.state === 'Succeeded',
    );
  });

  afterAll(async () => {
    await Promise.all([...agents.values()].map((a) => a.agent.stop()));
    rmSync(workDir, { recursive: true, force: true });
  });

  it('works as printed: the server is the API domain, kubectl reaches it through the named proxy', async () => {
    const config = (await printKubeconfig(kubeconfigs.admin)) as {
      clusters: { cluster: { server: string; 'proxy-url'?: string } }[];
    };
    const domain = apiDomainName({ shoot: shootName, project, externalDomain: deployment.outputs.ExternalDomain! });
    expect(config.clusters[0]!.cluster.server).toBe(`https://${domain}:${lbPort}`);
    expect(config.clusters[0]!.cluster['proxy-url']).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // A Create that succeeded means kube-apiserver answers (the agent waits for it), so the first call works.
    const first = await kubectl(kubeconfigs.admin, 'get', 'namespace', 'default', '-o', 'name');
    expect(first, first.stderr).toMatchObject({ code: 0, stdout: 'namespace/default' });
    await kubectlOk('a ConfigMap', kubeconfigs.admin, 'create', 'configmap', 'before', '--from-literal=k=v');
    await kubectlOk('a Secret', kubeconfigs.admin, 'create', 'secret', 'generic', 's1', '--from-literal=password=p');
    await kubectlOk('a ServiceAccount', kubeconfigs.admin, 'create', 'serviceaccount', 'robot');
    robotToken = await kubectlOk('a token', kubeconfigs.admin, 'create', 'token', 'robot', '--duration=1h');
    await kubectlOk(
      'a Deployment',
      kubeconfigs.admin,
      'create',
      'deployment',
      'web',
      '--image=registry.invalid/web:1',
      '--replicas=0',
    );
    // The real kube-controller-manager makes the Deployment's ReplicaSet.
    await kubectlOk('its ReplicaSet', kubeconfigs.admin, 'get', 'replicaset', '-l', 'app=web', '-o', 'name').then(
      (out) => expect(out).toMatch(/^replicaset\.apps\/web-/),
    );
    const event = await kubectlWith({
      kubeconfig: kubeconfigs.admin,
      args: ['create', '-f', '-', '-o', 'name'],
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'before.1', namespace: 'default' },
        involvedObject: { kind: 'ConfigMap', name: 'before', namespace: 'default' },
        reason: 'Tested',
        message: 'written before the migration',
        type: 'Normal',
      }),
    });
    expect(event, event.stderr).toMatchObject({ code: 0 });
    for (const name of ['configmap/before', 'secret/s1', 'deployment.apps/web', 'event/before.1'])
      before.set(
        name,
        await kubectlOk(
          `${name}'s resourceVersion`,
          kubeconfigs.admin,
          'get',
          name,
          '-o',
          'jsonpath={.metadata.resourceVersion}',
        ),
      );
    // The List's version as the API gives it: `kubectl get -o jsonpath` wraps the items in a List without one.
    const list = await kubectlOk(
      'the list',
      kubeconfigs.admin,
      'get',
      '--raw',
      '/api/v1/namespaces/default/configmaps',
    );
    listVersion = (JSON.parse(list) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    expect(listVersion).toMatch(/^\d+$/);
    expect(robotToken.split('.')).toHaveLength(3);
  }, 300_000);

  it('the viewer kubeconfig reads objects but not Secrets', async () => {
    await printKubeconfig(kubeconfigs.viewer, '--viewer');
    expect(await configMapValue('viewer reads a ConfigMap', kubeconfigs.viewer)).toBe('v');
    const secrets = await kubectl(kubeconfigs.viewer, 'get', 'secret', 's1');
    expect(secrets.code).not.toBe(0);
    expect(secrets.stderr).toMatch(/forbidden/i);
  });

  it('keeps working across a migration, unedited: objects, a Secret encrypted at rest, a token issued before', async () => {
    // A watch open through the source's load balancer: the source's etcd ceasing to serve must cut it (its
    // kube-apiserver would otherwise go on serving its watch cache), before the source's control plane is
    // deleted. Mode auto walks this shoot live (both local seeds report live-walk): its member leaving is that.
    const watch = spawn(join(kubeBin, 'kubectl'), [
      '--kubeconfig',
      kubeconfigs.admin,
      'get',
      'configmaps',
      '--watch',
      '-o',
      'name',
    ]);
    let watchEnded = false;
    const watchSeen: string[] = [];
    watch.stdout.on('data', (d: Buffer) => watchSeen.push(d.toString()));
    watch.on('close', () => (watchEnded = true));
    await until('the watch to list the ConfigMap', async () => watchSeen.join('').includes('configmap/before'));

    const started = await api.request('POST', `/projects/${project}/shoots/${shootName}/migrate`, {
      body: { destinationSeed: 'kctl-b', mode: 'auto' },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const m = await until('the migration to settle', async () => {
      const res = await api.request<MigrationRecord>('GET', `/projects/${project}/shoots/${shootName}/migration`);
      return res.body.state !== 'Running' ? res.body : undefined;
    });
    expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
    expect(m.path, m.pathReason).toBe('live');
    expect(watchEnded).toBe(true);
    const source = logs.filter((l) => l.includes('"seed":"kctl-a"'));
    const cut = source.findIndex((l) => l.includes('"event":"lb-route-closed"'));
    const deleted = source.findIndex((l) => l.includes('"type":"delete-control-plane"'));
    expect(cut, "the load balancer cut the shoot when the source's etcd stopped serving").toBeGreaterThanOrEqual(0);
    expect(cut).toBeLessThan(deleted);
    expect((JSON.parse(source[cut]!) as { connections: number }).connections, 'the watch among them').toBeGreaterThan(
      0,
    );
    // The source's control plane is gone: whatever answers now is the destination's.
    expect(agents.get('kctl-a')!.hosting().kubeControlPlane(id)).toBeUndefined();
    // After the switch the source's load balancer passes clients that still resolve it on to the destination's.
    const handOver = await until('the source to take the hand-over', async () =>
      logs.find((l) => l.includes('"seed":"kctl-a"') && l.includes('"event":"hand-over"')),
    );
    expect(JSON.parse(handOver)).toMatchObject({ handedOver: true, target: `https://${LB['kctl-b']}:${lbPort}` });

    expect(await configMapValue('the ConfigMap after', kubeconfigs.admin)).toBe('v');
    expect(
      await kubectlOk('the Secret after', kubeconfigs.admin, 'get', 'secret', 's1', '-o', 'jsonpath={.data.password}'),
    ).toBe(Buffer.from('p').toString('base64'));
    await kubectlOk('a write after', kubeconfigs.admin, 'create', 'configmap', 'after', '--from-literal=k=w');
    // Every object as it was: the same resourceVersion (etcd's revisions moved with the data).
    for (const [name, version] of before)
      expect(
        await kubectl(kubeconfigs.admin, 'get', name, '-o', 'jsonpath={.metadata.resourceVersion}'),
        name,
      ).toMatchObject({
        code: 0,
        stdout: version,
      });
    // A watch resumed from the list version of before the migration: what came after and nothing twice, or,
    // since the destination's kube-apiserver fills its watch cache from the revision it found at its start
    // (as after any restart of kube-apiserver), 410 Expired, on which a client lists again (client-go's
    // reflector does). Never events from before, never a version that does not exist.
    const resumed = await kubectl(
      kubeconfigs.admin,
      'get',
      '--raw',
      `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${listVersion}&timeoutSeconds=2`,
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    const events = resumed.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; object: { code?: number; metadata?: { name?: string } } });
    if (events[0]?.type === 'ERROR')
      expect(events, resumed.stdout).toEqual([{ type: 'ERROR', object: expect.objectContaining({ code: 410 }) }]);
    else expect(events.map((e) => `${e.type} ${e.object.metadata?.name}`)).toEqual(['ADDED after']);

    // The token was signed on the source with the shoot's ServiceAccount key, which moved with it.
    const withToken = join(workDir, 'robot.yaml');
    const admin = parse(readFileSync(kubeconfigs.admin, 'utf8')) as {
      users: { name: string; user: Record<string, string> }[];
    };
    admin.users = admin.users.map((u) => ({ name: u.name, user: { token: robotToken } }));
    writeFileSync(withToken, stringify(admin), { mode: 0o600 });
    expect(
      await kubectlOk(
        'whoami with the token',
        withToken,
        'auth',
        'whoami',
        '-o',
        'jsonpath={.status.userInfo.username}',
      ),
    ).toBe('system:serviceaccount:default:robot');

    const etcd = new Etcd3({ hosts: agents.get('kctl-b')!.hosting().sidecar(id)!.clientUrl, dialTimeout: 2_000 });
    try {
      // At rest in the destination's etcd, the Secret is still encrypted with the shoot's key.
      const raw = await etcd.get('/registry/secrets/default/s1').buffer();
      expect(raw?.subarray(0, 18).toString()).toBe('k8s:enc:aescbc:v1:');
      // kube-apiserver attached the Event to a lease (its TTL); the key still has it, and it is alive.
      const [kv] = (await etcd.get('/registry/events/default/before.1').exec()).kvs;
      expect(kv?.lease).not.toBe('0');
      const { TTL } = await etcd.leaseClient.leaseTimeToLive({ ID: kv!.lease });
      expect(Number(TTL)).toBeGreaterThan(0);
    } finally {
      etcd.close();
    }
  }, 300_000);

  it('walks back live to the seed it left, whose member was removed there: kubectl as before, every object at its version', async () => {
    const started = await api.request('POST', `/projects/${project}/shoots/${shootName}/migrate`, {
      body: { destinationSeed: 'kctl-a', mode: 'auto' },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    const m = await until('the migration back to settle', async () => {
      const res = await api.request<MigrationRecord>('GET', `/projects/${project}/shoots/${shootName}/migration`);
      return res.body.state !== 'Running' && res.body.destination.name === 'kctl-a' ? res.body : undefined;
    });
    expect(m.state, JSON.stringify({ error: m.error, steps: m.steps.map((s) => [s.id, s.state, s.message]) })).toBe(
      'Succeeded',
    );
    expect(m.path, m.pathReason).toBe('live');
    expect(agents.get('kctl-b')!.hosting().kubeControlPlane(id)).toBeUndefined();
    expect(await configMapValue('the ConfigMap back on kctl-a', kubeconfigs.admin)).toBe('v');
    for (const [name, version] of before)
      expect(
        await kubectl(kubeconfigs.admin, 'get', name, '-o', 'jsonpath={.metadata.resourceVersion}'),
        name,
      ).toMatchObject({ code: 0, stdout: version });
    await kubectlOk('a write back on kctl-a', kubeconfigs.admin, 'create', 'configmap', 'back', '--from-literal=k=b');
    expect(
      await kubectlOk('both writes since', kubeconfigs.admin, 'get', 'configmaps', 'after', 'back', '-o', 'name'),
    ).toBe('configmap/after\nconfigmap/back');
  }, 300_000);
});
