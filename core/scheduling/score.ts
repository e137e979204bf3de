import type { FailureToleranceType } from '../model/index.js';
import type { SeedIndex } from './prepare.js';

/**
 * GEP-20: for no or `node` tolerance a single-zonal seed wins regardless of load, so that multi-zonal seeds
 * stay free for `zone` shoots. 0 is preferred, 1 is not.
 */
export function zonePenalty(index: SeedIndex, i: number, tolerance: FailureToleranceType | undefined): 0 | 1 {
  return tolerance !== 'zone' && index.multiZonal[i] === 1 ? 1 : 0;
}

/**
 * Best first: zone fit, then lowest utilisation (hosted shoots over capacity), then fewest hosted shoots
 * (Gardener's own criterion, which also orders seeds without a capacity), then name. Positions in the index
 * are in name order, so the last step compares positions. A total order: every decision is deterministic.
 */
export function compareCandidates(
  index: SeedIndex,
  a: number,
  b: number,
  tolerance: FailureToleranceType | undefined,
): number {
  return (
    zonePenalty(index, a, tolerance) - zonePenalty(index, b, tolerance) ||
    index.utilisation(a) - index.utilisation(b) ||
    index.shoots[a]! - index.shoots[b]! ||
    a - b
  );
}

/**
 * A 0-100 figure for people reading a dry run: 50 points for the zone fit and up to 50 for free capacity.
 * The ranking itself is `compareCandidates`; the score never contradicts it.
 */
export function score(index: SeedIndex, i: number, tolerance: FailureToleranceType | undefined): number {
  const raw = (1 - zonePenalty(index, i, tolerance)) * 50 + 50 * (1 - index.utilisation(i));
  return Math.round(raw * 100) / 100;
}
