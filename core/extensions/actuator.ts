import type { ExtensionKind, ExtensionResource, NamedResourceReference } from './resource.js';

/** What an actuator hands back to the driver, which writes it into `status` (the actuator never writes status). */
export interface ActuatorResult {
  /** The state to keep in `status.state`; undefined keeps none (a stateless extension). */
  state?: unknown;
  /** The referenced resources to keep in `status.resources`. */
  resources?: NamedResourceReference[];
}

export interface ActuatorInput {
  /** The resource as the driver sees it, with `status.state` as last saved (or as restored from the ShootState). */
  resource: ExtensionResource;
  /** Aborted when the caller gives up (a command timeout); long actuators should stop early. */
  signal?: AbortSignal;
}

/**
 * One extension kind's controller logic, modelled on Gardener's extension `Actuator`. The generic driver
 * (`operate`) calls exactly one method per operation and owns everything around it: which method runs,
 * the `gardener.cloud/operation` annotation, `lastOperation`, `observedGeneration`, and writing the result
 * into `status.state` / `status.resources`. Every method must be idempotent: a failed operation is
 * repeated as a whole (the annotation is still there), and Step Functions retries commands.
 * A method signals failure by throwing; the driver records the error and keeps the resource.
 */
export interface Actuator {
  readonly kind: ExtensionKind;

  /**
   * Bring the external and seed-local resources to `spec`, creating what is missing. Returns the state the
   * extension needs to continue elsewhere (saved after every successful reconcile, so that a migration
   * whose source is unreachable still finds recent state in the ShootState).
   */
  reconcile(input: ActuatorInput): Promise<ActuatorResult>;

  /**
   * Remove everything: the seed-local resources and the external ones (cloud infrastructure, DNS
   * entries, machines). Deleting what is already gone succeeds.
   */
  delete(input: ActuatorInput): Promise<void>;

  /**
   * Stop acting on the resource in this seed and clean up only the seed-local objects (secrets, config
   * maps, managed resources: without deleting what they manage). External resources and objects in the
   * shoot stay exactly as they are: deleting and recreating them would disrupt the running cluster. This
   * is the last chance to save state: the returned state is what the destination restores from.
   */
  migrate(input: ActuatorInput): Promise<ActuatorResult>;

  /**
   * On the destination seed: first restore the saved `status.state` (and the referenced resources) into
   * the seed, then reconcile as usual, adopting the existing external resources instead of creating new
   * ones. Restore is a reconcile from saved state, not a second code path: an extension without state
   * just reconciles.
   */
  restore(input: ActuatorInput): Promise<ActuatorResult>;
}

/** The actuators of a runtime, one per kind. */
export type ActuatorSet = Readonly<Partial<Record<ExtensionKind, Actuator>>>;
