import { CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as events_ from 'aws-cdk-lib/aws-events';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SEED_DLQ_TAG } from '../adapters/sqs/seed-command-queues.js';
import { EVENT_SOURCE } from '../adapters/eventbridge/event-sink.js';
import { METRIC, METRICS_NAMESPACE, METRICS_SERVICE } from '../functions/shared/metric-names.js';
import { GardenFunction } from './garden-function.js';
import { acknowledge } from './nag.js';

/** A dead-letter queue for an EventBridge target: encrypted, TLS only, kept 14 days. */
export function eventTargetDlq(scope: Construct, id: string): sqs.Queue {
  const queue = new sqs.Queue(scope, id, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  acknowledge(queue, 'SQS3', 'This queue is itself the dead-letter queue of an EventBridge target.');
  return queue;
}

export interface OperationsProps {
  logRetention: logs.RetentionDays;
  bus: events.IEventBus;
  apiId: string;
  /** Every function of the stack, for the dashboard's errors and durations. */
  functions: Readonly<Record<string, lambda.IFunction>>;
  /** The dead-letter queues of the EventBridge targets, each with an alarm on its depth. */
  deadLetterQueues: Readonly<Record<string, sqs.IQueue>>;
  /**
   * The alarm over every seed's dead-letter queue is a Metrics Insights query (metric math). Default on;
   * off only where CloudFormation cannot create such alarms (the local emulator).
   */
  seedDeadLetterAlarm?: boolean;
}

/**
 * What an operator watches: the event-metrics function (every bus event to metrics, the subscriber of
 * SplitBrainSuspected), alarms with one SNS topic, and one dashboard.
 */
export class Operations extends Construct {
  readonly alarmTopic: sns.Topic;
  readonly alarms: Record<string, cloudwatch.Alarm>;
  readonly eventMetrics: GardenFunction;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    this.eventMetrics = new GardenFunction(this, 'EventMetrics', {
      entry: 'functions/event-metrics/handler.ts',
      description: 'event metrics: every gardenless bus event to CloudWatch metrics',
      logRetention: props.logRetention,
    });
    const eventsDlq = eventTargetDlq(this, 'EventMetricsDlq');
    new events_.Rule(this, 'AllEvents', {
      eventBus: props.bus,
      description: 'every gardenless event to the event-metrics function',
      eventPattern: { source: [EVENT_SOURCE] },
      targets: [
        new targets.LambdaFunction(this.eventMetrics.function, {
          retryAttempts: 8,
          maxEventAge: Duration.hours(2),
          deadLetterQueue: eventsDlq,
        }),
      ],
    });

    this.alarmTopic = new sns.Topic(this, 'Alarms', {
      displayName: 'gardenless alarms',
      masterKey: kms.Alias.fromAliasName(this, 'SnsKey', 'alias/aws/sns'),
      enforceSSL: true,
    });
    const metric = (name: string, statistic = 'Sum', period = Duration.minutes(1)) =>
      new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: name,
        dimensionsMap: { service: METRICS_SERVICE },
        statistic,
        period,
      });
    const alarm = (id: string, description: string, m: cloudwatch.IMetric) => {
      const a = new cloudwatch.Alarm(this, id, {
        alarmDescription: description,
        metric: m,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      a.addAlarmAction(new actions.SnsAction(this.alarmTopic));
      return a;
    };
    const gateway = (metricName: string, statistic: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: { ApiId: props.apiId, Stage: '$default' },
        statistic,
        period: Duration.minutes(5),
      });
    const queueDepth = (queue: sqs.IQueue) =>
      queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(5) });
    const seedDlqDepth = new cloudwatch.MathExpression({
      // Seed queues are created at run time; their dead-letter queues carry this tag (adapters/sqs/seed-command-queues.ts).
      expression: `SELECT MAX(ApproximateNumberOfMessagesVisible) FROM "AWS/SQS" WHERE tag.${SEED_DLQ_TAG.key} = '${SEED_DLQ_TAG.value}'`,
      usingMetrics: {},
      period: Duration.minutes(5),
      label: 'seed command dead-letter messages (max over seeds)',
    });

    this.alarms = {
      migrationError: alarm(
        'MigrationInError',
        'A migration ended in Error (MigrationFailed); calling migrate again resumes it.',
        metric(METRIC.migrationFailed),
      ),
      splitBrain: alarm(
        'SplitBrainSuspected',
        'The ownership audit suspects two seeds serving one control plane (SplitBrainSuspected).',
        metric(METRIC.splitBrainSuspected),
      ),
      seedLeaseLost: alarm(
        'SeedLeaseLost',
        'A seed agent stopped renewing its lease (SeedLeaseLost).',
        metric(METRIC.seedLeaseLost),
      ),
      api5xx: alarm('Api5xx', 'The garden API answered 5xx (API Gateway).', gateway('5xx', 'Sum')),
      ...(props.seedDeadLetterAlarm === false
        ? {}
        : {
            seedDeadLetters: alarm(
              'SeedCommandDeadLetters',
              "Seed commands in a seed's dead-letter queue: an agent failed a command five times.",
              seedDlqDepth,
            ),
          }),
      ...Object.fromEntries(
        Object.entries(props.deadLetterQueues).map(([name, queue]) => [
          `dlq${name}`,
          alarm(
            `${name}DeadLetters`,
            `Undelivered EventBridge events in the dead-letter queue of ${name}.`,
            queueDepth(queue),
          ),
        ]),
      ),
      eventMetricsDeadLetters: alarm(
        'EventMetricsDeadLetters',
        'Undelivered events in the dead-letter queue of the event-metrics function.',
        queueDepth(eventsDlq),
      ),
    };

    const fns = Object.entries({ ...props.functions, EventMetrics: this.eventMetrics.function });
    const graph = (title: string, metrics: cloudwatch.IMetric[], width = 8) =>
      new cloudwatch.GraphWidget({ title, left: metrics, width, height: 6 });
    new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${Stack.of(this).stackName}-gardenless`,
      widgets: [
        [
          graph('API requests and errors (gateway)', [
            gateway('Count', 'Sum'),
            gateway('4xx', 'Sum'),
            gateway('5xx', 'Sum'),
          ]),
          graph('API latency p50 / p99 (handler, ms)', [
            metric(METRIC.apiLatency, 'p50', Duration.minutes(5)),
            metric(METRIC.apiLatency, 'p99', Duration.minutes(5)),
          ]),
          graph('API refusals (handler)', [
            metric(METRIC.apiClientErrors, 'Sum', Duration.minutes(5)),
            metric(METRIC.apiForbidden, 'Sum', Duration.minutes(5)),
            metric(METRIC.apiServerErrors, 'Sum', Duration.minutes(5)),
          ]),
        ],
        [
          graph('Migrations', [
            metric(METRIC.migrationStarted, 'Sum', Duration.minutes(5)),
            metric(METRIC.migrationSucceeded, 'Sum', Duration.minutes(5)),
            metric(METRIC.migrationFailed, 'Sum', Duration.minutes(5)),
            metric(METRIC.migrationBadPath, 'Sum', Duration.minutes(5)),
          ]),
          graph('Migration duration p50 / max (s)', [
            metric(METRIC.migrationDuration, 'p50', Duration.minutes(15)),
            metric(METRIC.migrationDuration, 'Maximum', Duration.minutes(15)),
          ]),
          graph('Snapshot copies', [
            metric(METRIC.snapshotsCopied, 'Sum', Duration.minutes(5)),
            metric(METRIC.snapshotBytesCopied, 'Sum', Duration.minutes(5)),
            metric(METRIC.copyWithoutFinalSnapshot, 'Sum', Duration.minutes(5)),
          ]),
        ],
        [
          graph('Ownership: split brain, lost leases, fenced planes', [
            metric(METRIC.splitBrainSuspected),
            metric(METRIC.seedLeaseLost),
            metric(METRIC.controlPlanesFenced, 'Maximum'),
            metric(METRIC.ownerCheckUnknown, 'Maximum'),
          ]),
          graph('Fence duration reported by sidecars (ms)', [
            metric(METRIC.fenceDuration, 'Maximum', Duration.minutes(5)),
          ]),
          graph('Dependency watchdog', [
            metric(METRIC.watchdogProbes, 'Sum', Duration.minutes(5)),
            metric(METRIC.watchdogCommands, 'Sum', Duration.minutes(5)),
            metric(METRIC.dependentsScaledDown, 'Sum', Duration.minutes(5)),
            metric(METRIC.dependentsScaledUp, 'Sum', Duration.minutes(5)),
            metric(METRIC.dependentsRestarted, 'Sum', Duration.minutes(5)),
          ]),
        ],
        [
          graph(
            'Dead letters',
            [seedDlqDepth, ...Object.values(props.deadLetterQueues).map(queueDepth), queueDepth(eventsDlq)],
            12,
          ),
          new cloudwatch.AlarmStatusWidget({
            title: 'Alarms',
            alarms: Object.values(this.alarms),
            width: 12,
            height: 6,
          }),
        ],
        [
          graph(
            'Function errors',
            fns.map(([name, f]) => f.metricErrors({ label: name, period: Duration.minutes(5) })),
            12,
          ),
          graph(
            'Function duration p99 (ms)',
            fns.map(([name, f]) => f.metricDuration({ label: name, statistic: 'p99', period: Duration.minutes(5) })),
            12,
          ),
        ],
      ],
    });
    new CfnOutput(scope, 'AlarmTopicArn', { value: this.alarmTopic.topicArn });
  }
}
