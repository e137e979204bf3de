import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { apiDomainName } from '../../core/dns/index.js';
import type { AgentProcess } from '../../harness/agent-process.js';
import { resetGardenState } from '../../harness/garden.js';
import { realKubeBinDir } from '../../harness/kube/binaries.js';
import { untilWith } from '../../harness/until.js';
import { testGarden } from '../harness/garden.js';
import { kubectl, kubectlOk, kubeSeedsWithShoot, migrateShoot, printKubeconfig } from '../harness/kubectl.js';

/**
 * The bad path as a kubectl user meets it. The source seed's agent freezes (SIGSTOP of the agent alone: its
 * load balancer, which runs in the agent, stops with it; the shoot's etcd, sidecar and kube-apiserver run
 * on). A bad-path migration moves the shoot, and the kubeconfig as printed reads what was written before
 * and writes after, unedited. When the agent thaws, its load balancer forwards nothing to the fenced
 * shoot's kube-apiserver: a client that still holds the source's address gets no stale answer from it
 * (docs/design.md section 4), only, while the source hands the shoot over, the destination's.
 */
const garden = testGarden();
const { api, deployment } = garden;
const PROJECT = 'kbad';
const SHOOT = 'web';
const SOURCE = 'kbad-a';
const DESTINATION = 'kbad-b';
type SeedName = typeof SOURCE | typeof DESTINATION;
const LB: Record<SeedName, string> = { [SOURCE]: '127.0.0.7', [DESTINATION]: '127.0.0.8' };
const workDir = mkdtempSync(join(tmpdir(), 'gl-kubectl-bad-'));
const agents = new Map<string, AgentProcess>();
const admin = join(workDir, 'admin.yaml');
let kubeBin = '';
let lbPort = 0;
let passed = false;

const agentLogs = () =>
  [...agents.values()].map((a) => `${a.logFile}:\n${readFileSync(a.logFile, 'utf8').slice(-3_000)}`).join('\n');
const until = untilWith({ intervalMs: 500, timeoutMs: 180_000, explain: agentLogs });
const ok = (what: string, kubeconfig: string, ...args: string[]) =>
  kubectlOk({ kubeBin, until, what, kubeconfig, context: agentLogs }, ...args);

describe('kubectl across a bad-path migration away from a frozen seed', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    kubeBin = await realKubeBinDir();
    ({ lbPort } = await kubeSeedsWithShoot({
      garden,
      workDir,
      seeds: LB,
      networkIndex: 92,
      agents,
      shoot: { project: PROJECT, name: SHOOT },
      until,
    }));
  }, 300_000);

  afterAll(async () => {
    await Promise.all([...agents.values()].map((a) => a.stop()));
    if (passed) rmSync(workDir, { recursive: true, force: true });
    else console.log(`kubectl bad path: agent logs kept in ${workDir}`);
  });

  it('reads and writes with the same kubeconfig after the move; the thawed source answers nothing stale', async () => {
    // Prepare: a ConfigMap written through the source; a kubeconfig that goes straight to the source's load
    // balancer (as a client whose resolver still answers the source's address would).
    await printKubeconfig(deployment, `${PROJECT}/${SHOOT}`, admin);
    await ok('a ConfigMap', admin, 'create', 'configmap', 'before', '--from-literal=k=v');
    const version = await ok(
      'its version',
      admin,
      'get',
      'configmap',
      'before',
      '-o',
      'jsonpath={.metadata.resourceVersion}',
    );
    const direct = join(workDir, 'direct-to-source.yaml');
    const config = parse(readFileSync(admin, 'utf8')) as { clusters: { cluster: Record<string, string> }[] };
    const cluster = config.clusters[0]!.cluster;
    delete cluster['proxy-url'];
    cluster['tls-server-name'] = apiDomainName({
      shoot: SHOOT,
      project: PROJECT,
      externalDomain: deployment.outputs.ExternalDomain!,
    });
    cluster.server = `https://${LB[SOURCE]}:${lbPort}`;
    writeFileSync(direct, stringify(config), { mode: 0o600 });
    expect(await ok('the source, directly', direct, 'get', 'configmap', 'before', '-o', 'name')).toBe(
      'configmap/before',
    );

    // Act: the source's agent freezes; a bad-path migration moves the shoot; then the agent thaws.
    expect(agents.get(SOURCE)!.freeze().length).toBeGreaterThan(0);
    const m = await migrateShoot({
      api,
      project: PROJECT,
      shoot: SHOOT,
      destinationSeed: DESTINATION,
      mode: 'bad',
      until,
    });
    expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
    expect(m.path).toBe('bad');
    const afterMove = await ok('the ConfigMap after', admin, 'get', 'configmap', 'before', '-o', 'jsonpath={.data.k}');
    agents.get(SOURCE)!.thaw();

    // Assess: the same object at the same version, a write after, and nothing from the source's address.
    expect(afterMove).toBe('v');
    expect(
      await kubectl(kubeBin, {
        kubeconfig: admin,
        args: ['get', 'configmap', 'before', '-o', 'jsonpath={.metadata.resourceVersion}'],
      }),
    ).toMatchObject({ code: 0, stdout: version });
    await ok('a write after', admin, 'create', 'configmap', 'after', '--from-literal=k=w');
    // A client that still holds the source's address gets no answer from the source's own kube-apiserver
    // (fenced: its watch cache knows nothing of the write after the move); while the thawed source's load
    // balancer hands the shoot over, it gets the destination's answer.
    for (let i = 0; i < 5; i++) {
      const viaSource = await kubectl(kubeBin, { kubeconfig: direct, args: ['get', 'configmaps', '-o', 'name'] });
      if (viaSource.code === 0)
        expect(viaSource.stdout.split('\n'), 'the thawed source answered from its own kube-apiserver').toContain(
          'configmap/after',
        );
      await new Promise((r) => setTimeout(r, 1_000));
    }
    passed = true;
  }, 600_000);
});
