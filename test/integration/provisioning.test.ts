import { Route53Client } from '@aws-sdk/client-route-53';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { fixture } from '../../harness/fixtures/index.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';

const garden = testGarden();
const { api, deployment, aws } = garden;
const sqs = new SQSClient(aws);
const owners = new Route53OwnerRecords({
  hostedZoneId: deployment.outputs.HostedZoneId,
  api: route53Api(new Route53Client(aws)),
});

describe('provisioning on the deployed stack (event-driven)', () => {
  beforeAll(() => resetGardenState(garden));

  it('sets the owner record and sends create-control-plane when a shoot is placed on a seed', async () => {
    // Prepare
    const seed = fixture('seed-aws-eu1');
    seed.metadata = { name: 'prov-seed' };
    const created = await api.request<{ status: { commandQueueUrl: string; identity: string } }>(
      'PUT',
      '/seeds/prov-seed',
      { body: seed },
    );
    expect(created.status).toBe(201);
    const shoot = fixture('shoot-dev-api1');
    shoot.metadata = { name: 'prov1' };
    shoot.spec.seedName = 'prov-seed';

    // Act: the API publishes ShootCreated; an EventBridge rule invokes the provisioning function.
    expect((await api.request('PUT', '/projects/dev/shoots/prov1', { body: shoot })).status).toBe(201);

    // Assess
    const deadline = Date.now() + 30_000;
    type Command = { type?: string; shoot?: { technicalID: string }; controlPlane?: { backup: { bucket: string } } };
    let command: Command | undefined;
    while (!command && Date.now() < deadline) {
      const res = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: created.body.status.commandQueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        }),
      );
      for (const m of res.Messages ?? []) {
        await sqs.send(
          new DeleteMessageCommand({ QueueUrl: created.body.status.commandQueueUrl, ReceiptHandle: m.ReceiptHandle }),
        );
        const body = JSON.parse(m.Body ?? '{}') as Command;
        if (body.type === 'create-control-plane') command = body;
      }
    }
    expect(command).toMatchObject({
      type: 'create-control-plane',
      shoot: { technicalID: 'shoot--dev--prov1' },
      controlPlane: { backup: { bucket: 'gl-backup-aws-eu1' } },
    });
    const record = await owners.get(`owner.prov1.dev.${deployment.outputs.InternalDomain}`);
    expect(record?.value).toBe(created.body.status.identity);
  });
});
