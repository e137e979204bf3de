import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixture } from '../../harness/fixtures/index.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { until } from '../../harness/until.js';

const garden = testGarden();
const { api, deployment, aws } = garden;
const lambda = new LambdaClient(aws);
const sqs = new SQSClient(aws);

/** The shoot's kube-apiserver load balancer as the garden reaches it: up (200) or down (503). */
class ExternalEndpoint {
  up = true;
  probes = 0;
  private server?: Server;
  url = '';
  async start(): Promise<void> {
    this.server = createServer((_req, res) => {
      this.probes += 1;
      res.writeHead(this.up ? 200 : 503).end(this.up ? 'ok' : 'load balancer has no healthy target');
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  stop(): Promise<void> {
    return new Promise((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

interface Command {
  type: string;
  commandId: string;
  component?: string;
  replicas?: number;
  pod?: string;
  dependency?: string;
}

const endpoint = new ExternalEndpoint();
let queueUrl = '';

async function heartbeat(cp: Record<string, unknown>) {
  const res = await api.request('POST', '/seeds/dwd-seed/heartbeat', {
    body: {
      conditions: [
        { type: 'GardenletReady', status: 'True' },
        { type: 'BackupBucketsReady', status: 'True' },
      ],
      // The test is the seed's agent: its lease holds while the test drives the rounds.
      leaseDurationSeconds: 600,
      controlPlanes: [
        {
          technicalID: 'shoot--dwd--api1',
          active: true,
          externalUrl: endpoint.url,
          internalProbe: 'Success',
          internalProbeTime: new Date().toISOString(),
          etcdReady: true,
          components: {
            'kube-controller-manager': { replicas: 1 },
            'machine-controller-manager': { replicas: 1 },
            'cluster-autoscaler': { replicas: 2 },
          },
          ...cp,
        },
      ],
    },
  });
  expect(res.status).toBe(200);
}

/** One watchdog round through the deployed Lambda, after a fresh heartbeat. */
async function round(cp: Record<string, unknown> = {}): Promise<void> {
  await heartbeat(cp);
  const res = await lambda.send(
    new InvokeCommand({
      FunctionName: deployment.outputs.WatchdogFunctionName,
      Payload: Buffer.from(JSON.stringify({ rounds: 1 })),
    }),
  );
  expect(res.FunctionError, Buffer.from(res.Payload ?? new Uint8Array()).toString()).toBeUndefined();
}

async function drain(): Promise<Command[]> {
  const commands: Command[] = [];
  for (;;) {
    const res = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (!res.Messages?.length) return commands;
    for (const m of res.Messages) {
      const command = JSON.parse(m.Body ?? '{}') as Command;
      // The seed also gets create-control-plane when the shoot is placed; the watchdog sends only these.
      if (command.type === 'scale' || command.type === 'restart') commands.push(command);
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
    }
  }
}

describe('dependency watchdog on the deployed stack', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    await endpoint.start();
    const seed = fixture('seed-aws-eu1');
    seed.metadata = { name: 'dwd-seed' };
    delete seed.spec.taints;
    const created = await api.request<{ status: { commandQueueUrl: string } }>('PUT', '/seeds/dwd-seed', {
      body: seed,
    });
    queueUrl = created.body.status.commandQueueUrl;
  });
  afterAll(() => endpoint.stop());

  beforeEach(async () => {
    // No agent runs the shoot's deletion here: the shoot and its place go from the table directly.
    await garden.repository.deleteShoot('dwd', 'api1').catch(() => undefined);
    await garden.ddb.send(
      new DeleteCommand({ TableName: garden.tableName, Key: { pk: 'WATCHDOG#dwd/api1', sk: 'WATCHDOG' } }),
    );
    const shoot = fixture('shoot-dev-api1');
    shoot.metadata = { name: 'api1' };
    shoot.spec.seedName = 'dwd-seed';
    expect((await api.request('PUT', '/projects/dwd/shoots/api1', { body: shoot })).status).toBe(201);
    endpoint.up = true;
    await drain();
  });

  it('scales down after the failure threshold in order, and restores the remembered replicas in reverse order', async () => {
    // Act: the load balancer fails while the API server is fine inside the seed.
    endpoint.up = false;
    await round();
    await round();
    expect(await drain()).toEqual([]);
    await round();
    const down = await drain();

    // Assess
    expect(endpoint.probes).toBeGreaterThanOrEqual(3);
    expect(down.map(({ type, component, replicas }) => ({ type, component, replicas }))).toEqual([
      { type: 'scale', component: 'kube-controller-manager', replicas: 0 },
      { type: 'scale', component: 'machine-controller-manager', replicas: 0 },
      { type: 'scale', component: 'cluster-autoscaler', replicas: 0 },
    ]);
    await round();
    expect(await drain()).toEqual([]);

    endpoint.up = true;
    const zero = {
      components: {
        'kube-controller-manager': { replicas: 0 },
        'machine-controller-manager': { replicas: 0 },
        'cluster-autoscaler': { replicas: 0 },
      },
    };
    await round(zero);
    expect(await drain()).toEqual([]);
    await round(zero);
    const up = await drain();
    expect(up.map(({ type, component, replicas }) => ({ type, component, replicas }))).toEqual([
      { type: 'scale', component: 'cluster-autoscaler', replicas: 2 },
      { type: 'scale', component: 'machine-controller-manager', replicas: 1 },
      { type: 'scale', component: 'kube-controller-manager', replicas: 1 },
    ]);
  });

  it('does nothing when both sides are down, or when the shoot is hibernated', async () => {
    endpoint.up = false;
    for (let i = 0; i < 4; i++) await round({ internalProbe: 'Failure' });
    expect(await drain()).toEqual([]);

    expect(
      (await api.request('PATCH', '/projects/dwd/shoots/api1', { body: { spec: { hibernation: { enabled: true } } } }))
        .status,
    ).toBe(200);
    for (let i = 0; i < 4; i++) await round();
    expect(await drain()).toEqual([]);
  });

  it('does not oscillate on a flapping load balancer, and leaves a migrating shoot alone', async () => {
    for (let i = 0; i < 8; i++) {
      endpoint.up = i % 2 === 1;
      await round();
    }
    expect(await drain()).toEqual([]);

    // A migration in progress (as the migration service mirrors it onto the shoot): no probe counts. The
    // mirror is written behind the API's back (same version), so the shoot's Create must have been sent
    // first: its dispatch writes the shoot once more and would overwrite the mirror.
    await until(
      'the Create sent to the seed',
      async () => {
        const res = await api.request<{ status: { lastOperation?: { type: string; progress: number } } }>(
          'GET',
          '/projects/dwd/shoots/api1',
        );
        const op = res.body.status.lastOperation;
        return op?.type === 'Create' && op.progress >= 50;
      },
      { timeoutMs: 60_000 },
    );
    const item = await garden.ddb.send(
      new GetCommand({ TableName: garden.tableName, Key: { pk: 'SHOOT#dwd#api1', sk: 'SHOOT' } }),
    );
    const doc = item.Item!.doc as { status: Record<string, unknown> };
    doc.status.lastOperation = {
      type: 'Migrate',
      state: 'Processing',
      progress: 30,
      description: 'migrating',
      lastUpdateTime: new Date().toISOString(),
    };
    await garden.ddb.send(new PutCommand({ TableName: garden.tableName, Item: { ...item.Item, doc } }));
    endpoint.up = false;
    const probes = endpoint.probes;
    for (let i = 0; i < 4; i++) await round();
    expect(await drain()).toEqual([]);
    expect(endpoint.probes).toBe(probes);
  });

  it('restarts crash-looping pods once when etcd recovers', async () => {
    const pods = [
      {
        name: 'kube-apiserver-0',
        labels: { 'gardener.cloud/role': 'controlplane', role: 'apiserver' },
        state: 'CrashLoopBackOff',
      },
      {
        name: 'kube-apiserver-1',
        labels: { 'gardener.cloud/role': 'controlplane', role: 'apiserver' },
        state: 'Running',
      },
    ];
    await round({ etcdReady: true, pods });
    await round({ etcdReady: false, pods });
    await round({ etcdReady: true, pods });
    await round({ etcdReady: true, pods });
    const restarts = await drain();
    expect(restarts.map(({ type, pod, dependency }) => ({ type, pod, dependency }))).toEqual([
      { type: 'restart', pod: 'kube-apiserver-0', dependency: 'etcd' },
    ]);
  });
});
