import { z } from 'zod';
import { duration, durationMs } from '../model/duration.js';
import { labels } from '../model/names.js';

/** How long a seed's lease must have been lost before its shoots move (docs/design.md section 13). */
export const DEFAULT_EVACUATE_AFTER = '10m';
export const DEFAULT_MAX_PARALLEL = 5;

/**
 * `spec.settings.evacuation` of a seed: opt-in. When the seed's lease has been lost for `after`, the
 * garden moves its shoots on the bad path, `maxParallel` at a time, to seeds the scheduler chooses among
 * those `destinationSelector` matches.
 */
export const evacuationSettings = z
  .object({
    enabled: z.boolean(),
    after: duration.optional(),
    maxParallel: z.number().int().min(1).max(100).optional(),
    destinationSelector: z.object({ matchLabels: labels }).strict().optional(),
    /**
     * Each move's copy waits at least this long after its owner change for the seed's final snapshot (the
     * migration's `finalSnapshotWait`): for a seed whose operators prefer no loss over a fast recovery.
     * Default none: the copy proceeds once the seed's bounds say waiting longer cannot lower the loss.
     */
    finalSnapshotWait: duration.optional(),
  })
  .strict();
export type EvacuationSettings = z.infer<typeof evacuationSettings>;

/** The settings with their defaults applied. */
export interface EffectiveEvacuationSettings {
  afterMs: number;
  maxParallel: number;
  matchLabels: Readonly<Record<string, string>>;
  finalSnapshotWait?: string;
}

export function effectiveSettings(settings: EvacuationSettings | undefined): EffectiveEvacuationSettings | undefined {
  if (!settings?.enabled) return undefined;
  return {
    afterMs: durationMs(settings.after ?? DEFAULT_EVACUATE_AFTER),
    maxParallel: settings.maxParallel ?? DEFAULT_MAX_PARALLEL,
    matchLabels: settings.destinationSelector?.matchLabels ?? {},
    ...(settings.finalSnapshotWait ? { finalSnapshotWait: settings.finalSnapshotWait } : {}),
  };
}

/**
 * The fleet-wide rails, set per deployment: how many seeds may be evacuated at once (so that a garden-side
 * outage that makes every lease look lost cannot move the fleet), and the share of seeds with a lost lease
 * above which no evacuation makes progress (that many seeds failing together points at the garden).
 */
export interface EvacuationRails {
  maxConcurrentEvacuations: number;
  /** 0-1: evacuation holds while more than this share of the seeds that hold leases have lost them. */
  maxLostShare: number;
  /** Attempts of one shoot's migration (the first and its resumes) before the evacuation gives it up. */
  maxAttempts: number;
}

export const DEFAULT_RAILS: EvacuationRails = { maxConcurrentEvacuations: 1, maxLostShare: 0.5, maxAttempts: 3 };

/**
 * The rails from a deployment's settings (the controller's environment): absent values keep the defaults,
 * values out of range are a deployment error.
 */
export function railsFrom(values: {
  maxConcurrentEvacuations?: number;
  maxLostShare?: number;
  maxAttempts?: number;
}): EvacuationRails {
  const rails = {
    ...DEFAULT_RAILS,
    ...Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)),
  } as EvacuationRails;
  if (!Number.isInteger(rails.maxConcurrentEvacuations) || rails.maxConcurrentEvacuations < 0)
    throw new RangeError(`maxConcurrentEvacuations must be a whole number >= 0, not ${rails.maxConcurrentEvacuations}`);
  if (!(rails.maxLostShare >= 0 && rails.maxLostShare <= 1))
    throw new RangeError(`maxLostShare must be between 0 and 1, not ${rails.maxLostShare}`);
  if (!Number.isInteger(rails.maxAttempts) || rails.maxAttempts < 1)
    throw new RangeError(`maxAttempts must be a whole number >= 1, not ${rails.maxAttempts}`);
  return rails;
}
