import { Duration } from 'aws-cdk-lib';
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
import { acknowledgeTableIndexes } from './nag.js';
import { apiDomainEnvironment, grantApiRecords, type ApiDomain } from './api-domain.js';

export interface OwnershipAuditProps {
  logRetention: logs.RetentionDays;
  table: dynamodb.ITableV2;
  zone: route53.IHostedZone;
  bus: events.IEventBus;
  internalDomain: string;
  /** The API records the audit compares with what seeds serve (read only). */
  apiDomain: ApiDomain;
  /** How often the audit runs. Default 5 minutes. */
  auditInterval?: Duration;
  /** Heartbeats older than this are not evidence of what a seed serves. Default 5 minutes. */
  heartbeatMaxAge?: Duration;
  /** Off for landscapes that drive the audit themselves. Default on. */
  scheduleEnabled?: boolean;
}

/**
 * The owner check the state machines call ("assert that the owner is X") and the scheduled ownership
 * audit. Both read owner records through the Route 53 API of this one zone; only the audit writes
 * (shoot conditions, events).
 */
export class OwnershipAudit extends Construct {
  /** Where EventBridge puts events it could not deliver to the function. */
  readonly deadLetterQueue: sqs.Queue;
  readonly auditFunction: GardenFunction;
  readonly checkFunction: GardenFunction;
  readonly schedule: events.Rule;

  constructor(scope: Construct, id: string, props: OwnershipAuditProps) {
    super(scope, id);
    this.deadLetterQueue = eventTargetDlq(this, 'DeadLetters');
    const listRecords = new iam.PolicyStatement({
      actions: ['route53:ListResourceRecordSets'],
      resources: [props.zone.hostedZoneArn],
    });
    const zoneEnv = { HOSTED_ZONE_ID: props.zone.hostedZoneId, INTERNAL_DOMAIN: props.internalDomain };

    this.checkFunction = new GardenFunction(this, 'Check', {
      entry: 'functions/ownership-check/handler.ts',
      description: 'ownership check: assert that the owner record names a seed',
      logRetention: props.logRetention,
      environment: zoneEnv,
    });
    this.checkFunction.role.addToPolicy(listRecords);

    this.auditFunction = new GardenFunction(this, 'Audit', {
      entry: 'functions/audit/handler.ts',
      description: 'ownership audit: owner records vs placement vs heartbeats',
      logRetention: props.logRetention,
      timeout: Duration.minutes(5),
      environment: {
        ...zoneEnv,
        ...apiDomainEnvironment(props.apiDomain),
        TABLE_NAME: props.table.tableName,
        EVENT_BUS_NAME: props.bus.eventBusName,
        HEARTBEAT_MAX_AGE_MS: String((props.heartbeatMaxAge ?? Duration.minutes(5)).toMilliseconds()),
      },
    });
    this.auditFunction.role.addToPolicy(listRecords);
    grantApiRecords(this.auditFunction.role, props.apiDomain, { write: false });
    // Reads every shoot and seed; writes shoot conditions (conditional UpdateItem).
    props.table.grantReadWriteData(this.auditFunction.function);
    acknowledgeTableIndexes(this.auditFunction.role, props.table);
    props.bus.grantPutEventsTo(this.auditFunction.function);

    this.schedule = new events.Rule(this, 'Schedule', {
      description: 'gardenless ownership audit',
      schedule: events.Schedule.rate(props.auditInterval ?? Duration.minutes(5)),
      enabled: props.scheduleEnabled ?? true,
      targets: [
        new targets.LambdaFunction(this.auditFunction.function, {
          retryAttempts: 2,
          maxEventAge: Duration.minutes(5),
          deadLetterQueue: this.deadLetterQueue,
        }),
      ],
    });
  }
}
