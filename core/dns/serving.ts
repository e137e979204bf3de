import { leaseExpired } from '../garden/seed-lease.js';
import type { Seed } from '../model/seed.js';
import type { ApiRecord } from './api-records.js';
import { recordTargetFor, sameTarget, type ApiRecordTarget } from './record-target.js';

export type Serving =
  /** `target` is undefined when the seed serves but reports no load balancer (a test seed, a Service without ingress yet). */
  | {
      readonly serving: true;
      readonly seed: string;
      readonly target: ApiRecordTarget | undefined;
      readonly externalUrl: string | undefined;
    }
  | { readonly serving: false; readonly seed: string | undefined; readonly reason: string };

export interface ServingInput {
  /** The seed that should serve (the destination of a migration, the placed seed of a create). */
  readonly seed: Pick<Seed, 'metadata' | 'status'> | undefined;
  readonly technicalID: string;
  readonly now: Date;
  /** A report older than this does not count: it may come from before the restore (a shoot that was here before). */
  readonly notBefore?: Date;
}

/**
 * Whether a seed serves a shoot's control plane, from its heartbeat alone: the lease holds, and its report
 * of the control plane is active (etcd unfenced and ready, kube-apiserver ready where it runs) with a load
 * balancer address, made after
 * `notBefore`. The address decides the record's target.
 */
export function servingTarget(input: ServingInput): Serving {
  const { seed, technicalID } = input;
  if (seed === undefined) return { serving: false, seed: undefined, reason: 'the seed is not registered' };
  const name = seed.metadata.name;
  if (!seed.status.lastHeartbeatTime || leaseExpired(seed, input.now))
    return { serving: false, seed: name, reason: `seed ${name} has no valid lease` };
  const plane = seed.status.controlPlanes?.find((cp) => cp.technicalID === technicalID);
  if (plane === undefined) return { serving: false, seed: name, reason: `seed ${name} does not report ${technicalID}` };
  if (!plane.active)
    return { serving: false, seed: name, reason: `seed ${name} reports ${technicalID} but not active` };
  // A kube-apiserver that runs but does not answer ready yet (starting after a restore) serves no client.
  if (plane.internalProbe !== undefined && plane.internalProbe !== 'Success')
    return {
      serving: false,
      seed: name,
      reason: `seed ${name} reports ${technicalID}'s kube-apiserver ${plane.internalProbe}, not ready`,
    };
  const reportedAt = Date.parse(plane.internalProbeTime ?? seed.status.lastHeartbeatTime);
  if (input.notBefore && !(reportedAt >= input.notBefore.getTime())) {
    return {
      serving: false,
      seed: name,
      reason: `seed ${name}'s last report of ${technicalID} is from before ${input.notBefore.toISOString()}`,
    };
  }
  return {
    serving: true,
    seed: name,
    target: plane.externalUrl ? recordTargetFor(plane.externalUrl) : undefined,
    externalUrl: plane.externalUrl,
  };
}

export type ApiRecordDecision =
  /** Write the record, on condition that it still holds `expected` (null: that it does not exist). */
  | {
      readonly action: 'set';
      readonly target: ApiRecordTarget;
      readonly expected: ApiRecordTarget | null;
      readonly reason: string;
    }
  /** The record already points where it should (a retried step): nothing to write but a TTL of another. */
  | { readonly action: 'done'; readonly target: ApiRecordTarget; readonly reason: string; readonly ttl?: number }
  /** Not yet: the seed does not serve. Try again later; never write early. */
  | { readonly action: 'wait'; readonly reason: string }
  /** Leave the record where it is. */
  | { readonly action: 'keep'; readonly reason: string }
  /**
   * Nothing to point the record at, so it stays as it is: the seed serves but names no load balancer, or
   * the shoot is hibernated (nothing serves; the wake's answer points the record at its seed).
   */
  | { readonly action: 'no-address'; readonly reason: string };

export interface SwitchInput {
  /** Whether the destination has restored etcd and the extensions (the migration's restore-extensions step succeeded). */
  readonly restored: boolean;
  /** The destination's serving state, from `servingTarget` with `notBefore` = the restore's start. */
  readonly destination: Serving;
  readonly current: ApiRecord | undefined;
  /** A hibernated shoot's control plane serves nowhere; its record follows when it wakes. */
  readonly hibernated?: boolean;
}

/**
 * When a migration switches the API record: only once the destination has restored the control plane
 * and reports it serving, on both paths. Before that, and whenever the migration fails before it, the
 * record stays where the serving control plane was (the source, or nowhere new). A record that already
 * points at the destination is done, so the step is idempotent.
 */
export function decideSwitch(input: SwitchInput): ApiRecordDecision {
  if (!input.restored) return { action: 'keep', reason: 'the destination has not restored the control plane yet' };
  if (input.hibernated)
    return {
      action: 'no-address',
      reason: 'the shoot is hibernated: nothing serves, the API record is left as it is until it wakes',
    };
  if (!input.destination.serving) return { action: 'wait', reason: input.destination.reason };
  if (!input.destination.target) return noAddress(input.destination.seed);
  return pointAt(input.destination.target, input.current, `seed ${input.destination.seed} serves`);
}

/**
 * The create's decision: the record is written once the placed seed serves. A record that points elsewhere
 * is replaced on condition that it is unchanged (a leftover of a deleted shoot of the same name).
 */
export function decideCreate(input: { serving: Serving; current: ApiRecord | undefined }): ApiRecordDecision {
  if (!input.serving.serving) return { action: 'wait', reason: input.serving.reason };
  if (!input.serving.target) return noAddress(input.serving.seed);
  return pointAt(input.serving.target, input.current, `seed ${input.serving.seed} serves`);
}

function noAddress(seed: string): ApiRecordDecision {
  return {
    action: 'no-address',
    reason: `seed ${seed} serves the control plane but reports no load balancer: the API record is left as it is`,
  };
}

function pointAt(target: ApiRecordTarget, current: ApiRecord | undefined, why: string): ApiRecordDecision {
  if (current !== undefined && sameTarget(current, target))
    return { action: 'done', target, reason: `${why}; the record points there already`, ttl: current.ttl };
  return {
    action: 'set',
    target,
    expected: current === undefined ? null : { type: current.type, value: current.value },
    reason: why,
  };
}
