import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { CreateStateMachineCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { Route53Client } from '@aws-sdk/client-route-53';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import {
  COMMAND_API_VERSION,
  parseCommandSuccess,
  parseFailureCause,
  type SeedCommand,
} from '../../core/commands/index.js';
import { MemoryExtensionWorld } from '../../core/extensions/index.js';
import { fixture } from '../../harness/fixtures/index.js';
import { FakeSidecar } from '../../harness/fake-sidecar.js';
import { testGarden } from '../harness/garden.js';
import { TestAgent } from '../../harness/test-agent.js';
import { until } from '../../harness/until.js';
import { executionEnd, s3Client, unique, type ExecutionResult } from './support/aws.js';

const garden = testGarden();
const { deployment, api, aws } = garden;
const sfn = new SFNClient(aws);
const s3 = s3Client();
const ownerRecords = new Route53OwnerRecords({
  hostedZoneId: deployment.outputs.HostedZoneId,
  api: route53Api(new Route53Client(aws)),
});

/** A command as the state machine sends it: the task token is added on the way. */
type Unsent = SeedCommand extends infer C ? (C extends SeedCommand ? Omit<C, 'taskToken'> : never) : never;

/**
 * Sends one command to a seed queue through a tiny state machine, as the migration does
 * (`sqs:sendMessage.waitForTaskToken`, the token put into the body), and waits for the execution's end.
 * The command is literal in the definition; each execution gets its own token and deduplication id.
 */
async function sendAndWait(
  queueUrl: string,
  command: Unsent,
  options: { timeoutSeconds?: number; heartbeatSeconds?: number; executions?: number } = {},
): Promise<ExecutionResult[]> {
  const definition = {
    StartAt: 'Send',
    States: {
      Send: {
        Type: 'Task',
        Resource: 'arn:aws:states:::sqs:sendMessage.waitForTaskToken',
        TimeoutSeconds: options.timeoutSeconds ?? 30,
        ...(options.heartbeatSeconds === undefined ? {} : { HeartbeatSeconds: options.heartbeatSeconds }),
        Parameters: {
          QueueUrl: queueUrl,
          MessageGroupId: command.shoot.technicalID,
          'MessageDeduplicationId.$': '$$.Execution.Name',
          MessageBody: { ...command, 'taskToken.$': '$$.Task.Token' },
        },
        End: true,
      },
    },
  };
  const machine = await sfn.send(
    new CreateStateMachineCommand({
      name: unique('agent-it'),
      definition: JSON.stringify(definition),
      roleArn: 'arn:aws:iam::000000000000:role/agent-it',
      type: 'STANDARD',
    }),
  );
  const results: ExecutionResult[] = [];
  // One after the other: a repeat must reach the agent after the first delivery.
  for (let i = 0; i < (options.executions ?? 1); i++) results.push(await runToEnd(machine.stateMachineArn!));
  return results;
}

async function runToEnd(stateMachineArn: string): Promise<ExecutionResult> {
  const started = await sfn.send(new StartExecutionCommand({ stateMachineArn, name: unique('x'), input: '{}' }));
  return executionEnd(sfn, started.executionArn!, 60_000);
}

async function registerSeed(label: string): Promise<{ name: string; bucket: string }> {
  const name = unique(label);
  const bucket = `gl-backup-${name}`;
  const seed = fixture('seed-aws-eu1');
  seed.metadata.name = name;
  seed.spec.backup.bucket = bucket;
  const res = await api.request('PUT', `/seeds/${name}`, { body: seed });
  expect(res.status).toBe(201);
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return { name, bucket };
}

const shootRef = (name: string) => ({ project: 'agent', name, technicalID: `shoot--agent--${name}` });
const envelope = (seed: string, shoot: ReturnType<typeof shootRef>, commandId: string) => ({
  apiVersion: COMMAND_API_VERSION as typeof COMMAND_API_VERSION,
  commandId,
  shoot,
  seed,
  issuedAt: new Date().toISOString(),
  migrationId: commandId.split('/')[0]!,
});

describe('test seed agent on the emulator', () => {
  const world = new MemoryExtensionWorld();
  let source: { name: string; bucket: string };
  let destination: { name: string; bucket: string };
  let sourceAgent: TestAgent;
  let destinationAgent: TestAgent;

  beforeAll(async () => {
    source = await registerSeed('agent-src');
    destination = await registerSeed('agent-dst');
    sourceAgent = TestAgent.onDeployment(deployment, { seed: source.name, world, heartbeatIntervalMs: 500 });
    destinationAgent = TestAgent.onDeployment(deployment, {
      seed: destination.name,
      world,
      heartbeatIntervalMs: 500,
      ownerCheck: true,
    });
    await Promise.all([sourceAgent.start(), destinationAgent.start()]);
  });

  afterAll(async () => {
    await Promise.all([sourceAgent?.stop(), destinationAgent?.stop()]);
  });

  it('heartbeats the seed ready, with its command queue and its control planes', async () => {
    // Act
    await sourceAgent.host(shootRef('hosted'));
    await sourceAgent.heartbeat();
    const seed = await api.request<{
      status: {
        conditions: { type: string; status: string }[];
        commandQueueUrl: string;
        identity: string;
        controlPlanes?: { technicalID: string; active: boolean }[];
      };
    }>('GET', `/seeds/${source.name}`);

    // Assess
    expect(
      seed.body.status.conditions
        .filter((c) => c.status === 'True')
        .map((c) => c.type)
        .sort(),
    ).toEqual(['BackupBucketsReady', 'GardenletReady']);
    expect(seed.body.status.commandQueueUrl).toBe(sourceAgent.queueUrl);
    expect(seed.body.status.identity).toBe(sourceAgent.identity);
    expect(seed.body.status.controlPlanes).toContainEqual(
      expect.objectContaining({ technicalID: 'shoot--agent--hosted', active: true }),
    );
  });

  it('answers a migrate with the ShootState, and a retried command with the recorded outcome without running it again', async () => {
    // Prepare
    const shoot = shootRef('migrated');
    await sourceAgent.host(shoot, { backupBucket: source.bucket });
    const command = {
      ...envelope(source.name, shoot, 'mig-a/migrate-extensions'),
      type: 'migrate' as const,
      stateBucket: deployment.outputs.StateBucketName,
    };

    // Act
    const [first, retry] = await sendAndWait(sourceAgent.queueUrl!, command, { executions: 2 });

    // Assess
    expect(first?.status).toBe('SUCCEEDED');
    const answer = parseCommandSuccess('migrate', first?.output);
    expect(answer.commandId).toBe('mig-a/migrate-extensions');
    expect(answer.result.shootState.extensions).toHaveLength(9);
    expect(answer.result.extensions.every((e) => e.action === 'migrate')).toBe(true);
    expect(retry?.status).toBe('SUCCEEDED');
    expect(retry?.output).toEqual(first?.output);
    const deliveries = sourceAgent.received.filter((r) => r.commandId === 'mig-a/migrate-extensions');
    expect(deliveries.map((d) => d.disposition)).toEqual(['run', 'replayed']);
    expect(deliveries.every((d) => d.answer?.kind === 'success' && d.receivedAt instanceof Date)).toBe(true);
  });

  it('restores on the destination from the snapshots a stand-in sidecar wrote, with the ShootState from the source', async () => {
    // Prepare: the sidecar writes its full snapshot; the garden hands ownership to the destination.
    const shoot = shootRef('restored');
    const sourceIdentity = sourceAgent.identity!;
    await sourceAgent.host(shoot, { backupBucket: source.bucket });
    const sidecar = FakeSidecar.onDeployment(deployment, {
      shoot,
      identity: sourceIdentity,
      bucket: source.bucket,
      revision: 500,
      intervalMs: 100,
      claim: true,
    });
    await sidecar.start();
    await until('the sidecar to own', () => sidecar.state === 'owner', { timeoutMs: 15_000, intervalMs: 50 });
    const [migrated] = await sendAndWait(sourceAgent.queueUrl!, {
      ...envelope(source.name, shoot, 'mig-b/migrate-extensions'),
      type: 'migrate',
      stateBucket: deployment.outputs.StateBucketName,
    });
    await ownerRecords.set({ name: sidecar.ownerRecord, value: destinationAgent.identity!, expected: sourceIdentity });
    await until('the final snapshot', () => sidecar.state === 'final', { timeoutMs: 15_000, intervalMs: 50 });
    const shootState = parseCommandSuccess('migrate', migrated?.output).result.shootState;

    // Act: restore straight from the source bucket (the copy is not this test's business).
    const [restored] = await sendAndWait(destinationAgent.queueUrl!, {
      ...envelope(destination.name, shoot, 'mig-b/restore-etcd'),
      type: 'restore',
      hibernated: false,
      etcd: { bucket: source.bucket, expectedLastRevision: 501, final: true },
      extensions: { shootState, shootStateVersion: 1, stateBucket: deployment.outputs.StateBucketName },
    });

    // Assess
    expect(restored?.status).toBe('SUCCEEDED');
    const result = parseCommandSuccess('restore', restored?.output).result;
    expect(result.etcd).toEqual({ restoredRevision: 501, snapshots: 2, final: true });
    expect(result.extensions?.every((e) => e.action === 'restore')).toBe(true);
    expect(sidecar.written.filter((k) => k.endsWith('.final'))).toHaveLength(1);
    expect(
      world
        .externalKeys()
        .filter((k) => k.startsWith(shoot.technicalID))
        .every((k) => world.externalResource(k)?.creations === 1),
    ).toBe(true);
    await sidecar.stop();
  });

  it('declines a restore ahead (this runtime does not restore ahead) without an owner check, so the normal restore does all of it', async () => {
    const shoot = shootRef('ahead');
    const [execution] = await sendAndWait(destinationAgent.queueUrl!, {
      ...envelope(destination.name, shoot, 'mig-f/restore-etcd-ahead'),
      type: 'restore',
      hibernated: false,
      etcd: { bucket: destination.bucket, final: false, ahead: true },
    });

    expect(execution?.status).toBe('SUCCEEDED');
    expect(parseCommandSuccess('restore', execution?.output).result).toEqual({
      etcd: { restoredRevision: 0, snapshots: 0, final: false, ahead: false },
    });
    expect(destinationAgent.received.find((r) => r.commandId === 'mig-f/restore-etcd-ahead')).toMatchObject({
      disposition: 'declined-ahead',
      answer: { kind: 'success' },
    });
  });

  it('answers NotOwner on a restore while the owner record does not name the destination', async () => {
    const shoot = shootRef('not-owned');
    const [execution] = await sendAndWait(destinationAgent.queueUrl!, {
      ...envelope(destination.name, shoot, 'mig-c/restore-etcd'),
      type: 'restore',
      hibernated: true,
      etcd: { bucket: destination.bucket, final: false },
    });

    expect(execution?.status).toBe('FAILED');
    expect(execution?.error).toBe('NotOwner');
    expect(parseFailureCause(execution?.cause)).toMatchObject({
      error: 'NotOwner',
      retryable: true,
      commandId: 'mig-c/restore-etcd',
    });
  });

  it('fails a command with the injected error, and runs it again once the failure is cleared', async () => {
    // Prepare
    const shoot = shootRef('deleted');
    const command = {
      ...envelope(source.name, shoot, 'mig-d/delete-source-control-plane'),
      type: 'delete-control-plane' as const,
      keepBackups: true as const,
      keepExternalResources: true as const,
    };
    sourceAgent.failOn('delete-control-plane', 'RuntimeUnavailable');

    // Act
    const [failed] = await sendAndWait(sourceAgent.queueUrl!, command);
    sourceAgent.clearFailures();
    const [succeeded] = await sendAndWait(sourceAgent.queueUrl!, command);

    // Assess
    expect(failed?.status).toBe('FAILED');
    expect(failed?.error).toBe('RuntimeUnavailable');
    expect(succeeded?.status).toBe('SUCCEEDED');
    expect(parseCommandSuccess('delete-control-plane', succeeded?.output).result).toEqual({
      deleted: false,
      extensionsDropped: 0,
    });
  });

  it('sends task heartbeats while a slow command runs', async () => {
    // Prepare: the answer comes after 4 s; the agent beats every second. (The emulator does not time a task
    // out on HeartbeatSeconds, so the beats are counted rather than inferred from the execution surviving.)
    destinationAgent.delayMs = 4000;
    const shoot = shootRef('scaled');
    await destinationAgent.host(shoot);

    // Act
    const [execution] = await sendAndWait(
      destinationAgent.queueUrl!,
      {
        ...envelope(destination.name, shoot, 'dwd-1/scale'),
        type: 'scale',
        component: 'kube-controller-manager',
        replicas: 0,
        heartbeatSeconds: 1,
      },
      { heartbeatSeconds: 3 },
    ).finally(() => {
      destinationAgent.delayMs = 0;
    });

    // Assess
    expect(execution?.status).toBe('SUCCEEDED');
    expect(parseCommandSuccess('scale', execution?.output).result).toEqual({
      component: 'kube-controller-manager',
      previousReplicas: 1,
      replicas: 0,
    });
    const delivery = destinationAgent.received.find((r) => r.commandId === 'dwd-1/scale');
    expect(delivery?.heartbeats).toBeGreaterThanOrEqual(3);
    expect(delivery?.answerRejected).toBeUndefined();
  });

  it('goes silent after the command named in silenceAfter: later commands time out', async () => {
    // Prepare
    const agent = TestAgent.onDeployment(deployment, { seed: (await registerSeed('agent-silent')).name, world });
    await agent.start();
    agent.silenceAfter('migrate');
    const shoot = shootRef('silent');
    await agent.host(shoot);

    try {
      // Act
      const [migrated] = await sendAndWait(agent.queueUrl!, {
        ...envelope(agent.seed, shoot, 'mig-e/migrate-extensions'),
        type: 'migrate',
        stateBucket: deployment.outputs.StateBucketName,
      });
      const [deleted] = await sendAndWait(
        agent.queueUrl!,
        {
          ...envelope(agent.seed, shoot, 'mig-e/delete-source-control-plane'),
          type: 'delete-control-plane',
          keepBackups: true,
          keepExternalResources: true,
        },
        { timeoutSeconds: 3 },
      );

      // Assess
      expect(migrated?.status).toBe('SUCCEEDED');
      expect(deleted?.status).toBe('FAILED');
      expect(deleted?.error).toBe('States.Timeout');
      expect(agent.received.map((r) => [r.type, r.disposition])).toEqual([
        ['migrate', 'run'],
        ['delete-control-plane', 'ignored'],
      ]);
    } finally {
      await agent.stop();
    }
  });

  it('answers InvalidCommand to a command addressed to another seed', async () => {
    const shoot = shootRef('misrouted');
    const [execution] = await sendAndWait(sourceAgent.queueUrl!, {
      ...envelope('some-other-seed', shoot, 'x/1'),
      type: 'restart',
      pod: 'kube-apiserver-0',
      dependency: 'etcd',
    });

    expect(execution?.status).toBe('FAILED');
    expect(execution?.error).toBe('InvalidCommand');
    expect(sourceAgent.errors).toEqual([]);
  });
});
