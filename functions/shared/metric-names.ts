/**
 * The metrics gardenless emits (CloudWatch namespace `gardenless`, dimension `service`), by name. The
 * functions emit them through Powertools Metrics (EMF); the stack's alarms and dashboard read them by
 * the same names.
 */
export const METRICS_NAMESPACE = 'gardenless';
export const METRICS_SERVICE = 'gardenless';

export const METRIC = {
  // garden API
  apiRequests: 'ApiRequests',
  apiLatency: 'ApiLatency',
  apiClientErrors: 'ApiClientErrors',
  apiServerErrors: 'ApiServerErrors',
  apiForbidden: 'ApiForbidden',
  // migrations (from the bus events MigrationSucceeded / MigrationFailed)
  migrationStarted: 'MigrationStarted',
  migrationSucceeded: 'MigrationSucceeded',
  migrationFailed: 'MigrationFailed',
  migrationDuration: 'MigrationDuration',
  migrationBadPath: 'MigrationBadPath',
  // copy figures (SnapshotsCopied) and fencing figures (the agents' heartbeats)
  snapshotsCopied: 'SnapshotsCopiedObjects',
  snapshotBytesCopied: 'SnapshotsCopiedBytes',
  copyWithoutFinalSnapshot: 'CopyWithoutFinalSnapshot',
  controlPlanesFenced: 'ControlPlanesFenced',
  ownerCheckUnknown: 'OwnerCheckUnknown',
  fenceDuration: 'FenceDuration',
  // ownership
  splitBrainSuspected: 'SplitBrainSuspected',
  /** Emitted by the seed lifecycle (a seed whose lease expired); the alarm is defined ahead of it. */
  seedLeaseLost: 'SeedLeaseLost',
  // dependency watchdog
  watchdogProbes: 'WatchdogProbes',
  watchdogCommands: 'WatchdogCommands',
  dependentsScaledDown: 'DependentsScaledDown',
  dependentsScaledUp: 'DependentsScaledUp',
  dependentsRestarted: 'DependentsRestarted',
} as const;
