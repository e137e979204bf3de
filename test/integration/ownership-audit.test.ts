import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Route53Client } from '@aws-sdk/client-route-53';
import { beforeAll, describe, expect, it } from 'vitest';
import { Route53ApiRecords } from '../../adapters/route53/api-records.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { apiDomainName } from '../../core/dns/index.js';
import { ownerRecordName, type OwnershipAuditReport } from '../../core/ownership/index.js';
import { fixture } from '../../harness/fixtures/index.js';
import { testGarden } from '../harness/garden.js';
import { deployed, unique } from './support/aws.js';

interface Resource {
  metadata: { name: string };
  status: {
    identity?: string;
    seedName?: string;
    technicalID?: string;
    conditions?: { type: string; status: string; reason?: string }[];
  };
}

const garden = testGarden();
const { outputs, awsConfig } = deployed();
const lambda = new LambdaClient(awsConfig);
const sqs = new SQSClient(awsConfig);

async function invoke<T>(functionName: string, payload: unknown): Promise<{ error: string | undefined; body: T }> {
  const res = await lambda.send(
    new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify(payload)) }),
  );
  const body = JSON.parse(Buffer.from(res.Payload ?? new Uint8Array()).toString('utf8') || 'null') as T;
  return { error: res.FunctionError, body };
}

async function seed(name: string): Promise<string> {
  const s = fixture('seed-aws-eu1');
  s.metadata.name = name;
  delete s.spec.capacity;
  const res = await garden.api.request<Resource>('PUT', `/seeds/${name}`, { body: s });
  expect(res.status).toBe(201);
  return res.body.status.identity!;
}

async function heartbeat(
  seedName: string,
  controlPlanes: { technicalID: string; active: boolean; externalUrl?: string }[],
): Promise<void> {
  // A ten-minute lease: the audit counts reports of seeds whose lease holds, and this test's steps are slow on a loaded machine.
  const res = await garden.api.request('POST', `/seeds/${seedName}/heartbeat`, {
    body: { conditions: [], controlPlanes, leaseDurationSeconds: 600 },
  });
  expect(res.status).toBe(200);
}

async function shoot(project: string, name: string, seedName: string): Promise<Resource> {
  const s = fixture('shoot-dev-api1');
  s.metadata = { name, project };
  s.spec.seedName = seedName;
  const res = await garden.api.request<Resource>('PUT', `/projects/${project}/shoots/${name}`, { body: s });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** An EventBridge rule on the garden bus that forwards one shoot's SplitBrainSuspected events into a fresh queue. */
async function splitBrainQueue(technicalID: string): Promise<string> {
  const queue = await sqs.send(new CreateQueueCommand({ QueueName: unique('it-split-brain') }));
  const arn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl, AttributeNames: ['QueueArn'] }))
  ).Attributes!.QueueArn!;
  const events = new EventBridgeClient(awsConfig);
  const rule = unique('it-split-brain');
  await events.send(
    new PutRuleCommand({
      Name: rule,
      EventBusName: outputs.EventBusName,
      EventPattern: JSON.stringify({
        source: ['gardenless'],
        'detail-type': ['SplitBrainSuspected'],
        detail: { technicalID: [technicalID] },
      }),
    }),
  );
  await events.send(
    new PutTargetsCommand({ Rule: rule, EventBusName: outputs.EventBusName, Targets: [{ Id: 'queue', Arn: arn }] }),
  );
  return queue.QueueUrl!;
}

async function receive(queueUrl: string, waitSeconds: number): Promise<Record<string, unknown>[]> {
  const res = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: waitSeconds, MaxNumberOfMessages: 10 }),
  );
  return (res.Messages ?? []).map((m) => JSON.parse(m.Body ?? '{}') as Record<string, unknown>);
}

