import type { SchedulingPolicy } from '../../core/garden/placement.js';

/** Reads a variable the stack sets; a missing one is a deployment error worth failing loudly on. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
}

/** The scheduler's region strategy from SCHEDULER_STRATEGY (`SameRegion`, the default, or `MinimalDistance`). */
export function schedulingPolicyFromEnv(): SchedulingPolicy {
  const strategy = process.env.SCHEDULER_STRATEGY;
  if (strategy === undefined || strategy === '') return {};
  if (strategy !== 'SameRegion' && strategy !== 'MinimalDistance')
    throw new Error(`SCHEDULER_STRATEGY must be SameRegion or MinimalDistance, not ${strategy}`);
  return { strategy };
}

/** A number the stack may set (durations in ms or s, as the name says); absent means the code's default. */
export function optionalNumberEnv(name: string): number | undefined {
  const value = process.env[name];
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new Error(`environment variable ${name} must be a non-negative number, not ${value}`);
  return n;
}
