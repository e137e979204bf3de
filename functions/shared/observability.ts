import type middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { logger } from './logger.js';
import { METRICS_NAMESPACE, METRICS_SERVICE } from './metric-names.js';

/** One metrics buffer per function (EMF to stdout, flushed at the end of each invocation). */
export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE,
  serviceName: METRICS_SERVICE,
});
/** X-Ray tracing of each invocation; a no-op outside Lambda. */
export const tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? METRICS_SERVICE });

export { MetricUnit };

/**
 * Logging context, tracing and metrics for a handler, as one middy `use`:
 * `middy(handler).use(observability())`. Metrics are flushed even when the handler fails; the cold
 * start is counted.
 */
export function observability(): middy.MiddlewareObj[] {
  return [
    injectLambdaContext(logger, { resetKeys: true }),
    captureLambdaHandler(tracer, { captureResponse: false }),
    logMetrics(metrics, { captureColdStartMetric: true, throwOnEmptyMetrics: false }),
  ];
}
