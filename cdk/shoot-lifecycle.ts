import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as route53 from 'aws-cdk-lib/aws-route53';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GardenFunction } from './garden-function.js';
import { acknowledge, acknowledgeTableIndexes, grantTaskFunctions, nagArn } from './nag.js';
import { apiDomainEnvironment, grantApiRecords, type ApiDomain } from './api-domain.js';
import { eventTargetDlq } from './operations.js';
import { grantShootSecrets } from './shoot-secrets.js';

const ROOT = resolve(import.meta.dirname, '..');

export interface ShootLifecycleProps {
  logRetention: logs.RetentionDays;
  table: dynamodb.ITableV2;
  bus: events.IEventBus;
  zone: route53.IHostedZone;
  internalDomain: string;
  /** The API records create sets and delete removes. */
  apiDomain: ApiDomain;
  seedQueuePrefix: string;
  /** Wraps the shoots' secrets, which every command that starts a control plane carries. */
  shootSecretsKey: kms.IKey;
  /** The operate-shoot state machine's name. */
  name: string;
  /** How long an operation's command waits for the seed agent's answer. Default 5 minutes. */
  commandTimeout?: Duration;
  /** Off for test landscapes that drive resyncs themselves. Default on. */
  scheduleEnabled?: boolean;
  /** SCHEDULER_STRATEGY for placing pending shoots (the API's). */
  schedulerStrategy?: string;
}

/**
 * The shoot lifecycle: the operate-shoot state machine (`state-machines/operate-shoot.asl.json`) with its
 * task function, and the lifecycle controller that starts it on the bus's shoot events, places pending
 * shoots when seeds become ready or free a place, and resyncs every minute.
 */
export class ShootLifecycle extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly operate: GardenFunction;
  readonly controller: GardenFunction;
  /** Where EventBridge puts events it could not deliver to the controller. */
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: ShootLifecycleProps) {
    super(scope, id);
    const commandTimeout = props.commandTimeout ?? Duration.minutes(5);
    this.operate = new GardenFunction(this, 'Operate', {
      entry: 'functions/lifecycle/operate.ts',
      description: "operate-shoot: a lifecycle operation's command to the seed agent, and its answer on the shoot",
      logRetention: props.logRetention,
      timeout: Duration.seconds(60),
      environment: {
        TABLE_NAME: props.table.tableName,
        EVENT_BUS_NAME: props.bus.eventBusName,
        HOSTED_ZONE_ID: props.zone.hostedZoneId,
        INTERNAL_DOMAIN: props.internalDomain,
        ...apiDomainEnvironment(props.apiDomain),
        COMMAND_TIMEOUT_SECONDS: String(commandTimeout.toSeconds()),
      },
    });
    props.table.grantReadWriteData(this.operate.function);
    grantShootSecrets(this.operate, props.shootSecretsKey);
    acknowledgeTableIndexes(this.operate.role, props.table);
    props.bus.grantPutEventsTo(this.operate.function);
    this.operate.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['route53:ListResourceRecordSets', 'route53:ChangeResourceRecordSets'],
        resources: [props.zone.hostedZoneArn],
      }),
    );
    grantApiRecords(this.operate.role, props.apiDomain, { write: true });
    this.operate.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['sqs:SendMessage'],
        resources: [Stack.of(this).formatArn({ service: 'sqs', resource: `${props.seedQueuePrefix}*` })],
      }),
    );
    acknowledge(
      this.operate.role,
      `IAM5[Resource::${nagArn(this, 'sqs', `${props.seedQueuePrefix}*`)}]`,
      "Seeds and their command queues are registered at run time; sending is limited to this garden's seed queues.",
    );

    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineName: props.name,
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromString(JSON.stringify(operateShootDefinition({ commandTimeout }))),
      definitionSubstitutions: { OperateFunctionArn: this.operate.function.functionArn },
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: true },
      tracingEnabled: true,
    });
    grantTaskFunctions(this.stateMachine, [this.operate.function]);

    this.controller = new GardenFunction(this, 'Controller', {
      entry: 'functions/lifecycle/controller.ts',
      description: 'shoot lifecycle: starts operations, places pending shoots, resyncs',
      logRetention: props.logRetention,
      timeout: Duration.seconds(60),
      environment: {
        TABLE_NAME: props.table.tableName,
        EVENT_BUS_NAME: props.bus.eventBusName,
        OPERATE_SHOOT_STATE_MACHINE_ARN: this.stateMachine.stateMachineArn,
        ...(props.schedulerStrategy ? { SCHEDULER_STRATEGY: props.schedulerStrategy } : {}),
      },
    });
    props.table.grantReadWriteData(this.controller.function);
    acknowledgeTableIndexes(this.controller.role, props.table);
    props.bus.grantPutEventsTo(this.controller.function);
    this.stateMachine.grantStartExecution(this.controller.function);

    this.deadLetterQueue = eventTargetDlq(this, 'DeadLetters');
    const target = () =>
      new targets.LambdaFunction(this.controller.function, {
        retryAttempts: 8,
        maxEventAge: Duration.hours(2),
        deadLetterQueue: this.deadLetterQueue,
      });
    new events.Rule(this, 'OnShootOperation', {
      eventBus: props.bus,
      description:
        'starts the operation a shoot event requests (Create on placement, Reconcile, Hibernate, Wake, Delete)',
      eventPattern: {
        source: ['gardenless'],
        detailType: ['ShootCreated', 'ShootScheduled', 'ShootOperationRequested'],
      },
      targets: [target()],
    });
    new events.Rule(this, 'OnCapacity', {
      eventBus: props.bus,
      description: 'places pending shoots when a seed becomes ready, is registered or frees a place',
      eventPattern: { source: ['gardenless'], detailType: ['SeedReady', 'SeedRegistered', 'ShootDeleted'] },
      targets: [target()],
    });
    new events.Rule(this, 'Resync', {
      description: 'resyncs the shoot lifecycle every minute (pending shoots, operations whose events were lost)',
      schedule: events.Schedule.rate(Duration.minutes(1)),
      enabled: props.scheduleEnabled ?? true,
      targets: [
        new targets.LambdaFunction(this.controller.function, {
          retryAttempts: 0,
          deadLetterQueue: this.deadLetterQueue,
        }),
      ],
    });
  }
}

/** The ASL file with this deployment's command timeout: the file stays the one source of the flow. */
export function operateShootDefinition(options: { commandTimeout: Duration }): Record<string, unknown> {
  const asl = JSON.parse(readFileSync(join(ROOT, 'state-machines', 'operate-shoot.asl.json'), 'utf8')) as {
    States: Record<string, Record<string, unknown>>;
  };
  asl.States.Dispatch!.TimeoutSeconds = options.commandTimeout.toSeconds();
  return asl;
}
