import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { SeedAgentRole } from '../../../cdk/actors.js';
import { GardenStack } from '../../../cdk/garden-stack.js';
import { routes } from '../../../functions/api/routes.js';

const ENV = { account: '123456789012', region: 'eu-west-1' };
type Statement = { Sid?: string; Effect: string; Action: string | string[]; Resource: unknown };

/** A resource as a flat string: joins of literals and references, references as <LogicalId>. */
function flat(resource: unknown): string {
  if (typeof resource === 'string') return resource;
  const r = resource as Record<string, unknown>;
  if (r['Fn::Join']) return (r['Fn::Join'] as [string, unknown[]])[1].map(flat).join('');
  if (r.Ref) return `<${String(r.Ref)}>`;
  if (r['Fn::GetAtt']) return `<${(r['Fn::GetAtt'] as string[]).join('.')}>`;
  return JSON.stringify(resource);
}
const list = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);

describe('actors and their rights (docs/design.md section 12), on the template', () => {
  let template: Template;
  let stack: GardenStack;

  beforeAll(() => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    stack = new GardenStack(app, 'Garden', { env: ENV, internalDomain: 'internal.gardenless.test' });
    template = Template.fromStack(stack);
  }, 120_000);

  const policyOf = (logicalIdPart: string): Statement[] => {
    const policies = {
      ...template.findResources('AWS::IAM::Policy'),
      ...template.findResources('AWS::IAM::ManagedPolicy'),
    };
    const found = Object.entries(policies).filter(([id]) => id.includes(logicalIdPart));
    expect(found.length, `a policy named like ${logicalIdPart}`).toBeGreaterThan(0);
    return found.flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  };
  const invokes = (statements: Statement[]) =>
    statements
      .filter((s) => list(s.Action).includes('execute-api:Invoke'))
      .flatMap((s) => list(s.Resource).map(flat))
      .map((r) => r.replace(/^.*:<HttpApi[0-9A-F]+>\//, ''))
      .sort();

  it('outputs the operator and viewer roles, the seed agent policy and the agent role prefix', () => {
    const outputs = Object.keys(template.findOutputs('*'));
    expect(outputs).toEqual(
      expect.arrayContaining([
        'OperatorRoleArn',
        'ViewerRoleArn',
        'SeedAgentPolicyArn',
        'SeedAgentRolePrefix',
        'AlarmTopicArn',
      ]),
    );
    template.hasResourceProperties('AWS::IAM::Role', { RoleName: 'Garden-operator' });
    template.hasResourceProperties('AWS::IAM::Role', { RoleName: 'Garden-viewer' });
  });

  it('lets the operator invoke every route', () => {
    expect(invokes(policyOf('ActorsOperator'))).toEqual(['*/*/*']);
  });

  it('lets the viewer invoke exactly the read routes of the route table (and the viewer kubeconfig)', () => {
    const expected = routes
      .filter((r) => r.access?.viewer)
      .map((r) => `*/${r.method}${r.path.replace(/\{[a-zA-Z]+\}/g, '*')}`)
      .sort();
    const granted = invokes(policyOf('ActorsViewer'));
    expect(granted).toEqual(expected);
    // Reads, the scheduler's dry run, and Gardener's viewer kubeconfig (read-only in the shoot).
    expect(
      granted.every((r) =>
        /^\*\/(GET|POST\/scheduling\/dry-run|POST\/projects\/\*\/shoots\/\*\/viewerkubeconfig$)/.test(r),
      ),
    ).toBe(true);
  });

  it("lets a seed agent invoke only its own seed's heartbeat and read routes and read shoots, by its seed tag", () => {
    expect(invokes(policyOf('ActorsSeedAgent'))).toEqual([
      '*/GET/projects/*/shoots/*',
      '*/GET/projects/*/shoots/*/controlplane',
      '*/GET/seeds/${aws:PrincipalTag/gardenless-seed}',
      '*/POST/seeds/${aws:PrincipalTag/gardenless-seed}/heartbeat',
    ]);
  });

  it('gives a seed agent its own queue and bucket, task answers, owner records read-only and the secrets sealed for its seed: nothing else', () => {
    const statements = policyOf('ActorsSeedAgent').filter((s) => s.Sid !== 'OwnSeedRoutes');
    const rights = Object.fromEntries(
      statements.map((s) => [s.Sid, { actions: list(s.Action).sort(), resources: list(s.Resource).map(flat) }]),
    );
    expect(rights).toEqual({
      OwnCommandQueue: {
        actions: [
          'sqs:ChangeMessageVisibility',
          'sqs:DeleteMessage',
          'sqs:GetQueueAttributes',
          'sqs:GetQueueUrl',
          'sqs:ReceiveMessage',
        ],
        resources: ['arn:<AWS::Partition>:sqs:eu-west-1:123456789012:gl-seed-${aws:PrincipalTag/gardenless-seed}.fifo'],
      },
      OwnBackupBucket: {
        actions: ['s3:GetBucketLocation', 's3:ListBucket'],
        resources: ['arn:<AWS::Partition>:s3:::gl-backup-${aws:PrincipalTag/gardenless-seed}'],
      },
      OwnBackupObjects: {
        actions: ['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:PutObject'],
        resources: ['arn:<AWS::Partition>:s3:::gl-backup-${aws:PrincipalTag/gardenless-seed}/*'],
      },
      TaskAnswers: {
        actions: ['states:SendTaskFailure', 'states:SendTaskHeartbeat', 'states:SendTaskSuccess'],
        resources: [
          expect.stringMatching(/^<MigrationStateMachine[0-9A-F]+>$/),
          expect.stringMatching(/^<ShootLifecycleStateMachine[0-9A-F]+>$/),
        ],
      },
      OwnShootSecrets: {
        actions: ['kms:Decrypt'],
        resources: [expect.stringMatching(/^<ShootSecretsKey[0-9A-F]+\.Arn>$/)],
      },
      OwnerRecordsReadOnly: {
        actions: ['route53:GetHostedZone', 'route53:ListResourceRecordSets'],
        resources: [expect.stringContaining('hostedzone/')],
      },
    });
    // Only copies sealed under the caller's own seed name (the encryption context) unwrap.
    const secrets = statements.find((s) => s.Sid === 'OwnShootSecrets') as unknown as { Condition: unknown };
    expect(secrets.Condition).toEqual({
      StringEquals: { 'kms:EncryptionContext:gardenless:seed': '${aws:PrincipalTag/gardenless-seed}' },
    });
    const actions = statements.flatMap((s) => list(s.Action));
    expect(
      actions.filter((a) => a.includes('*') || /^route53:Change|^sqs:SendMessage|^states:Start|^dynamodb:/.test(a)),
    ).toEqual([]);
  });

  it("builds a seed's agent role named and tagged as the handler and the policy expect", () => {
    const s = new Stack(new App(), 'Seed', { env: ENV });
    const policy = iam.ManagedPolicy.fromManagedPolicyArn(s, 'P', 'arn:aws:iam::123456789012:policy/Garden-seed-agent');
    new SeedAgentRole(s, 'Agent', {
      seedName: 'aws-eu1',
      agentRolePrefix: 'gl-seed-',
      policy,
      assumedBy: new iam.ServicePrincipal('pods.eks.amazonaws.com'),
    });
    Template.fromStack(s).hasResourceProperties('AWS::IAM::Role', {
      RoleName: 'gl-seed-aws-eu1',
      Tags: [{ Key: 'gardenless-seed', Value: 'aws-eu1' }],
      ManagedPolicyArns: ['arn:aws:iam::123456789012:policy/Garden-seed-agent'],
      AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Principal: { Service: 'pods.eks.amazonaws.com' } })] },
    });
    expect(
      () =>
        new SeedAgentRole(s, 'Long', {
          seedName: 'x'.repeat(60),
          agentRolePrefix: 'gl-seed-',
          policy,
          assumedBy: new iam.AccountRootPrincipal(),
        }),
    ).toThrow(/64 characters/);
  });
});

