import { sidecarSettings, type SidecarSettings } from '../../core/model/seed.js';
import { slowestSettings } from '../../core/snapshots/index.js';
import type { SidecarStatus } from '../backup-restore/sidecar.js';

/**
 * What a shoot's sidecars say they run with, each field's largest value (the members of a cluster run the
 * same flags; the largest is the safe one if they do not). Undefined unless every one says it in the shape
 * the garden takes: a sidecar process older than the report, or a torn answer, reports nothing rather than
 * something the heartbeat's schema would refuse.
 */
export function reportedSettings(statuses: readonly (SidecarStatus | undefined)[]): SidecarSettings | undefined {
  const parsed = statuses.map((s) => sidecarSettings.safeParse(s?.settings));
  if (parsed.length === 0 || !parsed.every((p) => p.success)) return undefined;
  return slowestSettings(parsed.map((p) => p.data!));
}
