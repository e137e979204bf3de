import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRIC } from '../shared/metric-names.js';

/**
 * The metrics one bus event stands for: migration outcome and duration, copy figures, split brain,
 * lost leases, watchdog actions. Events of other types count nothing.
 */
export function recordEventMetrics(metrics: Metrics, detailType: string, detail: Record<string, unknown>): void {
  const count = (name: string, value = 1): void => void metrics.addMetric(name, MetricUnit.Count, value);
  const duration = (): void => {
    if (typeof detail.durationSeconds === 'number')
      metrics.addMetric(METRIC.migrationDuration, MetricUnit.Seconds, detail.durationSeconds);
  };
  switch (detailType) {
    case 'MigrationStarted':
      return count(METRIC.migrationStarted);
    case 'MigrationSucceeded':
      count(METRIC.migrationSucceeded);
      count(METRIC.migrationBadPath, detail.path === 'bad' ? 1 : 0);
      return duration();
    case 'MigrationFailed':
      count(METRIC.migrationFailed);
      return duration();
    case 'SnapshotsCopied':
      count(METRIC.snapshotsCopied, typeof detail.copied === 'number' ? detail.copied : 0);
      void metrics.addMetric(
        METRIC.snapshotBytesCopied,
        MetricUnit.Bytes,
        typeof detail.bytes === 'number' ? detail.bytes : 0,
      );
      return count(METRIC.copyWithoutFinalSnapshot, detail.finalFound === false ? 1 : 0);
    case 'SplitBrainSuspected':
      return count(METRIC.splitBrainSuspected);
    case 'SeedLeaseLost':
      return count(METRIC.seedLeaseLost);
    case 'DependentsScaledDown':
      return count(METRIC.dependentsScaledDown);
    case 'DependentsScaledUp':
      return count(METRIC.dependentsScaledUp);
    case 'DependentsRestarted':
      return count(METRIC.dependentsRestarted);
  }
}
