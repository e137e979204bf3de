import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { beforeAll, describe, expect, it } from 'vitest';
import { Evacuation } from '../../../cdk/evacuation.js';

function template(props: { maxSeeds?: number; scheduleEnabled?: boolean } = {}): Template {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'T', { env: { account: '123456789012', region: 'eu-west-1' } });
  const table = new dynamodb.TableV2(stack, 'Table', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
  });
  const bus = new events.EventBus(stack, 'Bus');
  const migration = new sfn.StateMachine(stack, 'Migrate', {
    stateMachineName: 'T-migrate-shoot',
    definitionBody: sfn.DefinitionBody.fromChainable(new sfn.Pass(stack, 'P')),
  });
  new Evacuation(stack, 'Evacuation', {
    logRetention: logs.RetentionDays.ONE_WEEK,
    table,
    bus,
    migration,
    migrationName: 'T-migrate-shoot',
    ...props,
  });
  return Template.fromStack(stack);
}

describe('Evacuation (template)', () => {
  let t: Template;
  let unscheduled: Template;
  beforeAll(() => {
    t = template({ maxSeeds: 2 });
    unscheduled = template({ scheduleEnabled: false });
  }, 120_000);

  it('wakes the controller on lost leases, seeds back, evacuations due, owner records moving and migrations ending (a place may be free), resumes, and on a schedule', () => {
    t.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['gardenless'],
        'detail-type': [
          'SeedLeaseLost',
          'SeedReady',
          'SeedRegistered',
          'OwnershipTransferred',
          'MigrationSucceeded',
          'MigrationFailed',
          'EvacuationResumed',
          'EvacuationDue',
        ],
      },
    });
    t.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
    expect(JSON.stringify(unscheduled.findResources('AWS::Events::Rule'))).toContain('"State":"DISABLED"');
  });

  it('deploys the due timer from its ASL, logged and traced, putting only on the bus, started only by the controller', () => {
    t.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      DefinitionS3Location: Match.objectLike({ Key: Match.stringLikeRegexp('\\.json$') }),
      DefinitionSubstitutions: { EventBusName: Match.anyValue() },
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: Match.objectLike({ Level: 'ALL' }),
    });
    const policies = JSON.stringify(t.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('events:PutEvents');
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ EVACUATION_DUE_STATE_MACHINE_ARN: Match.anyValue() }) },
    });
  });

  it('writes only evacuation, migration and shoot items, starts and describes only migrate-shoot, and passes the rails on', () => {
    const policies = JSON.stringify(t.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('"dynamodb:LeadingKeys":["EVACUATION","MIGRATION#*","SHOOT#*"]');
    expect(policies).toContain('states:StartExecution');
    expect(policies).toContain('execution:T-migrate-shoot:*');
    expect(policies).not.toMatch(/"dynamodb:\*"|"states:\*"/);
    t.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ EVACUATION_MAX_SEEDS: '2', MIGRATE_SHOOT_STATE_MACHINE_ARN: Match.anyValue() }),
      },
    });
  });
});
