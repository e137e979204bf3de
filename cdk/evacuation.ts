import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { join, resolve } from 'node:path';
import { GardenFunction } from './garden-function.js';
import { acknowledge, acknowledgeLogsAndTracing, acknowledgeTableIndexes, nagArn } from './nag.js';
import { eventTargetDlq } from './operations.js';

const ROOT = resolve(import.meta.dirname, '..');

export interface EvacuationProps {
  logRetention: logs.RetentionDays;
  table: dynamodb.ITableV2;
  bus: events.IEventBus;
  /** The migrate-shoot state machine, which every move starts (through the migration admission). */
  migration: sfn.IStateMachine;
  /** Its name: the admission describes an execution whose migration still says Running, to resume one that died unrecorded. */
  migrationName: string;
  /** The fleet-wide rails (docs/design.md section 13); unset keeps the code's defaults (1 seed, share 0.5, 3 attempts). */
  maxSeeds?: number;
  maxLostShare?: number;
  maxAttempts?: number;
  schedulerStrategy?: 'SameRegion' | 'MinimalDistance';
  /** Off for test landscapes that drive rounds themselves. Default on. */
  scheduleEnabled?: boolean;
}

/**
 * The evacuation controller: one Lambda (concurrent rounds are safe: every write is conditional), woken by lost leases, seeds
 * coming back, an evacuation falling due (the due timer, a state machine each round asks to wake it then),
 * owner records moving and migrations ending (a move frees its place then, not at the next minute) and a
 * one-minute schedule. It starts bad-path migrations of an opted-in
 * lost seed's shoots through the migration admission, and keeps each evacuation's record.
 */
export class Evacuation extends Construct {
  readonly deadLetterQueue: sqs.Queue;
  readonly function: GardenFunction;
  /** The `after` clock: waits until an evacuation is due, then puts EvacuationDue on the bus. */
  readonly dueTimer: sfn.StateMachine;

  constructor(scope: Construct, id: string, props: EvacuationProps) {
    super(scope, id);
    this.deadLetterQueue = eventTargetDlq(this, 'DeadLetters');
    this.dueTimer = new sfn.StateMachine(this, 'DueTimer', {
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromFile(join(ROOT, 'state-machines', 'evacuation-due.asl.json')),
      definitionSubstitutions: { EventBusName: props.bus.eventBusName },
      logs: {
        destination: new logs.LogGroup(this, 'DueTimerLogs', {
          retention: props.logRetention,
          removalPolicy: RemovalPolicy.DESTROY,
        }),
        level: sfn.LogLevel.ALL,
        includeExecutionData: true,
      },
      tracingEnabled: true,
    });
    props.bus.grantPutEventsTo(this.dueTimer);
    acknowledgeLogsAndTracing(this.dueTimer);
    const optional = (name: string, value: number | undefined) =>
      value === undefined ? {} : { [name]: String(value) };
    this.function = new GardenFunction(this, 'Controller', {
      entry: 'functions/evacuation/handler.ts',
      description: 'evacuation controller: moves the shoots of an opted-in seed whose lease is lost, within the rails',
      logRetention: props.logRetention,
      timeout: Duration.seconds(60),
      environment: {
        TABLE_NAME: props.table.tableName,
        EVENT_BUS_NAME: props.bus.eventBusName,
        MIGRATE_SHOOT_STATE_MACHINE_ARN: props.migration.stateMachineArn,
        EVACUATION_DUE_STATE_MACHINE_ARN: this.dueTimer.stateMachineArn,
        ...optional('EVACUATION_MAX_SEEDS', props.maxSeeds),
        ...optional('EVACUATION_MAX_LOST_SHARE', props.maxLostShare),
        ...optional('EVACUATION_MAX_ATTEMPTS', props.maxAttempts),
        ...(props.schedulerStrategy ? { SCHEDULER_STRATEGY: props.schedulerStrategy } : {}),
      },
    });
    const role = this.function.role;
    props.table.grant(role, 'dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query');
    acknowledgeTableIndexes(role, props.table);
    // Writes its evacuation records, and what the migration admission writes: the migration lock and the shoot's mirror of it.
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
        resources: [props.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EVACUATION', 'MIGRATION#*', 'SHOOT#*'] } },
      }),
    );
    props.bus.grantPutEventsTo(role);
    props.migration.grantStartExecution(role);
    this.dueTimer.grantStartExecution(role);
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['states:DescribeExecution'],
        resources: [
          Stack.of(this).formatArn({
            service: 'states',
            resource: 'execution',
            resourceName: `${props.migrationName}:*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );
    acknowledge(
      role,
      `IAM5[Resource::${nagArn(this, 'states', `execution:${props.migrationName}:*`)}]`,
      'Executions are named <migrationId>-<attempt> at run time; the controller only describes executions of migrate-shoot.',
    );

    const target = () =>
      new targets.LambdaFunction(this.function.function, {
        retryAttempts: 8,
        maxEventAge: Duration.hours(2),
        deadLetterQueue: this.deadLetterQueue,
      });
    new events.Rule(this, 'OnChange', {
      eventBus: props.bus,
      description:
        'runs an evacuation round when a lease is lost, a seed is back or registered, an evacuation is due, an owner record moves or a migration ends (a place may be free), or an evacuation is resumed',
      eventPattern: {
        source: ['gardenless'],
        detailType: [
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
      targets: [target()],
    });
    new events.Rule(this, 'Every minute', {
      description:
        'runs an evacuation round every minute (shoots that fit nowhere yet; the `after` clock should the due timer fail)',
      schedule: events.Schedule.rate(Duration.minutes(1)),
      enabled: props.scheduleEnabled ?? true,
      targets: [
        new targets.LambdaFunction(this.function.function, { retryAttempts: 0, deadLetterQueue: this.deadLetterQueue }),
      ],
    });
  }
}
