import type { ScalableDependent } from './components.js';
import type { ProbeState } from './probe-state.js';

/** The part of the prober's state a reconcile needs: what the watchdog holds down. */
export type WatchdogHold = Pick<ProbeState, 'scaledDown' | 'rememberedReplicas'>;

export interface HeldComponent {
  component: ScalableDependent;
  /** What the reconcile wanted; the watchdog restores its remembered value instead, later. */
  desired: number;
}

export interface ReconciledReplicas<K extends string> {
  /** Replicas to apply: `desired`, except 0 for every component the watchdog holds down. */
  replicas: Record<K, number>;
  /** Components the guard kept at 0, in the order they appear in `desired`. */
  held: HeldComponent[];
}

/**
 * Gardener once let a shoot reconcile scale kube-controller-manager back up while the dependency
 * watchdog held it down, so nodes were evicted during the very outage the watchdog was hiding.
 * Every reconcile of the seed agent passes its desired replicas through this guard. Components the
 * watchdog did not scale (not remembered) keep their desired replicas; held ones stay at 0 until
 * the prober's scale-up restores them.
 */
export function reconcileReplicas<K extends string>(
  desired: Record<K, number>,
  hold: WatchdogHold | undefined,
): ReconciledReplicas<K> {
  const replicas = { ...desired };
  const held: HeldComponent[] = [];
  if (hold === undefined || !hold.scaledDown) return { replicas, held };
  for (const name of Object.keys(desired) as K[]) {
    if (!isHeld(name, hold)) continue;
    held.push({ component: name as string as ScalableDependent, desired: desired[name] });
    replicas[name] = 0;
  }
  return { replicas, held };
}

/** True when the watchdog holds `component` at 0. */
export function isHeld(component: string, hold: WatchdogHold | undefined): boolean {
  if (hold === undefined || !hold.scaledDown) return false;
  return Object.prototype.hasOwnProperty.call(hold.rememberedReplicas, component);
}
