/** The label that marks a seed able to host control planes with failure tolerance `zone` (GEP-20). */
export const MULTI_ZONAL_LABEL = 'seed.gardener.cloud/multi-zonal';

/** The seed conditions that must be `True` for a seed to be usable by the scheduler. */
export const REQUIRED_SEED_CONDITIONS = ['GardenletReady', 'BackupBucketsReady'] as const;

/** GEP-20: a pool backs `zone` tolerance with at least this many nodes across at least this many zones. */
export const MIN_MULTI_ZONAL_NODES = 3;
export const MIN_MULTI_ZONAL_ZONES = 3;
