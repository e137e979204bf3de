import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { MigrationRecord } from '../../core/migration/index.js';
import type { HostedControlPlane } from '../../core/model/seed.js';
import { technicalID } from '../../core/model/names.js';
import type { AgentProcess } from '../../harness/agent-process.js';
import { resetGardenState } from '../../harness/garden.js';
import { realKubeBinDir } from '../../harness/kube/binaries.js';
import { untilWith } from '../../harness/until.js';
import { testGarden } from '../harness/garden.js';
import { kubectl, kubectlOk, kubeSeedsWithShoot, migrateShoot, printKubeconfig } from '../harness/kubectl.js';

/**
 * A `zone` shoot (three etcd members, kube-apiserver in front of all three) as a kubectl user meets it,
 * across both paths with one kubeconfig file as printed: a good-path migration from A to B, then a
 * bad-path migration back to A while B's agent is frozen (its load balancer with it; the members, their
 * sidecars and kube-apiserver run on). After each: every object at the version it had, the Secret readable,
 * a ServiceAccount token issued before the first move still valid, and a write.
 */
const garden = testGarden();
const { api, deployment } = garden;
const PROJECT = 'kzone';
const SHOOT = 'web';
const id = technicalID(PROJECT, SHOOT);
const A = 'kzone-a';
const B = 'kzone-b';
type SeedName = typeof A | typeof B;
const LB: Record<SeedName, string> = { [A]: '127.0.0.9', [B]: '127.0.0.10' };
const workDir = mkdtempSync(join(tmpdir(), 'gl-kubectl-zone-'));
const agents = new Map<string, AgentProcess>();
const admin = join(workDir, 'admin.yaml');
const robot = join(workDir, 'robot.yaml');
let kubeBin = '';
let passed = false;
/** resourceVersions before the first migration, by `kind/name`. */
const before = new Map<string, string>();

const agentLogs = () =>
  [...agents.values()].map((a) => `${a.logFile}:\n${readFileSync(a.logFile, 'utf8').slice(-3_000)}`).join('\n');
const until = untilWith({ intervalMs: 500, timeoutMs: 180_000, explain: agentLogs });
const ok = (what: string, kubeconfig: string, ...args: string[]) =>
  kubectlOk({ kubeBin, until, what, kubeconfig, context: agentLogs }, ...args);

async function migrate(destinationSeed: SeedName, mode: 'auto' | 'bad'): Promise<MigrationRecord> {
  const m = await migrateShoot({ api, project: PROJECT, shoot: SHOOT, destinationSeed, mode, until });
  expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
  return m;
}

/** The shoot's control plane as `seed` reports it: three members, one leader. */
async function reportedOn(seed: SeedName): Promise<HostedControlPlane | undefined> {
  const res = await api.request<{ status: { controlPlanes?: HostedControlPlane[] } }>('GET', `/seeds/${seed}`);
  return res.body.status.controlPlanes?.find((p) => p.technicalID === id);
}

/** What the shoot held before the first move is there as it was, and it takes a write named `write`. */
async function assertKept(write: string): Promise<void> {
  for (const [name, version] of before)
    expect(
      await kubectl(kubeBin, { kubeconfig: admin, args: ['get', name, '-o', 'jsonpath={.metadata.resourceVersion}'] }),
      name,
    ).toMatchObject({ code: 0, stdout: version });
  expect(await ok('the Secret', admin, 'get', 'secret', 's1', '-o', 'jsonpath={.data.password}')).toBe(
    Buffer.from('p').toString('base64'),
  );
  expect(await ok('whoami with the token', robot, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}')).toBe(
    'system:serviceaccount:default:robot',
  );
  await ok(`a write (${write})`, admin, 'create', 'configmap', write, '--from-literal=k=w');
}

describe('kubectl with the printed kubeconfig, a `zone` shoot, across a good-path and a bad-path migration', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    kubeBin = await realKubeBinDir();
    await kubeSeedsWithShoot({
      garden,
      workDir,
      seeds: LB,
      networkIndex: 94,
      agents,
      shoot: {
        project: PROJECT,
        name: SHOOT,
        controlPlane: { highAvailability: { failureTolerance: { type: 'zone' } } },
      },
      until,
    });
  }, 300_000);

  afterAll(async () => {
    await Promise.all([...agents.values()].map((a) => a.stop()));
    if (passed) rmSync(workDir, { recursive: true, force: true });
    else console.log(`kubectl zone: agent logs kept in ${workDir}`);
  });

  it('keeps objects, versions, the Secret and a token on both paths, with the same kubeconfig file', async () => {
    // Prepare: objects, a Secret, a token, through kube-apiserver in front of A's three members.
    expect((await reportedOn(A))?.etcdMembers).toHaveLength(3);
    await printKubeconfig(deployment, `${PROJECT}/${SHOOT}`, admin);
    await ok('a ConfigMap', admin, 'create', 'configmap', 'before', '--from-literal=k=v');
    await ok('a Secret', admin, 'create', 'secret', 'generic', 's1', '--from-literal=password=p');
    await ok('a ServiceAccount', admin, 'create', 'serviceaccount', 'robot');
    const token = await ok('a token', admin, 'create', 'token', 'robot', '--duration=1h');
    const config = parse(readFileSync(admin, 'utf8')) as { users: { name: string; user: Record<string, string> }[] };
    config.users = config.users.map((u) => ({ name: u.name, user: { token } }));
    writeFileSync(robot, stringify(config), { mode: 0o600 });
    await ok('a Deployment', admin, 'create', 'deployment', 'web', '--image=registry.invalid/web:1', '--replicas=0');
    await ok('its ReplicaSet', admin, 'get', 'replicaset', '-l', 'app=web', '-o', 'name');
    for (const name of ['configmap/before', 'secret/s1', 'deployment.apps/web'])
      before.set(name, await ok(`${name}'s version`, admin, 'get', name, '-o', 'jsonpath={.metadata.resourceVersion}'));

    // Act and assess: the good path to B.
    expect((await migrate(B, 'auto')).path).toBe('good');
    expect((await reportedOn(B))?.etcdMembers).toHaveLength(3);
    await assertKept('after-good');

    // Act and assess: B's agent freezes, the bad path back to A; B thaws.
    expect(agents.get(B)!.freeze().length).toBeGreaterThan(0);
    expect((await migrate(A, 'bad')).path).toBe('bad');
    await assertKept('after-bad');
    agents.get(B)!.thaw();
    const names = (await ok('the writes after', admin, 'get', 'configmaps', '-o', 'name')).split('\n');
    expect(names).toEqual(expect.arrayContaining(['configmap/after-good', 'configmap/after-bad']));
    passed = true;
  }, 900_000);
});
