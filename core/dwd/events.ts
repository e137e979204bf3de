/**
 * Events the watchdog emits alongside its commands. The reasons are part of the contract (docs/design.md
 * section 8 and issue 7); the Lambda publishes them and the integration tests look for them.
 */
export const DEPENDENTS_SCALED_DOWN = 'DependentsScaledDown';
export const DEPENDENTS_SCALED_UP = 'DependentsScaledUp';
export const DEPENDENTS_RESTARTED = 'DependentsRestarted';

export type WatchdogEventReason =
  typeof DEPENDENTS_SCALED_DOWN | typeof DEPENDENTS_SCALED_UP | typeof DEPENDENTS_RESTARTED;

/** Kubernetes event shape: scale-down is a Warning because the shoot loses its controllers. */
export interface WatchdogEvent {
  type: 'Normal' | 'Warning';
  reason: WatchdogEventReason;
  message: string;
  /** Components or pods the event is about, in the order the commands were issued. */
  subjects: string[];
}
