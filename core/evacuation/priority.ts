import type { Shoot } from '../model/shoot.js';

/** An integer annotation; higher moves first. A value that is not an integer counts as 0. */
export const EVACUATION_PRIORITY_ANNOTATION = 'gardenless.io/evacuation-priority';

export function evacuationPriority(shoot: Pick<Shoot, 'metadata'>): number {
  const raw = shoot.metadata.annotations?.[EVACUATION_PRIORITY_ANNOTATION]?.trim();
  if (raw === undefined || !/^[-+]?\d{1,9}$/.test(raw)) return 0;
  return Number(raw);
}

/** The order shoots leave an evacuated seed: priority annotation (highest first), production before other purposes, then by name. */
export function compareForEvacuation(a: Pick<Shoot, 'metadata' | 'spec'>, b: Pick<Shoot, 'metadata' | 'spec'>): number {
  const byPriority = evacuationPriority(b) - evacuationPriority(a);
  if (byPriority !== 0) return byPriority;
  const byPurpose = Number(b.spec.purpose === 'production') - Number(a.spec.purpose === 'production');
  if (byPurpose !== 0) return byPurpose;
  const ka = `${a.metadata.project}/${a.metadata.name}`;
  const kb = `${b.metadata.project}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}
