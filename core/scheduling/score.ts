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
 * (Gardener's own criterion, which also orders seeds without a capacity), then `tieBreak` (the shoot's own
 * order of seeds, see `shootTieBreak`), then name. Positions in the index are in name order, so the last
 * step compares positions. A total order: every decision is deterministic.
 */
export function compareCandidates(
  index: SeedIndex,
  a: number,
  b: number,
  tolerance: FailureToleranceType | undefined,
  tieBreak?: (i: number) => number,
): number {
  return (
    zonePenalty(index, a, tolerance) - zonePenalty(index, b, tolerance) ||
    index.utilisation(a) - index.utilisation(b) ||
    index.shoots[a]! - index.shoots[b]! ||
    (tieBreak ? tieBreak(a) - tieBreak(b) : 0) ||
    a - b
  );
}

/**
 * Among seeds that tie on everything else, each shoot prefers its own order of them (rendezvous hashing of
 * its `<project>/<name>` with the seed's name), not the first by name: shoots created at the same moment
 * see the same counts, and would otherwise all pick one seed and queue on its item (every placement counts
 * the shoot on its seed in one transaction; concurrent ones on one item collide and retry). Spread over the
 * tie, they land on as many seeds as tie, and a fleet filled evenly stays even. Deterministic per shoot.
 */
export function shootTieBreak(index: SeedIndex, shootId: string): (i: number) => number {
  const memo = new Map<number, number>();
  return (i) => {
    let hash = memo.get(i);
    if (hash === undefined) {
      hash = fnv1a(`${shootId}\n${index.names[i]!}`);
      memo.set(i, hash);
    }
    return hash;
  };
}

/** 32-bit FNV-1a: a fast, well-spread hash of a short string. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let k = 0; k < text.length; k++) {
    hash ^= text.charCodeAt(k);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * A 0-100 figure for people reading a dry run: 50 points for the zone fit and up to 50 for free capacity.
 * The ranking itself is `compareCandidates`; the score never contradicts it.
 */
export function score(index: SeedIndex, i: number, tolerance: FailureToleranceType | undefined): number {
  const raw = (1 - zonePenalty(index, i, tolerance)) * 50 + 50 * (1 - index.utilisation(i));
  return Math.round(raw * 100) / 100;
}
