import { z } from 'zod';
import { SCALE_DOWN_ORDER } from './components.js';

/** Result of the external probe (through the load balancer, from the garden). A timeout is a failure. */
export const externalProbeResult = z.enum(['success', 'failure', 'timeout']);
export type ExternalProbeResult = z.infer<typeof externalProbeResult>;

/** Result of the internal probe as the seed agent reported it in its last heartbeat. */
export const internalProbeResult = z.enum(['success', 'failure', 'unknown']);
export type InternalProbeResult = z.infer<typeof internalProbeResult>;

export const internalProbeReport = z
  .object({
    result: internalProbeResult,
    /** Seconds since the agent took the result (garden clock minus the probe's time, bounded by the lease's renewal). */
    ageSeconds: z.number(),
  })
  .strict();
export type InternalProbeReport = z.infer<typeof internalProbeReport>;

/** Everything one prober round knows about one shoot. */
export const probeRoundSchema = z
  .object({
    /** When the round probed (garden clock, epoch ms): an outage's start, and what an internal result is newer than. */
    atMs: z.number(),
    external: externalProbeResult,
    /** Absent when the agent has not reported yet; counts as unknown. */
    internal: internalProbeReport.optional(),
    hibernated: z.boolean(),
    migrating: z.boolean(),
    /**
     * Current spec replicas of the dependents as the agent last reported them. A missing entry means
     * the component is not deployed for this shoot (no cluster-autoscaler without autoscaling).
     */
    replicas: z.partialRecord(z.enum(SCALE_DOWN_ORDER), z.number().int().min(0)),
  })
  .strict();
export type ProbeRound = z.infer<typeof probeRoundSchema>;

/** How the prober reads the internal side this round. */
export type InternalView = 'up' | 'down' | 'unknown';

/**
 * A missing, stale or unknown internal result is "unknown". A negative age (the agent's clock ahead
 * of the garden's) is treated as fresh: skew should not make a live agent look silent.
 */
export function viewInternal(
  report: InternalProbeReport | undefined,
  options: { internalMaxAgeSeconds: number },
): InternalView {
  if (report === undefined || Number.isNaN(report.ageSeconds) || report.ageSeconds > options.internalMaxAgeSeconds) {
    return 'unknown';
  }
  if (report.result === 'success') return 'up';
  if (report.result === 'failure') return 'down';
  return 'unknown';
}

/** When the agent took the internal result, on the garden's clock: the round's time minus the result's age. */
export function internalObservedAtMs(round: Pick<ProbeRound, 'atMs' | 'internal'>): number | undefined {
  return round.internal === undefined ? undefined : round.atMs - round.internal.ageSeconds * 1_000;
}

export function isExternalUp(result: ExternalProbeResult): boolean {
  return result === 'success';
}
