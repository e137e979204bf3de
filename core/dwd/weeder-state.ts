import { z } from 'zod';

/** Availability of a dependency as the seed agent last reported it; `unknown` when it did not. */
export const dependencyAvailability = z.enum(['available', 'unavailable', 'unknown']);
export type DependencyAvailability = z.infer<typeof dependencyAvailability>;

/**
 * What the weeder remembers per shoot and dependency. A recovery is one transition from
 * `unavailable` to `available`; each opens a new epoch with an empty set of restarted pods, so a
 * repeated round within the same recovery never restarts a pod twice.
 */
export const weederStateSchema = z
  .object({
    /** Last availability that was known; null before the first known observation. */
    lastKnownAvailability: z.enum(['available', 'unavailable']).nullable(),
    /** Number of recoveries seen so far. */
    recoveryEpoch: z.number().int().min(0),
    /** Garden clock (epoch ms) of the current recovery; null while none is open. */
    recoveredAtMs: z.number().nullable(),
    /** Pods (uid, else name) restarted during the current recovery. */
    restartedPods: z.array(z.string()),
  })
  .strict();
export type WeederState = z.infer<typeof weederStateSchema>;

export function initialWeederState(): WeederState {
  return { lastKnownAvailability: null, recoveryEpoch: 0, recoveredAtMs: null, restartedPods: [] };
}

/** A pod of the shoot's control plane as the agent reports it. */
export const podReport = z
  .object({
    name: z.string().min(1),
    /** Distinguishes a recreated pod that reuses a name (StatefulSets); the name is used without it. */
    uid: z.string().min(1).optional(),
    labels: z.record(z.string(), z.string()),
    /** `Running`, `CrashLoopBackOff`, `Pending`, `Error`, ... (the waiting reason when there is one). */
    state: z.string().min(1),
    /** True once deletion has started; such a pod is already being replaced. */
    deleting: z.boolean().optional(),
  })
  .strict();
export type PodReport = z.infer<typeof podReport>;

export const CRASH_LOOP_BACK_OFF = 'CrashLoopBackOff';

export function podIdentity(pod: PodReport): string {
  return pod.uid ?? pod.name;
}
