import type { OwnershipTimings } from '../core/ownership/index.js';

/**
 * The ownership timings of the test stack and of every sidecar the integration tests start on it: a
 * check every 0.5 s, 5 s of grace. The stack's copy waits from the fence bound these give, so the two
 * must be one object (docs/design.md section 4).
 */
export const TEST_OWNERSHIP_TIMINGS = {
  ownerCheckInterval: 500,
  unknownGrace: 5_000,
  dnsCacheTTL: 1_000,
  fenceTime: 3_000,
} as const satisfies Partial<OwnershipTimings>;

/** The test stack's external domain (the stack's default, named so that the API-domain proxy can serve it). */
export const TEST_EXTERNAL_DOMAIN = 'shoots.gardenless.local';

/**
 * The API records' TTL on the test stack: a client behind the caching resolver (the API-domain proxy)
 * reaches the destination this long after a migration switched the record, so tests wait seconds, not a minute.
 */
export const TEST_API_RECORD_TTL_SECONDS = 5;

/**
 * The CDK context of the test stack (and of benchmarks that run the same landscape, scripts/bench-evacuation.ts).
 * Tests drive the watchdog's, the lease monitor's (test/integration/early-bad-path.test.ts) and the evacuation
 * controller's (test/integration/evacuation.test.ts) rounds themselves: a scheduled round in between would count twice.
 */
export const TEST_STACK_CONTEXT: Record<string, string> = {
  watchdogSchedule: 'false',
  leaseMonitorSchedule: 'false',
  evacuationSchedule: 'false',
  // Short waits, so that a silent source is given up in seconds (docs/design.md: tests use seconds); 30 s, not
  // less: the restore of an HA shoot's etcd starts three sidecar processes at once, which takes most of
  // 15 s on a loaded two-core machine.
  migrationCommandTimeoutSeconds: '30',
  migrationWaitFinalSnapshotSeconds: '20',
  seedHeartbeatIntervalSeconds: '2',
  // The scenario sidecars check every 0.5 s with a 5 s grace; the copy's fence bound follows from these,
  // and a copy waits 15 s for a final snapshot that a dead source never writes.
  ownershipTimings: JSON.stringify(TEST_OWNERSHIP_TIMINGS),
  copyWaitForFinalSeconds: '15',
  externalDomain: TEST_EXTERNAL_DOMAIN,
  apiRecordTtlSeconds: String(TEST_API_RECORD_TTL_SECONDS),
};
