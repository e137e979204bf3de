import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { GardenFunction } from './garden-function.js';
import { acknowledgeTableIndexes } from './nag.js';
import { eventTargetDlq } from './operations.js';

export interface LeaseMonitorProps {
  logRetention: logs.RetentionDays;
  table: dynamodb.ITableV2;
  bus: events.IEventBus;
  /** The migrate-shoot state machine, whose waiting source steps the monitor fails early. */
  migration: sfn.IStateMachine;
  /** Off for test landscapes that drive rounds themselves. Default on. */
  scheduleEnabled?: boolean;
}

/**
 * The seed lease monitor: one Lambda on a one-minute schedule that runs a round every 5 seconds. It
 * announces lost seed leases (SeedLeaseLost, once per loss) and fails the task of a mode-auto migration
 * waiting on a source seed whose lease expired (SourceLeaseExpired), so the flow takes the bad path at once.
 */
export class LeaseMonitor extends Construct {
  readonly deadLetterQueue: sqs.Queue;
  readonly function: GardenFunction;
  readonly schedule: events.Rule;

  constructor(scope: Construct, id: string, props: LeaseMonitorProps) {
    super(scope, id);
    this.deadLetterQueue = eventTargetDlq(this, 'DeadLetters');
    this.function = new GardenFunction(this, 'Monitor', {
      entry: 'functions/lease-monitor/handler.ts',
      description: 'seed lease monitor: lost leases, early bad-path switch of migrations waiting on a silent source',
      logRetention: props.logRetention,
      // Twelve rounds five seconds apart, each a few reads.
      timeout: Duration.seconds(75),
      // It runs all minute, mostly waiting between rounds: memory is what that minute costs.
      memorySize: 256,
      environment: { TABLE_NAME: props.table.tableName, EVENT_BUS_NAME: props.bus.eventBusName },
    });
    const role = this.function.role;
    // Reads seeds with their leases, migration records and the waits filed under a seed.
    props.table.grant(role, 'dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query');
    acknowledgeTableIndexes(role, props.table);
    // Writes only its own items: the lost leases it remembers and the source waits it settles.
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        resources: [props.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['LEASEMONITOR', 'SOURCEWAIT#*'] } },
      }),
    );
    props.bus.grantPutEventsTo(role);
    role.addToPolicy(
      new iam.PolicyStatement({ actions: ['states:SendTaskFailure'], resources: [props.migration.stateMachineArn] }),
    );
    this.schedule = new events.Rule(this, 'Every minute', {
      description: 'runs the seed lease monitor (twelve rounds a minute)',
      schedule: events.Schedule.rate(Duration.minutes(1)),
      enabled: props.scheduleEnabled ?? true,
      targets: [
        new targets.LambdaFunction(this.function.function, { retryAttempts: 0, deadLetterQueue: this.deadLetterQueue }),
      ],
    });
  }
}
