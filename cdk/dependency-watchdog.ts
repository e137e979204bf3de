import { type CfnResource, Duration, Stack } from 'aws-cdk-lib';
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
  /** About how many shoots one partition invocation probes (default 500). */
  shootsPerPartition?: number;
  /** The deployment's external domain: the probes ask seeds' load balancers for each shoot's API domain (SNI). */
  externalDomain: string;
}

/**
 * The dependency-watchdog prober and weeder (seed bootstrapping): a round function on a one-minute
 * schedule that runs a round every 10 seconds, each fanned out over partitions of whole seeds, every
 * partition a synchronous invocation of the partition function (probes, decisions, state, commands);
 * scale and restart commands go to the seed agents.
 */
export class DependencyWatchdog extends Construct {
  /** Where EventBridge puts events it could not deliver to the function. */
  readonly deadLetterQueue: sqs.Queue;
  /** The round: plans the partitions and waits for them. */
  readonly function: GardenFunction;
  /** One partition of a round. */
  readonly partitionFunction: GardenFunction;
  readonly schedule: events.Rule;

  constructor(scope: Construct, id: string, props: DependencyWatchdogProps) {
    super(scope, id);
    this.deadLetterQueue = eventTargetDlq(this, 'DeadLetters');
    this.partitionFunction = new GardenFunction(this, 'Partition', {
      entry: 'functions/dwd/partition.ts',
      description: 'dependency watchdog, one partition of a round: external probes, scale-down/up and weeder restarts',
      logRetention: props.logRetention,
      // One round's probes at 50 at once, each bounded by the probe timeout; a round never outlives its 10 s slot by much.
      timeout: Duration.seconds(30),
      environment: {
        TABLE_NAME: props.table.tableName,
        EVENT_BUS_NAME: props.bus.eventBusName,
        SEED_QUEUE_PREFIX: props.seedQueuePrefix,
        PROBE_TIMEOUT_MS: '2000',
        OUTBOUND_ALLOW: props.outboundAllow ?? '',
        EXTERNAL_DOMAIN: props.externalDomain,
        ...(props.probeViaApiDomain ? { PROBE_VIA: 'api-domain' } : {}),
      },
    });
    const partition = this.partitionFunction.function;
    props.table.grantReadWriteData(partition);
    acknowledgeTableIndexes(this.partitionFunction.role, props.table);
    props.bus.grantPutEventsTo(partition);
    this.partitionFunction.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['sqs:GetQueueUrl', 'sqs:SendMessage'],
        resources: [Stack.of(this).formatArn({ service: 'sqs', resource: `${props.seedQueuePrefix}*` })],
      }),
    );
    acknowledge(
      this.partitionFunction.role,
      `IAM5[Resource::${nagArn(this, 'sqs', `${props.seedQueuePrefix}*`)}]`,
      "Seeds and so their queues are registered at run time; the wildcard is confined to this garden's seed queues.",
    );

    this.function = new GardenFunction(this, 'Watchdog', {
      entry: 'functions/dwd/handler.ts',
      description: 'dependency watchdog rounds: partitions of whole seeds, each probed by the partition function',
      logRetention: props.logRetention,
      // Six rounds ten seconds apart, each waiting for its partitions (bounded by theirs).
      timeout: Duration.seconds(90),
      // It waits for its partitions and between rounds, all minute: memory is what that minute costs.
      memorySize: 256,
      environment: {
        TABLE_NAME: props.table.tableName,
        PARTITION_FUNCTION_NAME: partition.functionName,
        SHOOTS_PER_PARTITION: String(props.shootsPerPartition ?? 500),
      },
    });
    // Reads only the seeds' names and shoot counts.
    props.table.grant(this.function.role, 'dynamodb:Query');
    acknowledgeTableIndexes(this.function.role, props.table);
    partition.grantInvoke(this.function.role);
    acknowledge(
      this.function.role,
      `IAM5[Resource::<${Stack.of(this).getLogicalId(partition.node.defaultChild as CfnResource)}.Arn>:*]`,
      'grantInvoke covers the versions and aliases of the one partition function.',
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