describe('operations you can watch, on the template', () => {
  let template: Template;
  beforeAll(() => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    template = Template.fromStack(
      new GardenStack(app, 'Garden', { env: ENV, internalDomain: 'internal.gardenless.test' }),
    );
  }, 120_000);

  it('traces every function and names the metrics namespace', () => {
    for (const f of Object.values(template.findResources('AWS::Lambda::Function'))) {
      expect(f.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(f.Properties.Environment.Variables.POWERTOOLS_METRICS_NAMESPACE).toBe('gardenless');
    }
  });

  it('gives every EventBridge target a dead-letter queue', () => {
    const rules = Object.values(template.findResources('AWS::Events::Rule'));
    expect(rules.length).toBeGreaterThanOrEqual(4);
    for (const r of rules)
      for (const t of r.Properties.Targets as { DeadLetterConfig?: unknown }[])
        expect(t.DeadLetterConfig).toBeDefined();
  });

  it('subscribes the event-metrics function to every gardenless event (SplitBrainSuspected included)', () => {
    const [metrics, ...others] = Object.keys(
      template.findResources('AWS::Lambda::Function', {
        Properties: { Description: Match.stringLikeRegexp('^event metrics:') },
      }),
    );
    expect(metrics, 'the event-metrics function').toBeDefined();
    expect(others).toEqual([]);
    const [bus] = Object.keys(template.findResources('AWS::Events::EventBus'));
    const subscriptions = Object.values(template.findResources('AWS::Events::Rule')).filter((r) =>
      (r.Properties.Targets as { Arn: unknown }[]).some((t) => flat(t.Arn) === `<${metrics}.Arn>`),
    );
    // One rule on the garden's bus whose pattern names the source and nothing else: no detail type is left out.
    expect(subscriptions.map((r) => [flat(r.Properties.EventBusName), r.Properties.EventPattern])).toEqual([
      [`<${bus}>`, { source: ['gardenless'] }],
    ]);
  });

  it('alarms on a migration in Error, split brain, a lost seed lease, dead letters and API 5xx, to one topic', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map(
      (a) => a.Properties as Record<string, unknown>,
    );
    const byMetric = (name: string) => alarms.filter((a) => a.MetricName === name);
    for (const name of ['MigrationFailed', 'SplitBrainSuspected', 'SeedLeaseLost']) {
      expect(byMetric(name), name).toEqual([
        expect.objectContaining({
          Namespace: 'gardenless',
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        }),
      ]);
    }
    expect(alarms.filter((a) => a.Namespace === 'AWS/ApiGateway' && a.MetricName === '5xx')).toHaveLength(1);
    // One depth alarm per dead-letter queue of the EventBridge targets (the seeds' queues: one metrics-insights alarm below).
    const targetDeadLetters = new Set(
      Object.values(template.findResources('AWS::Events::Rule')).flatMap((r) =>
        (r.Properties.Targets as { DeadLetterConfig?: { Arn: unknown } }[]).map((t) =>
          JSON.stringify(t.DeadLetterConfig?.Arn),
        ),
      ),
    );
    expect(targetDeadLetters.size).toBeGreaterThanOrEqual(5);
    expect(alarms.filter((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible')).toHaveLength(
      targetDeadLetters.size,
    );
    expect(JSON.stringify(alarms)).toContain("WHERE tag.GardenlessQueue = 'seed-dead-letter'");
    for (const a of alarms) expect((a.AlarmActions as unknown[]).length).toBe(1);
  });

  it('has one dashboard', () => {
    expect(Object.keys(template.findResources('AWS::CloudWatch::Dashboard'))).toHaveLength(1);
  });
});
