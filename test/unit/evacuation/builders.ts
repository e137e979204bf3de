import type { MigrationFacts } from '../../../core/evacuation/plan.js';
import type { EvacuationSettings } from '../../../core/evacuation/settings.js';
import { DEFAULT_RAILS } from '../../../core/evacuation/settings.js';
import { seedWithLease } from '../../../core/garden/seed-lease.js';
import type { Seed, Shoot } from '../../../core/model/index.js';
import { EVACUATION_PRIORITY_ANNOTATION } from '../../../core/evacuation/priority.js';
import { aSeed, aShoot, READY } from '../scheduling/fixtures.js';

export const T0 = Date.parse('2026-01-01T00:00:00Z');
export const at = (ms: number) => new Date(T0 + ms);
export const LEASE_S = 30;
export const MIN = 60_000;
export const RAILS = DEFAULT_RAILS;

export interface SeedOptions {
  /** ms after T0 of the last renewal; default: renewed at `now` (healthy). */
  renewedAt?: number;
  evacuation?: EvacuationSettings;
  capacity?: number;
  shoots?: number;
  labels?: Record<string, string>;
  /** The node network's second octet, so that seeds do not overlap each other. */
  nodes?: number;
}

/** A seed as the garden reads it at `now`: its lease (30 s) joined in, so a lost lease reads GardenletReady Unknown. */
export function seed(name: string, now: number, o: SeedOptions = {}): Seed {
  const stored = aSeed({
    name,
    ...(o.capacity === undefined ? {} : { capacity: o.capacity }),
    shoots: o.shoots ?? 0,
    ...(o.labels ? { labels: o.labels } : {}),
    networks: { nodes: `10.${o.nodes ?? 0}.0.0/16`, pods: '10.1.0.0/16', services: '10.2.0.0/16' },
  });
  stored.spec.backup = { bucket: `gl-backup-${name}`, region: 'eu-west-1' };
  if (o.evacuation) stored.spec.settings = { evacuation: o.evacuation };
  const renewed = o.renewedAt ?? now;
  return seedWithLease(
    stored,
    {
      seed: name,
      holderIdentity: stored.status.identity,
      renewTime: at(renewed).toISOString(),
      leaseDurationSeconds: LEASE_S,
      conditions: READY,
      controlPlanes: [],
    },
    at(now),
  );
}

export function shoot(
  name: string,
  seedName: string,
  o: { priority?: number | string; purpose?: Shoot['spec']['purpose']; project?: string } = {},
): Shoot {
  const s = aShoot({ ...(o.purpose ? { purpose: o.purpose } : {}) }, name, o.project ?? 'dev');
  s.spec.seedName = seedName;
  s.status.seedName = seedName;
  if (o.priority !== undefined) s.metadata.annotations = { [EVACUATION_PRIORITY_ANNOTATION]: String(o.priority) };
  return s;
}

export function migration(
  id: string,
  state: MigrationFacts['state'],
  source: string,
  destination: string,
  o: { attempts?: number; createdAt?: number } = {},
): MigrationFacts {
  return { id, state, source, destination, attempts: o.attempts ?? 1, createdAt: at(o.createdAt ?? 0).toISOString() };
}

/** Ten minutes (the default `after`) after a lease renewed at 0 ran out. */
export const DUE = LEASE_S * 1_000 + 10 * MIN;
