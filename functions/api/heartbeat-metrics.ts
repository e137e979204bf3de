import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Seed } from '../../core/model/seed.js';
import { METRIC } from '../shared/metric-names.js';

/**
 * The fencing figures a seed agent reports in its heartbeat: how many of its control planes are fenced
 * (not serving, because their owner check says another seed or cannot tell), how many see `unknown`, and
 * the fence durations the sidecars measured.
 */
export function heartbeatMetrics(metrics: Metrics, seed: Seed): void {
  const planes = seed.status.controlPlanes ?? [];
  const fenced = planes.filter(
    (cp) => !cp.active && (cp.ownerCheck === 'not-owner' || cp.ownerCheck === 'unknown'),
  ).length;
  metrics.addMetric(METRIC.controlPlanesFenced, MetricUnit.Count, fenced);
  metrics.addMetric(
    METRIC.ownerCheckUnknown,
    MetricUnit.Count,
    planes.filter((cp) => cp.ownerCheck === 'unknown').length,
  );
  for (const cp of planes)
    if (cp.fenceMs !== undefined) metrics.addMetric(METRIC.fenceDuration, MetricUnit.Milliseconds, cp.fenceMs);
}
