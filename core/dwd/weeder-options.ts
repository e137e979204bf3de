import { requireNonNegativeFinite } from './validate.js';

export interface WeederOptions {
  /**
   * Seconds after a recovery during which newly crash-looping dependants are still restarted
   * (dependency-watchdog's `watchDuration`, default 5 minutes). A pod between two crashes shows
   * `Running` or `Error` for a moment, so the recovery round alone can miss it. 0 restarts only
   * what crash-loops in the recovery round itself.
   */
  watchDurationSeconds: number;
}

export const DEFAULT_WEEDER_OPTIONS: Readonly<WeederOptions> = Object.freeze({ watchDurationSeconds: 300 });

export function resolveWeederOptions(overrides: Partial<WeederOptions> = {}): WeederOptions {
  const watchDurationSeconds = overrides.watchDurationSeconds ?? DEFAULT_WEEDER_OPTIONS.watchDurationSeconds;
  requireNonNegativeFinite(watchDurationSeconds, 'watchDurationSeconds');
  return { watchDurationSeconds };
}
