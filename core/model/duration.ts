import { z } from 'zod';

/** Go-style durations as Gardener writes them: `90s`, `10m`, `1h30m`. */
const DURATION = /^(?:(\d{1,2})h)?(?:(\d{1,4})m)?(?:(\d{1,5})s)?$/;

/**
 * A Go-style duration of at least one second and at most a day. The form is the schema's (400); a duration
 * of the right form outside the range is a rule on its value (`outOfRange`: 422, as Kubernetes answers an
 * invalid field value), since the range is not part of the published schema.
 */
export const duration = z
  .string()
  .max(16)
  .regex(DURATION, 'must be a duration such as 90s, 10m or 1h30m')
  .refine((d) => d !== '' && durationMs(d) >= 1_000 && durationMs(d) <= 86_400_000, {
    message: 'must be between 1s and 24h',
    params: { outOfRange: true },
  });

/** Milliseconds of a duration the schema accepted (NaN for anything else). */
export function durationMs(text: string): number {
  const m = DURATION.exec(text);
  if (!m) return Number.NaN;
  return ((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 1_000;
}
