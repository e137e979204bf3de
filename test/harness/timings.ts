import type { OwnershipTimings } from '../../core/ownership/index.js';

/**
 * The ownership timings of the test stack and of every sidecar the integration tests start on it: a
 * check every 0.5 s, 5 s of grace. The stack's copy waits from the fence bound these give, so the two
 * must be one object (docs/design.md section 4).
 */
export const TEST_OWNERSHIP_TIMINGS = { ownerCheckInterval: 500, unknownGrace: 5_000, dnsCacheTTL: 1_000, fenceTime: 3_000 } as const satisfies Partial<OwnershipTimings>;
