import type { Seed, SeedSpec } from '../model/index.js';
import { MIN_MULTI_ZONAL_NODES, MIN_MULTI_ZONAL_ZONES, MULTI_ZONAL_LABEL } from './constants.js';

type WorkerPool = NonNullable<SeedSpec['workerPools']>[number];

/**
 * The zones a pool can actually place control-plane pods in: its zones that the seed also declares.
 * A pool zone the seed does not declare is never chosen by the layout, so it must not count.
 */
function usableZones(pool: WorkerPool, declared: ReadonlySet<string>): string[] {
  return pool.zones.filter((z) => declared.has(z));
}

/** Why a single pool does not back `zone` tolerance, or undefined when it does. */
export function poolShortfall(pool: WorkerPool, declaredZones: readonly string[]): string | undefined {
  if (pool.taints !== undefined && pool.taints.length > 0)
    return `pool ${pool.name} is tainted, so control planes do not run on it`;
  if (pool.minimum < MIN_MULTI_ZONAL_NODES)
    return `pool ${pool.name} has minimum ${pool.minimum} nodes, needs at least ${MIN_MULTI_ZONAL_NODES}`;
  const zones = usableZones(pool, new Set(declaredZones)).length;
  // An even zone count gives no quorum advantage over one zone fewer (GEP-20, "Recommended Number of Nodes and Zones").
  if (zones < MIN_MULTI_ZONAL_ZONES || zones % 2 === 0) {
    return `pool ${pool.name} spans ${zones} of the seed's zones, needs an odd number of at least ${MIN_MULTI_ZONAL_ZONES}`;
  }
  return undefined;
}

/** The pools that make a seed multi-zonal: untainted, >= 3 nodes, an odd number (>= 3) of declared zones. */
export function multiZonalPools(spec: Pick<SeedSpec, 'provider' | 'workerPools'>): WorkerPool[] {
  return (spec.workerPools ?? []).filter((p) => poolShortfall(p, spec.provider.zones) === undefined);
}

/** Whether the seed's worker pools back `seed.gardener.cloud/multi-zonal`. */
export function poolsBackMultiZonal(spec: Pick<SeedSpec, 'provider' | 'workerPools'>): boolean {
  return multiZonalPools(spec).length > 0;
}

/**
 * The zones in which `zone`-tolerant control planes may be spread: those of the qualifying pools, in the
 * order the seed declares them. Empty when the seed is not multi-zonal by its pools.
 */
export function multiZonalZones(spec: Pick<SeedSpec, 'provider' | 'workerPools'>): string[] {
  const inPools = new Set(multiZonalPools(spec).flatMap((p) => p.zones));
  return spec.provider.zones.filter((z) => inPools.has(z));
}

export type DerivedSeedLabels =
  { ok: true; labels: Record<string, string> } | { ok: false; message: string; field: string };

/**
 * The labels a seed carries in `status.labels`: the operator's labels plus the derived multi-zonal label.
 *
 * - Pools that back it and no manual value: the label is set to `"true"`.
 * - A manual `"true"` that the pools do not back is rejected: the scheduler would place `zone` shoots on a
 *   seed that cannot spread them.
 * - A manual `"false"` is honoured: an operator may keep a capable seed out of `zone` scheduling (and so
 *   make it preferred for non-HA shoots).
 */
export function deriveSeedLabels(
  spec: SeedSpec,
  manualLabels: Readonly<Record<string, string>> = {},
): DerivedSeedLabels {
  const field = `metadata.labels["${MULTI_ZONAL_LABEL}"]`;
  const manual = manualLabels[MULTI_ZONAL_LABEL];
  const backed = poolsBackMultiZonal(spec);
  const labels: Record<string, string> = { ...manualLabels };
  delete labels[MULTI_ZONAL_LABEL];

  if (manual !== undefined && manual !== 'true' && manual !== 'false') {
    return { ok: false, field, message: `${MULTI_ZONAL_LABEL} must be "true" or "false", not "${manual}"` };
  }
  if (manual === 'true' && !backed) {
    const pools = spec.workerPools ?? [];
    const why =
      pools.length === 0
        ? 'the seed declares no worker pools'
        : pools.map((p) => poolShortfall(p, spec.provider.zones)).join('; ');
    return {
      ok: false,
      field,
      message:
        `${MULTI_ZONAL_LABEL}=true is not backed by the seed's worker pools (${why}). Add an untainted pool with minimum >= ${MIN_MULTI_ZONAL_NODES} ` +
        `nodes across an odd number (>= ${MIN_MULTI_ZONAL_ZONES}) of the seed's zones, or remove the label: it is derived automatically.`,
    };
  }
  if (manual === 'false') labels[MULTI_ZONAL_LABEL] = 'false';
  else if (backed) labels[MULTI_ZONAL_LABEL] = 'true';
  return { ok: true, labels };
}

/** The label value the scheduler and the layout trust: `status.labels` first (derived), then `metadata.labels`. */
export function seedLabel(seed: Pick<Seed, 'metadata' | 'status'>, key: string): string | undefined {
  return seed.status.labels?.[key] ?? seed.metadata.labels?.[key];
}

export function isMultiZonalSeed(seed: Pick<Seed, 'metadata' | 'status'>): boolean {
  return seedLabel(seed, MULTI_ZONAL_LABEL) === 'true';
}
