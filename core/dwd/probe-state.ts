import { z } from 'zod';
import { SCALE_DOWN_ORDER, type ScalableDependent } from './components.js';

const replicas = z.number().int().min(0);

/**
 * What the prober remembers about one shoot between rounds. It is small on purpose: the prober
 * Lambda stores it per shoot with a conditional write, so two overlapping rounds cannot both act.
 */
export const probeStateSchema = z
  .object({
    /** Consecutive rounds with external down and internal up; saturates at the failure threshold. */
    consecutiveExternalFailures: z.number().int().min(0),
    /** Consecutive rounds with external up; saturates at the success threshold. */
    consecutiveExternalSuccesses: z.number().int().min(0),
    /**
     * When the external probe first failed in the current outage (epoch ms, garden clock); absent while it
     * succeeds. A scale-down needs an internal "up" the agent observed after this: an "up" from before the
     * outage (the last word of an agent that went silent with it) proves nothing about the load balancer.
     */
    externalDownSinceMs: z.number().optional(),
    /** True while the watchdog holds the dependents down. */
    scaledDown: z.boolean(),
    /** Replicas each dependent had before the watchdog scaled it to 0; only those it scaled. */
    rememberedReplicas: z.partialRecord(z.enum(SCALE_DOWN_ORDER), replicas),
  })
  .strict()
  .refine((s) => s.scaledDown || Object.keys(s.rememberedReplicas).length === 0, {
    message: 'rememberedReplicas must be empty unless scaledDown',
    path: ['rememberedReplicas'],
  });

export type ProbeState = z.infer<typeof probeStateSchema>;
export type RememberedReplicas = Partial<Record<ScalableDependent, number>>;

/** State of a shoot the prober has never seen: nothing counted, nothing held. */
export function initialProbeState(): ProbeState {
  return {
    consecutiveExternalFailures: 0,
    consecutiveExternalSuccesses: 0,
    scaledDown: false,
    rememberedReplicas: {},
  };
}
