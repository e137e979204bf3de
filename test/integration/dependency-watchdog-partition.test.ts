import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostedControlPlane, Seed } from '../../core/model/seed.js';
import { backedSeed, fixture } from '../../harness/fixtures/index.js';
import { registerSeedWithAgent, type AgentProcess } from '../../harness/agent-process.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { TEST_OWNERSHIP_TIMINGS } from '../../harness/timings.js';
import { untilWith } from '../../harness/until.js';

/**
 * Issue 10, the dependency watchdog and partitions: a seed agent frozen for 60 s (SIGSTOP of the agent
 * process; its stand-in load balancer stops answering, its heartbeat stops) gets no scale command, neither
 * while frozen (none queued for it) nor after it wakes (its replicas stay as they were).
 */
const garden = testGarden();
const { api, deployment, aws } = garden;
const lambda = new LambdaClient(aws);
const sqs = new SQSClient(aws);
const workDir = mkdtempSync(join(tmpdir(), 'gl-dwd-partition-'));
const SEED = 'dwd-frozen';
const FREEZE_MS = 60_000;
let agent: AgentProcess;
let technicalID: string;

async function seed(): Promise<Seed> {
  return (await api.request<Seed>('GET', `/seeds/${SEED}`)).body;
}
async function reported(): Promise<HostedControlPlane | undefined> {
  return (await seed()).status.controlPlanes?.find((p) => p.technicalID === technicalID);
}
const until = untilWith({
  timeoutMs: 60_000,
  intervalMs: 250,
  explain: reported,
  logTail: join(workDir, SEED, 'agent.log'),
});
const replicas = (cp: HostedControlPlane | undefined) => ({
  kcm: cp?.components?.['kube-controller-manager']?.replicas,
  mcm: cp?.components?.['machine-controller-manager']?.replicas,
  ca: cp?.components?.['cluster-autoscaler']?.replicas,
});

describe('dependency watchdog: a frozen seed agent is never scaled down', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    agent = await registerSeedWithAgent({
      garden: garden.setup,
      seed: SEED,
      body: backedSeed(SEED, 0),
      workDir,
      deployment,
      ownership: TEST_OWNERSHIP_TIMINGS,
    });
    const shoot = fixture('shoot-dev-api1');
    shoot.metadata = { name: 'frozen1' };
    shoot.spec.seedName = SEED;
    delete shoot.spec.tolerations;
    const res = await garden.setup.request<{ status: { technicalID: string } }>('PUT', '/projects/dwd/shoots/frozen1', {
      body: shoot,
    });
    expect(res.status).toBe(201);
    technicalID = res.body.status.technicalID;
    await until(
      'the control plane to serve',
      async () => {
        const cp = await reported();
        return (
          cp?.active && cp.internalProbe === 'Success' && cp.externalUrl !== undefined && replicas(cp).kcm !== undefined
        );
      },
      { timeoutMs: 120_000 },
    );
  }, 240_000);

  afterAll(async () => {
    await agent?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('sends no scale command to a seed whose agent is frozen for 60 s, and the dependents keep their replicas when it wakes', async () => {
    // Prepare
    const before = replicas(await reported());
    expect(before.kcm).toBeGreaterThan(0);
    const queueUrl = (await seed()).status.commandQueueUrl!;

    // Act: freeze the agent; run watchdog rounds (more than the failure threshold) through the deployed Lambda.
    agent.freeze();
    const frozenAt = Date.now();
    const rounds: { commands: number; shootsOnSilentSeeds: string[] }[] = [];
    while (Date.now() - frozenAt < FREEZE_MS) {
      const res = await lambda.send(
        new InvokeCommand({
          FunctionName: deployment.outputs.WatchdogFunctionName,
          Payload: Buffer.from(JSON.stringify({ rounds: 1 })),
        }),
      );
      const body = JSON.parse(Buffer.from(res.Payload ?? new Uint8Array()).toString()) as {
        commands: number;
        shootsOnSilentSeeds: string[];
      };
      expect(res.FunctionError, JSON.stringify(body)).toBeUndefined();
      rounds.push(body);
      await new Promise((r) => setTimeout(r, 4_000));
    }
    const queued = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    agent.thaw();

    // Assess: no round sent anything; the rounds after the lease expired (6 s) said why they skipped it.
    expect(rounds.length).toBeGreaterThanOrEqual(6);
    expect(rounds.map((r) => r.commands)).toEqual(rounds.map(() => 0));
    expect(rounds.slice(2).every((r) => r.shootsOnSilentSeeds.includes('dwd/frozen1'))).toBe(true);
    expect(
      Number(queued.Attributes?.ApproximateNumberOfMessages ?? 0) +
        Number(queued.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
    ).toBe(0);
    const woke = Date.now();
    await until(
      'a heartbeat after waking',
      async () => Date.parse((await seed()).status.lastHeartbeatTime ?? '') > woke,
    );
    await new Promise((r) => setTimeout(r, 5_000));
    expect(replicas(await reported())).toEqual(before);
  }, 180_000);
});
