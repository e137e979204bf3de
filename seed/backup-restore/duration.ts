import { SidecarConfigError } from './errors.js';

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** `500ms`, `20s`, `5m`, `1h`, or a bare number of ms, as the CLI takes intervals. */
export function parseDuration(text: string, field: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  if (!m) throw new SidecarConfigError(`${field}: "${text}" is not a duration (500ms, 20s, 5m, 1h or plain ms)`, field);
  const ms = Number(m[1]) * UNITS[m[2] ?? 'ms']!;
  if (!Number.isFinite(ms)) throw new SidecarConfigError(`${field}: "${text}" is too large`, field);
  return Math.round(ms);
}

/** A duration in ms as the CLI takes it back (`5s`, `500ms`). */
export function durationFlag(ms: number): string {
  return ms % 1_000 === 0 ? `${ms / 1_000}s` : `${ms}ms`;
}
