import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Duration, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as route53 from 'aws-cdk-lib/aws-route53';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { OwnershipAudit } from '../../../cdk/ownership-audit.js';
import { SnapshotCopy } from '../../../cdk/snapshot-copy.js';

const ASL = readFileSync(
  join(import.meta.dirname, '..', '..', '..', 'state-machines', 'copy-snapshots.asl.json'),
  'utf8',
);

interface PolicyDocument {
  Statement: { Action: string | string[]; Resource: unknown }[];
}

describe('SnapshotCopy and OwnershipAudit constructs (template)', () => {
  let template: Template;
  let stack: Stack;

  beforeAll(() => {
    // Prepare: the constructs in a stack of their own, with cdk-nag as the app runs it.
    const app = new App();
    stack = new Stack(app, 'Test', { env: { account: '123456789012', region: 'eu-west-1' } });
    const table = new dynamodb.TableV2(stack, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
    });
    const zone = new route53.PublicHostedZone(stack, 'Zone', { zoneName: 'internal.gardenless.test' });
    const bus = new events.EventBus(stack, 'Bus');
    new SnapshotCopy(stack, 'SnapshotCopy', {
      logRetention: logs.RetentionDays.ONE_WEEK,
      backupBucketPrefix: 'gl-backup-',
    });
    const apiDomain = {
      zone: new route53.PublicHostedZone(stack, 'ExternalZone', { zoneName: 'shoots.gardenless.test' }),
      externalDomain: 'shoots.gardenless.test',
      ttl: Duration.seconds(60),
    };
    new OwnershipAudit(stack, 'Ownership', {
      logRetention: logs.RetentionDays.ONE_WEEK,
      table,
      zone,
      bus,
      internalDomain: 'internal.gardenless.test',
      apiDomain,
      auditInterval: Duration.minutes(5),
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
    template = Template.fromStack(stack);
  }, 120_000);

  it('loads the ASL file as it is (an asset, no definition rebuilt in CDK), with the six task functions substituted', () => {
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: 'STANDARD',
      DefinitionS3Location: Match.objectLike({ Key: Match.stringLikeRegexp('\\.json$') }),
      DefinitionString: Match.absent(),
      DefinitionSubstitutions: {
        ValidateFunctionArn: Match.anyValue(),
        FindFinalFunctionArn: Match.anyValue(),
        PlanFunctionArn: Match.anyValue(),
        CopyBatchFunctionArn: Match.anyValue(),
        VerifyFunctionArn: Match.anyValue(),
        SummariseFunctionArn: Match.anyValue(),
      },
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: Match.objectLike({ Level: 'ALL', IncludeExecutionData: true }),
    });
  });

  it('stages the ASL file byte for byte', () => {
    const { directory } = App.of(stack)!.synth();
    const sm = Object.values(template.findResources('AWS::StepFunctions::StateMachine'))[0] as {
      Properties: { DefinitionS3Location: { Key: string } };
    };
    expect(readFileSync(join(directory, `asset.${sm.Properties.DefinitionS3Location.Key}`), 'utf8')).toBe(ASL);
  });

  it('runs the audit every 5 minutes', () => {
    const [audit, ...others] = Object.keys(
      template.findResources('AWS::Lambda::Function', {
        Properties: { Description: Match.stringLikeRegexp('^ownership audit:') },
      }),
    );
    expect(audit, 'the audit function').toBeDefined();
    expect(others).toEqual([]);
    const scheduled = Object.values(template.findResources('AWS::Events::Rule')).filter(
      (r) => r.Properties.ScheduleExpression !== undefined,
    );
    expect(scheduled.map((r) => r.Properties)).toEqual([
      expect.objectContaining({
        ScheduleExpression: 'rate(5 minutes)',
        State: 'ENABLED',
        Targets: [expect.objectContaining({ Arn: { 'Fn::GetAtt': [audit, 'Arn'] } })],
      }),
    ]);
  });

  it('gives each copy function only the S3 actions it calls, on gl-backup-* buckets only', () => {
    const policies = template.findResources('AWS::IAM::Policy');
    const byFunction = (name: string) =>
      Object.entries(policies)
        .filter(([id]) => id.startsWith(`SnapshotCopy${name}Role`))
        .flatMap(
          ([, p]) => (p as { Properties: { PolicyDocument: PolicyDocument } }).Properties.PolicyDocument.Statement,
        );
    const s3Statements = (name: string) =>
      byFunction(name).filter((s) => [s.Action].flat().some((a) => a.startsWith('s3:')));

    expect(s3Statements('Summarise')).toEqual([]);
    for (const name of ['Validate', 'FindFinal', 'Plan', 'Verify']) {
      expect(s3Statements(name).flatMap((s) => [s.Action].flat())).toEqual(['s3:ListBucket']);
    }
    const copy = s3Statements('CopyBatch');
    expect(copy.flatMap((s) => [s.Action].flat()).sort()).toEqual([
      's3:AbortMultipartUpload',
      's3:GetObject',
      's3:ListBucket',
      's3:PutObject',
    ]);
    for (const s of [...copy, ...s3Statements('Plan')])
      expect(JSON.stringify(s.Resource)).toMatch(/:s3:::gl-backup-\*/);
    // Nothing anywhere with a managed "FullAccess" policy or an s3:* action.
    expect(JSON.stringify(policies)).not.toMatch(/"s3:\*"|FullAccess/);
  });

  it('lets the audit and the check list records of the garden zone, and the audit those of the external zone, only', () => {
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
      (p) => (p as { Properties: { PolicyDocument: PolicyDocument } }).Properties.PolicyDocument.Statement,
    );
    const route53 = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('route53:')));
    expect(route53).toHaveLength(3);
    for (const s of route53) {
      expect(s.Action).toBe('route53:ListResourceRecordSets');
      expect(JSON.stringify(s.Resource)).toContain('hostedzone/');
    }
    expect(route53.filter((s) => JSON.stringify(s.Resource).includes('ExternalZone'))).toHaveLength(1);
  });

  it('passes cdk-nag (AwsSolutions) with every finding acknowledged', () => {
    const errors = [...stack.node.findAll()].flatMap((c) => c.node.metadata.filter((m) => m.type === 'aws:cdk:error'));
    expect(errors).toEqual([]);
  });
});
