import { GetQueueAttributesCommand, ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../../harness/fixtures/index.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { emulatorCredentials } from '../../local/aws-env.js';

const garden = testGarden();
const { api, deployment } = garden;
const sqs = new SQSClient({
  endpoint: deployment.awsEndpoint,
  region: deployment.region,
  credentials: emulatorCredentials(),
});

describe('seed command queues on the deployed stack', () => {
  beforeAll(() => resetGardenState(garden));

  it('creates a queue with a dead-letter queue when a seed registers, and removes both with the seed', async () => {
    // Act
    const seed = fixture('seed-aws-eu1');
    seed.metadata.name = 'queued';
    const created = await api.request<{ status: { commandQueueUrl: string } }>('PUT', '/seeds/queued', { body: seed });

    // Assess
    expect(created.status).toBe(201);
    const url = created.body.status.commandQueueUrl;
    expect(url).toMatch(/gl-seed-queued\.fifo$/);
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['RedrivePolicy'] }),
    );
    const redrive = JSON.parse(attributes.Attributes?.RedrivePolicy ?? '{}') as {
      deadLetterTargetArn?: string;
      maxReceiveCount?: number;
    };
    expect(redrive.deadLetterTargetArn).toMatch(/gl-seed-queued-dlq\.fifo$/);
    expect(Number(redrive.maxReceiveCount)).toBe(5);

    const hb = await api.request<{ commandQueueUrl: string }>('POST', '/seeds/queued/heartbeat', {
      body: { conditions: [] },
    });
    expect(hb.body.commandQueueUrl).toBe(url);

    expect((await api.request('DELETE', '/seeds/queued')).status).toBe(200);
    const left = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: 'gl-seed-queued' }));
    expect(left.QueueUrls ?? []).toEqual([]);
  });
});
