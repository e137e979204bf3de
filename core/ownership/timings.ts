import { z } from 'zod';
import { FenceBoundError } from './errors.js';
import { DEFAULT_OWNER_RECORD_TTL_SECONDS } from './owner-records.js';

/**
 * The ownership timings (docs/design.md section 4), all in milliseconds. Every owner check, fence and copy wait
 * follows these: the sidecar's owner watchdog, the DNS lookup's cache, the copy's wait for a final
 * snapshot, the CLI's defaults and the stack. The fence bound is derived from them (`fenceBound`), so
 * they are one set: a deployment states the seeds' timings once and the garden waits accordingly.
 */
export interface OwnershipTimings {
  /** How often a sidecar checks the owner record. */
  readonly ownerCheckInterval: number;
  /** How long `unknown` (the lookup itself fails) keeps etcd serving before it fences. */
  readonly unknownGrace: number;
  /** First retry delay of an `unknown` streak, doubling up to the check interval. */
  readonly initialRetryDelay: number;
  /** How long one check may take before it counts as `unknown`. */
  readonly checkTimeout: number;
  /**
   * How long a seed may still see the old owner record: its own cache (at most the check interval) plus
   * what a caching resolver on the way may hold (the record's TTL).
   */
  readonly dnsCacheTTL: number;
  /** From the decision to fence until no client can write (SIGTERM to exit; measured 6 ms). */
  readonly fenceTime: number;
}

export const DEFAULT_OWNER_CHECK_INTERVAL_MS = 5_000;
export const DEFAULT_UNKNOWN_GRACE_MS = 30_000;
export const DEFAULT_INITIAL_RETRY_DELAY_MS = 1_000;
export const DEFAULT_FENCE_TIME_MS = 10_000;

/**
 * The timings with every default filled in and every value checked. Defaults that depend on others
 * follow them: the check timeout is the check interval, the DNS cache the interval plus the record TTL.
 */
export function ownershipTimings(given: Partial<OwnershipTimings> = {}): OwnershipTimings {
  const ownerCheckInterval = duration(given.ownerCheckInterval, DEFAULT_OWNER_CHECK_INTERVAL_MS, 'ownerCheckInterval');
  if (ownerCheckInterval === 0)
    throw new FenceBoundError('ownerCheckInterval must be positive', { field: 'ownerCheckInterval' });
  return {
    ownerCheckInterval,
    unknownGrace: duration(given.unknownGrace, DEFAULT_UNKNOWN_GRACE_MS, 'unknownGrace'),
    initialRetryDelay: duration(given.initialRetryDelay, DEFAULT_INITIAL_RETRY_DELAY_MS, 'initialRetryDelay'),
    checkTimeout: duration(given.checkTimeout, ownerCheckInterval, 'checkTimeout'),
    dnsCacheTTL: duration(
      given.dnsCacheTTL,
      ownerCheckInterval + DEFAULT_OWNER_RECORD_TTL_SECONDS * 1_000,
      'dnsCacheTTL',
    ),
    fenceTime: duration(given.fenceTime, DEFAULT_FENCE_TIME_MS, 'fenceTime'),
  };
}

/** The timings a deployment may set (each optional), as JSON numbers of milliseconds. */
export const ownershipTimingsSchema = z
  .object({
    ownerCheckInterval: z.number().positive().optional(),
    unknownGrace: z.number().min(0).optional(),
    initialRetryDelay: z.number().min(0).optional(),
    checkTimeout: z.number().min(0).optional(),
    dnsCacheTTL: z.number().min(0).optional(),
    fenceTime: z.number().min(0).optional(),
  })
  .strict();

/** The timings from a JSON object of milliseconds (stack context, environment); nothing given means the defaults. */
export function parseOwnershipTimings(text: string | undefined): Partial<OwnershipTimings> {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new FenceBoundError(`ownership timings are not JSON: ${text}`, { cause });
  }
  const parsed = ownershipTimingsSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new FenceBoundError(`ownership timings ${text}: ${issue.path.join('.') || '(root)'}: ${issue.message}`, {
      field: String(issue.path[0] ?? ''),
      cause: parsed.error,
    });
  }
  return Object.fromEntries(
    Object.entries(parsed.data).filter(([, v]) => v !== undefined),
  ) as Partial<OwnershipTimings>;
}

function duration(value: number | undefined, fallback: number, field: string): number {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v < 0)
    throw new FenceBoundError(`${field} must be a non-negative number of milliseconds, got ${v}`, { field });
  return v;
}
