import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostedControlPlane } from '../../core/model/seed.js';
import { technicalID } from '../../core/model/names.js';
import type { SeedAgent } from '../../seed/agent/agent.js';
import type { LocalHosting } from '../../seed/agent/local-hosting.js';
import { fixture } from '../../harness/fixtures/index.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { untilWith } from '../../harness/until.js';
import { startLocalSeed } from '../../harness/local-seed.js';
import { realKubeBinDir } from '../../harness/kube/binaries.js';

const garden = testGarden();
const { api, deployment, aws } = garden;
const lambda = new LambdaClient(aws);
const workDir = mkdtempSync(join(tmpdir(), 'gl-watchdog-agent-'));
const SEED = 'dwd-agent';
const id = technicalID('dwd', 'real1');

let agent: SeedAgent;
let hosting: () => LocalHosting;

async function reported(): Promise<HostedControlPlane | undefined> {
  const res = await api.request<{ status: { controlPlanes?: HostedControlPlane[] } }>('GET', `/seeds/${SEED}`);
  return res.body.status.controlPlanes?.find((p) => p.technicalID === id);
}

const until = untilWith({ timeoutMs: 30_000, intervalMs: 250, explain: reported });

/** One watchdog round through the deployed Lambda, once the agent has reported after `since`. */
async function round(since: number): Promise<void> {
  await until('a fresh heartbeat', async () => {
    const cp = await reported();
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

const replicas = (cp: HostedControlPlane | undefined) => ({
  kcm: cp?.components?.['kube-controller-manager']?.replicas,
  mcm: cp?.components?.['machine-controller-manager']?.replicas,
  ca: cp?.components?.['cluster-autoscaler']?.replicas,
});

describe('dependency watchdog against a real seed agent', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    ({ agent, hosting } = await startLocalSeed({
      deployment,
      garden: api,
      name: SEED,
      networkIndex: 0,
      workDir,
      // The watchdog acts on real processes: kube-apiserver probed inside and through the load balancer, and a
      // scale-down that stops the real kube-controller-manager.
      kubeBinDir: await realKubeBinDir(),
      // Not 127.0.0.1: the emulator's Lambda runtime rewrites every https request to 127.0.0.1 into plain
      // HTTP to itself (its own gateway), so the watchdog's probe would never reach a load balancer there.
      loadBalancer: { host: '127.0.0.6', port: 0 },
    }));
    // Placing the shoot is all it takes: provisioning sets the owner record and asks the agent for the control plane.
    const shoot = fixture('shoot-dev-api1');
    shoot.metadata = { name: 'real1' };
    shoot.spec.seedName = SEED;
    delete shoot.spec.tolerations;
    expect((await api.request('PUT', '/projects/dwd/shoots/real1', { body: shoot })).status).toBe(201);
    await until(
      'the control plane to serve',
      async () => {
        const cp = await reported();
        return cp?.active && cp.internalProbe === 'Success' && cp.externalUrl !== undefined;
      },
      { timeoutMs: 120_000 },
    );
  }, 180_000);

  afterAll(async () => {
    await agent?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('scales the dependents down when only the load balancer fails, and back to their replicas when it recovers', async () => {
    // Prepare
    const before = replicas(await reported());
    expect(before.kcm).toBeGreaterThan(0);
    const kcm = hosting().componentProcess(id, 'kube-controller-manager')!;
    expect(kcm.running).toBe(true);

    // Act: the external address fails, the API server stays healthy inside the seed.
    await hosting().breakApiServer(id, 'external', true);
    for (let i = 0; i < 3; i++) await round(Date.now());

    // Assess: the agent applied the scale-down and its heartbeat shows it.
    await until('the dependents at 0', async () => {
      const r = replicas(await reported());
      return r.kcm === 0 && r.mcm === 0 && (r.ca === undefined || r.ca === 0);
    });
    // The real kube-controller-manager is stopped; kube-apiserver and kube-scheduler run on.
    expect(kcm.running).toBe(false);
    expect(hosting().componentProcess(id, 'kube-apiserver')!.running).toBe(true);
    expect(hosting().componentProcess(id, 'kube-scheduler')!.running).toBe(true);

    await hosting().breakApiServer(id, 'external', false);
    for (let i = 0; i < 2; i++) await round(Date.now());
    await until('the remembered replicas back', async () => {
      const r = replicas(await reported());
      return r.kcm === before.kcm && r.mcm === before.mcm && r.ca === before.ca;
    });
    await until('kube-controller-manager running again', async () => kcm.running);
  });
});
