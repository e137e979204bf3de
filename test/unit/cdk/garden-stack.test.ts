import { App, Duration, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { GardenStack } from '../../../cdk/garden-stack.js';

const ENV = { account: '123456789012', region: 'eu-west-1' };

/** An app as `cdk synth` builds it, without bundling the functions (the template is what is tested). */
function app(): App {
  const a = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  Validations.of(a).addPlugins(new AwsSolutionsChecks(a, { verbose: true }));
  return a;
}

describe('GardenStack (template)', () => {
  let template: Template;
  let synthesised: App;

  beforeAll(() => {
    synthesised = app();
    const stack = new GardenStack(synthesised, 'Garden', {
      env: ENV,
      internalDomain: 'internal.gardenless.test',
      migrationCommandTimeout: Duration.seconds(42),
    });
    template = Template.fromStack(stack);
  }, 120_000);

  it('passes cdk-nag (AwsSolutions) as synthesised, and fails it on an unacknowledged finding', () => {
    expect(() => synthesised.synth()).not.toThrow();
    const broken = app();
    new s3.Bucket(new Stack(broken, 'Broken', { env: ENV }), 'Open');
    expect(() => broken.synth()).toThrow();
  });

  it('keeps garden state durable and private', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      Replicas: [Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })],
      SSESpecification: { SSEEnabled: true },
    });
    const buckets = template.findResources('AWS::S3::Bucket');
    expect(Object.keys(buckets).length).toBeGreaterThanOrEqual(2);
    for (const bucket of Object.values(buckets)) {
      expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(bucket.Properties.BucketEncryption).toBeDefined();
    }
    const policies = Object.values(template.findResources('AWS::S3::BucketPolicy'));
    expect(policies.length).toBe(Object.keys(buckets).length);
    for (const p of policies) expect(JSON.stringify(p.Properties.PolicyDocument)).toContain('aws:SecureTransport');
  });

  it('authorizes every API route with IAM except health', () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
      (r) => r.Properties as { RouteKey: string; AuthorizationType?: string },
    );
    expect(routes.map((r) => r.RouteKey).sort()).toEqual(['ANY /healthz', 'ANY /{proxy+}']);
    for (const r of routes) expect(r.AuthorizationType).toBe(r.RouteKey === 'ANY /healthz' ? 'NONE' : 'AWS_IAM');
  });

  it('gives every function its own role and a log group with retention', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
    const roles = new Set(functions.map((f) => JSON.stringify(f.Properties.Role)));
    expect(roles.size).toBe(functions.length);
    for (const f of functions) expect(f.Properties.LoggingConfig?.LogGroup).toBeDefined();
    for (const lg of Object.values(template.findResources('AWS::Logs::LogGroup')))
      expect(lg.Properties.RetentionInDays).toBeGreaterThan(0);
    const managed = Object.values(template.findResources('AWS::IAM::Role')).flatMap(
      (r) => (r.Properties.ManagedPolicyArns ?? []) as unknown[],
    );
    expect(managed).toEqual([]);
  });

  it('deploys migrate-shoot from its ASL with the configured command timeout, logged and traced', () => {
    const machines = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
    const migrate = machines.find((m) =>
      JSON.stringify(m.Properties.DefinitionString ?? '').includes('MigrateExtensions'),
    );
    expect(migrate).toBeDefined();
    expect(JSON.stringify(migrate!.Properties.DefinitionString)).toContain('\\"TimeoutSeconds\\":42');
    expect(migrate!.Properties.TracingConfiguration).toEqual({ Enabled: true });
    expect(migrate!.Properties.LoggingConfiguration.Level).toBe('ALL');
  });

  it('schedules the dependency watchdog every minute and the ownership audit', () => {
    const rules = Object.values(template.findResources('AWS::Events::Rule')).map(
      (r) => r.Properties.ScheduleExpression as string | undefined,
    );
    expect(rules).toContain('rate(1 minute)');
    expect(rules.filter(Boolean).length).toBeGreaterThanOrEqual(2);
  });

  it('lets the lease monitor fail migrate-shoot tasks and write only its own items', () => {
    const roles = template.findResources('AWS::IAM::Role', {
      Properties: { Description: Match.stringLikeRegexp('seed lease monitor') },
    });
    expect(Object.keys(roles)).toHaveLength(1);
    const roleId = Object.keys(roles)[0]!;
    const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p.Properties.Roles).includes(roleId),
    );
    const statements = policies.flatMap(
      (p) =>
        p.Properties.PolicyDocument.Statement as {
          Action: string | string[];
          Resource: unknown;
          Condition?: unknown;
        }[],
    );
    const actions = (s: { Action: string | string[] }) => [s.Action].flat();
    const failing = statements.filter((s) => actions(s).some((a) => a.startsWith('states:')));
    expect(failing.map(actions)).toEqual([['states:SendTaskFailure']]);
    expect(JSON.stringify(failing[0]!.Resource)).toMatch(/MigrationStateMachine/);
    const writes = statements.filter((s) => actions(s).some((a) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(a)));
    expect(writes).toHaveLength(1);
    expect(writes[0]!.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['LEASEMONITOR', 'SOURCEWAIT#*'] },
    });
    const rule = Object.values(template.findResources('AWS::Events::Rule')).find((r) =>
      JSON.stringify(r.Properties.Targets).includes('LeaseMonitor'),
    );
    expect(rule?.Properties).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
  });
});
