import { Duration, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as route53 from 'aws-cdk-lib/aws-route53';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { eventTargetDlq } from './operations.js';
import { GardenFunction } from './garden-function.js';
import { acknowledge, acknowledgeTableIndexes, nagArn } from './nag.js';

export interface ProvisioningProps {
  logRetention: logs.RetentionDays;
  table: dynamodb.ITableV2;
  bus: events.IEventBus;
  zone: route53.IHostedZone;
  internalDomain: string;
  seedQueuePrefix: string;
}

/** Event-driven: a `ShootCreated` on a seed sets the owner record and asks that seed's agent for the control plane. */
export class Provisioning extends Construct {
  /** Where EventBridge puts events it could not deliver to the function. */
  readonly deadLetterQueue: sqs.Queue;
  readonly function: GardenFunction;

  constructor(scope: Construct, id: string, props: ProvisioningProps) {
    super(scope, id);
    this.deadLetterQueue = eventTargetDlq(this, 'DeadLetters');
    this.function = new GardenFunction(this, 'Provision', {
      entry: 'functions/provision/handler.ts',
      description: 'provisioning: owner record and create-control-plane for a placed shoot',
      logRetention: props.logRetention,
      environment: {
        TABLE_NAME: props.table.tableName,
        HOSTED_ZONE_ID: props.zone.hostedZoneId,
        INTERNAL_DOMAIN: props.internalDomain,
        SEED_QUEUE_PREFIX: props.seedQueuePrefix,
      },
    });
    props.table.grantReadData(this.function.function);
    acknowledgeTableIndexes(this.function.role, props.table);
    this.function.role.addToPolicy(new iam.PolicyStatement({ actions: ['route53:ListResourceRecordSets', 'route53:ChangeResourceRecordSets'], resources: [props.zone.hostedZoneArn] }));
    this.function.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['sqs:GetQueueUrl', 'sqs:SendMessage'], resources: [Stack.of(this).formatArn({ service: 'sqs', resource: `${props.seedQueuePrefix}*` })] }),
    );
    acknowledge(this.function.role, `IAM5[Resource::${nagArn(this, 'sqs', `${props.seedQueuePrefix}*`)}]`,
      'Seeds and their command queues are registered at run time; sending is limited to this garden\'s seed queues.');
    new events.Rule(this, 'OnShootCreated', {
      eventBus: props.bus,
      description: 'provisions the control plane of a shoot placed on a seed',
      eventPattern: { source: ['gardenless'], detailType: ['ShootCreated'] },
      targets: [new targets.LambdaFunction(this.function.function, { retryAttempts: 8, maxEventAge: Duration.hours(2), deadLetterQueue: this.deadLetterQueue })],
    });
  }
}
