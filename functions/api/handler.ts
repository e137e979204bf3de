import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { DynamoGardenRepository } from '../../adapters/dynamodb/garden-repository.js';
import { EventBridgeSink } from '../../adapters/eventbridge/event-sink.js';
import { SqsSeedCommandQueues } from '../../adapters/sqs/seed-command-queues.js';
import type { EventSink } from '../../core/garden/context.js';
import { GardenService } from '../../core/garden/service.js';
import { outboundPolicyFrom } from '../../core/net/outbound-url.js';
import { logger } from '../shared/logger.js';
import { StepFunctionsMigrationWorkflow } from '../../adapters/sfn/migration-workflow.js';
import { MigrationAdmission } from '../../core/migration/migration-admission.js';
import { DynamoEvacuationStore } from '../../adapters/dynamodb/evacuations.js';
import { EvacuationControls } from '../../core/evacuation/controls.js';
import { systemClock } from '../../core/garden/context.js';
import { parseOwnershipTimings } from '../../core/ownership/timings.js';
import { migrationJournal, shootStateStore } from '../shared/migration-journal.js';
import { shootSecretsKeeper } from '../shared/shoot-secrets.js';
import { ShootKubeconfigs } from '../../core/garden/kubeconfigs.js';
import { METRIC } from '../shared/metric-names.js';
import { MetricUnit, metrics, observability } from '../shared/observability.js';
import { accessSettingsFromEnv } from './access.js';
import { heartbeatMetrics } from './heartbeat-metrics.js';
import { optionalNumberEnv, requireEnv, schedulingPolicyFromEnv } from '../shared/env.js';
import { handleRequest } from './app.js';

const VERSION = process.env.GARDENLESS_VERSION ?? '0.1.0';

const bus = new EventBridgeSink({ busName: requireEnv('EVENT_BUS_NAME') });
// The resource is already written when an event is published; failing the request would make the
// client retry a write that succeeded. The event is logged so that nothing is lost silently.
const events: EventSink = {
  publish: (detailType, detail) =>
    bus
      .publish(detailType, detail)
      .catch((error: unknown) => logger.error('event not published', { detailType, detail, error })),
};
const service = new GardenService({
  repository: new DynamoGardenRepository({ tableName: requireEnv('TABLE_NAME') }),
  events,
  scheduling: schedulingPolicyFromEnv(),
  provisioner: new SqsSeedCommandQueues({ prefix: requireEnv('SEED_QUEUE_PREFIX') }),
  leaseDurationSeconds: optionalNumberEnv('SEED_LEASE_DURATION_SECONDS'),
  // Which URLs a heartbeat may name for the watchdog to probe: a deployment setting (OUTBOUND_ALLOW).
  outbound: outboundPolicyFrom(process.env.OUTBOUND_ALLOW),
});
const access = accessSettingsFromEnv();

const migrations = new MigrationAdmission({
  journal: migrationJournal(),
  workflow: new StepFunctionsMigrationWorkflow({ stateMachineArn: requireEnv('MIGRATE_SHOOT_STATE_MACHINE_ARN') }),
  scheduling: schedulingPolicyFromEnv(),
  // A dry run predicts the path as choose-path would: the lease holds three heartbeat intervals.
  heartbeatIntervalMs: ((optionalNumberEnv('SEED_LEASE_DURATION_SECONDS') ?? 30) * 1000) / 3,
  ownershipTimings: parseOwnershipTimings(process.env.OWNERSHIP_TIMINGS),
});

const evacuations = new EvacuationControls({
  store: new DynamoEvacuationStore({ tableName: requireEnv('TABLE_NAME') }),
  events,
  clock: systemClock,
});

const kubeconfigs = new ShootKubeconfigs({
  getShoot: (project, name) => service.getShoot(project, name),
  secrets: shootSecretsKeeper(shootStateStore()),
  clock: systemClock,
  // The local landscape's API-domain proxy (docs/api-domain.md); never set on AWS.
  ...(process.env.KUBECONFIG_PROXY_URL ? { proxyUrl: process.env.KUBECONFIG_PROXY_URL } : {}),
});

async function api(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const started = Date.now();
  const result = await handleRequest(event, {
    service,
    migrations,
    evacuations,
    kubeconfigs,
    access,
    version: VERSION,
    onUnexpected: (error) => logger.error('unexpected error', { error }),
    onHeartbeat: (seed) => heartbeatMetrics(metrics, seed),
  });
  const status = result.statusCode ?? 0;
  const durationMs = Date.now() - started;
  metrics.addMetric(METRIC.apiRequests, MetricUnit.Count, 1);
  metrics.addMetric(METRIC.apiLatency, MetricUnit.Milliseconds, durationMs);
  metrics.addMetric(METRIC.apiClientErrors, MetricUnit.Count, status >= 400 && status < 500 ? 1 : 0);
  metrics.addMetric(METRIC.apiServerErrors, MetricUnit.Count, status >= 500 ? 1 : 0);
  if (status === 403) metrics.addMetric(METRIC.apiForbidden, MetricUnit.Count, 1);
  logger.info('request', { method: event.requestContext.http.method, path: event.rawPath, status, durationMs });
  return result;
}

export const handler = middy(api).use(observability());
