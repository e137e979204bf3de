/**
 * Region-name distance for the `MinimalDistance` strategy, as Gardener's scheduler documents it: the region
 * name is split into a base name and an orientation; the distance is twice the Levenshtein distance of the
 * base names plus an orientation correction (0 same, 1 only one side has one, 2 different), plus 2 when the
 * provider differs. So a matching region with a matching provider always wins.
 */

/** In this order: Gardener cuts at the first of these words it finds, so `northeast` counts as `north`. */
export const ORIENTATIONS = ['north', 'south', 'east', 'west', 'central'] as const;
export type Orientation = (typeof ORIENTATIONS)[number];

export interface SplitRegion {
  /** The name with the orientation word replaced by `:`, so `europe-west1` and `europe-east1` share a base. */
  base: string;
  orientation: Orientation | undefined;
}

export function splitOrientation(region: string): SplitRegion {
  for (const o of ORIENTATIONS) {
    const at = region.indexOf(o);
    if (at >= 0) return { base: `${region.slice(0, at)}:${region.slice(at + o.length)}`, orientation: o };
  }
  return { base: region, orientation: undefined };
}

// Reused between calls: region names are short, and the scheduler computes one distance per distinct region.
let row = new Uint16Array(64);

/** Plain Levenshtein distance (insert, delete and substitute each cost 1). */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  if (row.length < b.length + 1) row = new Uint16Array(b.length + 1);
  for (let j = 0; j <= b.length; j++) row[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      const substitute = diagonal + (ca === b.charCodeAt(j - 1) ? 0 : 1);
      row[j] = Math.min(above + 1, row[j - 1]! + 1, substitute);
      diagonal = above;
    }
  }
  return row[b.length]!;
}

export function orientationCorrection(a: Orientation | undefined, b: Orientation | undefined): number {
  if (a === undefined && b === undefined) return 0;
  if (a === undefined || b === undefined) return 1;
  return a === b ? 0 : 2;
}

/** Distance between two region names, without the provider correction. */
export function regionDistance(seedRegion: string, shootRegion: string): number {
  const seed = splitOrientation(seedRegion);
  const shoot = splitOrientation(shootRegion);
  return 2 * levenshtein(seed.base, shoot.base) + orientationCorrection(seed.orientation, shoot.orientation);
}

export const PROVIDER_CORRECTION = 2;

export interface SeedPlacement {
  region: string;
  provider: string;
}

/** The full `MinimalDistance` distance of a seed from the shoot's intended region and provider. */
export function minimalDistance(seed: SeedPlacement, shoot: SeedPlacement): number {
  return regionDistance(seed.region, shoot.region) + (seed.provider === shoot.provider ? 0 : PROVIDER_CORRECTION);
}
