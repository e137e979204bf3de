import type { FailureToleranceType, SeedSpec } from '../model/index.js';
import { multiZonalZones } from '../scheduling/multi-zonal.js';

/** FNV-1a: a stable, well-spread hash, so that a shoot keeps its zones across reconciles and shoots spread. */
export function stableHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** GEP-20 spreads a `zone` control plane over three zones, as etcd needs for its quorum. */
export const ZONES_FOR_ZONE_TOLERANCE = 3;

/**
 * The zones a control plane runs in. Gardener picks them at random once and remembers them in a namespace
 * annotation; here they follow from the technical ID, so every reconcile and every reader of the layout
 * computes the same zones without storing them.
 * - none or `node`: one zone of the seed (all components together, no cross-zone traffic).
 * - `zone`: three zones in which the seed's multi-zonal pools run (all of them if that is fewer).
 */
export function chooseZones(
  spec: Pick<SeedSpec, 'provider' | 'workerPools'>,
  technicalID: string,
  tolerance: FailureToleranceType | undefined,
): string[] {
  const hash = stableHash(technicalID);
  if (tolerance !== 'zone') {
    const zones = spec.provider.zones;
    return zones.length === 0 ? [] : [zones[hash % zones.length]!];
  }
  const pool = multiZonalZones(spec);
  // A seed labelled multi-zonal by an operator without declared pools: trust its declared zones.
  const zones = pool.length > 0 ? pool : spec.provider.zones;
  if (zones.length <= ZONES_FOR_ZONE_TOLERANCE) return [...zones];
  const start = hash % zones.length;
  const picked = new Set(
    Array.from({ length: ZONES_FOR_ZONE_TOLERANCE }, (_, k) => zones[(start + k) % zones.length]!),
  );
  return zones.filter((z) => picked.has(z));
}
