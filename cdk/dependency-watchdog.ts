import { Duration, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { eventTargetDlq } from './operations.js';
import { GardenFunction } from './garden-function.js';
import { acknowledge, acknowledgeTableIndexes, nagArn } from './nag.js';

export interface DependencyWatchdogProps {
  logRetention: logs.RetentionDays;
  table: dynamodb.ITableV2;
  bus: events.IEventBus;
  seedQueuePrefix: string;
  /** Off for test landscapes that drive rounds themselves. Default on. */
  scheduleEnabled?: boolean;
  /** OUTBOUND_ALLOW: which probe URLs besides https on public addresses are allowed (http, loopback, private). */
  outboundAllow?: string;
  /** Probe through the shoots' API domains (where the function's DNS serves the external zone); default the load balancers. */
  probeViaApiDomain?: { externalDomain: string };
}

/**
 * The dependency-watchdog prober and weeder (seed bootstrapping) as one Lambda on a one-minute
 * schedule that runs a round every 10 seconds; scale and restart commands go to the seed agents.
 */
export class DependencyWatchdog extends Construct {
  /** Where EventBridge puts events it could not deliver to the function. */
  readonly deadLetterQueue: sqs.Queue;
  readonly function: GardenFunction;
  readonly schedule: events.Rule;

  constructor(scope: Construct, id: string, props: DependencyWatchdogProps) {
    super(scope, id);
    this.deadLetterQueue = eventTargetDlq(this, 'DeadLetters');
    this.function = new GardenFunction(this, 'Watchdog', {
      entry: 'functions/dwd/handler.ts',
      description: 'dependency watchdog: external probes, scale-down/up and weeder restarts',
      logRetention: props.logRetention,
      // Six rounds ten seconds apart, each bounded by the probe timeout.
      timeout: Duration.seconds(75),
      environment: {
        TABLE_NAME: props.table.tableName,
        EVENT_BUS_NAME: props.bus.eventBusName,
        SEED_QUEUE_PREFIX: props.seedQueuePrefix,
        PROBE_TIMEOUT_MS: '2000',
        OUTBOUND_ALLOW: props.outboundAllow ?? '',
        ...(props.probeViaApiDomain
          ? { PROBE_VIA: 'api-domain', EXTERNAL_DOMAIN: props.probeViaApiDomain.externalDomain }
          : {}),
      },
    });
    props.table.grantReadWriteData(this.function.function);
    acknowledgeTableIndexes(this.function.role, props.table);
    props.bus.grantPutEventsTo(this.function.function);
    this.function.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['sqs:GetQueueUrl', 'sqs:SendMessage'],
        resources: [Stack.of(this).formatArn({ service: 'sqs', resource: `${props.seedQueuePrefix}*` })],
      }),
    );
    acknowledge(
      this.function.role,
      `IAM5[Resource::${nagArn(this, 'sqs', `${props.seedQueuePrefix}*`)}]`,
      "Seeds and so their queues are registered at run time; the wildcard is confined to this garden's seed queues.",
    );
    this.schedule = new events.Rule(this, 'Every minute', {
      description: 'runs the dependency watchdog (six probe rounds a minute)',
      schedule: events.Schedule.rate(Duration.minutes(1)),
      enabled: props.scheduleEnabled ?? true,
      targets: [
        new targets.LambdaFunction(this.function.function, { retryAttempts: 0, deadLetterQueue: this.deadLetterQueue }),
      ],
    });
  }
}