describe('ownership audit and check on the deployed stack', () => {
  const project = unique('it').replace(/[^a-z0-9-]/g, '');
  const [seedA, seedB] = [unique('audit-a'), unique('audit-b')];
  let identityA: string;
  let identityB: string;
  let records: Route53OwnerRecords;

  beforeAll(async () => {
    identityA = await seed(seedA);
    identityB = await seed(seedB);
    records = new Route53OwnerRecords({
      hostedZoneId: outputs.HostedZoneId,
      api: route53Api(new Route53Client(awsConfig)),
    });
  });

  it('asserts the owner: the result when it matches, OwnershipAssertionFailed when another seed owns it', async () => {
    const name = 'check1';
    await records.set({
      name: ownerRecordName({ shoot: name, project, internalDomain: outputs.InternalDomain }),
      value: identityA,
    });

    const owner = await invoke<{ result: string }>(outputs.OwnershipCheckFunctionName, {
      project,
      shoot: name,
      identity: identityA,
    });
    expect(owner.error).toBeUndefined();
    expect(owner.body.result).toBe('owner');

    const other = await invoke<{ errorType: string; errorMessage: string }>(outputs.OwnershipCheckFunctionName, {
      project,
      shoot: name,
      identity: identityB,
    });
    expect(other.error).toBeDefined();
    expect(other.body.errorType).toBe('OwnershipAssertionFailed');
    expect(other.body.errorMessage).toContain(`names ${identityA}, not ${identityB}`);

    const bad = await invoke<{ errorType: string }>(outputs.OwnershipCheckFunctionName, { project, shoot: name });
    expect(bad.body.errorType).toBe('InvalidInput');
  });

  it('stays quiet while record, placement and heartbeats agree, and reports SplitBrainSuspected once they disagree', async () => {
    // Prepare: a shoot on seed A, its owner record naming A, and A reporting it active.
    const name = unique('s');
    const created = await shoot(project, name, seedA);
    const technicalID = created.status.technicalID!;
    const recordName = ownerRecordName({ shoot: name, project, internalDomain: outputs.InternalDomain });
    await records.set({ name: recordName, value: identityA });
    await heartbeat(seedA, [{ technicalID, active: true }]);
    const queue = await splitBrainQueue(technicalID);

    // Act: a consistent round.
    const quiet = await invoke<OwnershipAuditReport>(outputs.OwnershipAuditFunctionName, {});
    expect(quiet.error, JSON.stringify(quiet.body)).toBeUndefined();
    expect(quiet.body.findings.filter((f) => f.technicalID === technicalID)).toEqual([]);
    expect(await receive(queue, 2)).toEqual([]);
    const unchanged = await garden.api.request<Resource>('GET', `/projects/${project}/shoots/${name}`);
    expect(unchanged.body.status.conditions?.find((c) => c.type === 'OwnershipConsistent')).toBeUndefined();

    // Act: the owner record names seed B while the shoot is placed on A, and B reports it active too.
    await records.set({ name: recordName, value: identityB });
    await heartbeat(seedB, [{ technicalID, active: true }]);
    const loud = await invoke<OwnershipAuditReport>(outputs.OwnershipAuditFunctionName, {});

    // Assess: one event, one condition.
    expect(loud.error, JSON.stringify(loud.body)).toBeUndefined();
    expect(loud.body.findings.find((f) => f.technicalID === technicalID)).toMatchObject({
      reason: 'ActiveOnSeveralSeeds',
      consistent: false,
    });
    const messages = await receive(queue, 5);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      source: 'gardenless',
      'detail-type': 'SplitBrainSuspected',
      detail: { technicalID, reason: 'ActiveOnSeveralSeeds', ownerRecord: identityB },
    });
    const flagged = await garden.api.request<Resource>('GET', `/projects/${project}/shoots/${name}`);
    expect(flagged.body.status.conditions?.find((c) => c.type === 'OwnershipConsistent')).toMatchObject({
      status: 'False',
      reason: 'ActiveOnSeveralSeeds',
    });

    // B stops serving: the record still disagrees with the placement, a new reason, a new event.
    await heartbeat(seedB, [{ technicalID, active: false }]);
    await invoke(outputs.OwnershipAuditFunctionName, {});
    expect(await receive(queue, 5)).toMatchObject([{ detail: { reason: 'OwnerRecordMismatch' } }]);
    // The same disagreement again: no new event.
    await invoke(outputs.OwnershipAuditFunctionName, {});
    expect(await receive(queue, 2)).toEqual([]);

    // Repaired: the condition turns True without an event.
    await records.set({ name: recordName, value: identityA });
    await invoke(outputs.OwnershipAuditFunctionName, {});
    expect(await receive(queue, 2)).toEqual([]);
    const repaired = await garden.api.request<Resource>('GET', `/projects/${project}/shoots/${name}`);
    expect(repaired.body.status.conditions?.find((c) => c.type === 'OwnershipConsistent')).toMatchObject({
      status: 'True',
      reason: 'Consistent',
    });
  });

  it('reports an API record that points at a seed that does not host the shoot, naming that seed', async () => {
    // Prepare: a shoot on seed A serving behind A's load balancer; seed B serves another shoot behind its own.
    const name = unique('r');
    const created = await shoot(project, name, seedA);
    const technicalID = created.status.technicalID!;
    const apiRecords = new Route53ApiRecords({
      hostedZoneId: outputs.ApiHostedZoneId!,
      api: route53Api(new Route53Client(awsConfig)),
    });
    const record = apiDomainName({ shoot: name, project, externalDomain: outputs.ExternalDomain! });
    await heartbeat(seedA, [{ technicalID, active: true, externalUrl: 'http://127.0.0.41:30443' }]);
    await heartbeat(seedB, [
      { technicalID: `${technicalID}-other`, active: true, externalUrl: 'http://127.0.0.42:30443' },
    ]);
    const mine = (report: OwnershipAuditReport) => report.apiRecordFindings.filter((f) => f.shoot === name);

    // Act and assess: missing while A serves, quiet once it names A, reported once it names B.
    const missing = await invoke<OwnershipAuditReport>(outputs.OwnershipAuditFunctionName, {});
    expect(missing.error, JSON.stringify(missing.body)).toBeUndefined();
    expect(mine(missing.body)).toMatchObject([{ reason: 'ApiRecordMissing', seedName: seedA }]);
    await apiRecords.set({ name: record, target: { type: 'A', value: '127.0.0.41' }, ttl: 60 });
    expect(mine((await invoke<OwnershipAuditReport>(outputs.OwnershipAuditFunctionName, {})).body)).toEqual([]);
    await apiRecords.set({
      name: record,
      target: { type: 'A', value: '127.0.0.42' },
      expected: { type: 'A', value: '127.0.0.41' },
      ttl: 60,
    });
    const elsewhere = await invoke<OwnershipAuditReport>(outputs.OwnershipAuditFunctionName, {});
    expect(mine(elsewhere.body)).toEqual([
      expect.objectContaining({
        reason: 'ApiRecordPointsElsewhere',
        record,
        target: 'A 127.0.0.42',
        pointsAt: seedB,
        seedName: seedA,
        message: expect.stringContaining(`seed ${seedB}, which does not host the shoot`),
      }),
    ]);
    await apiRecords.delete({ name: record, expected: { type: 'A', value: '127.0.0.42' } });
  });
});
