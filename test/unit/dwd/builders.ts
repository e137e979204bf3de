import {
  CLUSTER_AUTOSCALER,
  KUBE_CONTROLLER_MANAGER,
  MACHINE_CONTROLLER_MANAGER,
  initialProbeState,
  type ProbeRound,
  type ProbeState,
  type PodReport,
} from '../../../core/dwd/index.js';

/** Replicas of a typical non-HA shoot with autoscaling. */
export const TYPICAL_REPLICAS = {
  [KUBE_CONTROLLER_MANAGER]: 2,
  [MACHINE_CONTROLLER_MANAGER]: 1,
  [CLUSTER_AUTOSCALER]: 3,
};

/** The rounds' clock: every round built is one probe interval (10 s) after the one before. */
let clockMs = Date.parse('2025-01-01T00:00:00Z');

/** A round where everything is fine; override what the case is about. */
export function round(overrides: Partial<ProbeRound> = {}): ProbeRound {
  clockMs += 10_000;
  return {
    atMs: clockMs,
    external: 'success',
    internal: { result: 'success', ageSeconds: 1 },
    hibernated: false,
    migrating: false,
    replicas: { ...TYPICAL_REPLICAS },
    ...overrides,
  };
}

/** External down through the load balancer, internal fresh and up: the one case that counts toward scale-down. */
export function lbDown(overrides: Partial<ProbeRound> = {}): ProbeRound {
  return round({ external: 'failure', ...overrides });
}

/** A state; one that counts failures is in an outage that began five minutes before the next round. */
export function state(overrides: Partial<ProbeState> = {}): ProbeState {
  const outage = (overrides.consecutiveExternalFailures ?? 0) > 0 ? { externalDownSinceMs: clockMs - 300_000 } : {};
  return { ...initialProbeState(), ...outage, ...overrides };
}

export function pod(
  name: string,
  podState: string,
  labels: Record<string, string>,
  extra: Partial<PodReport> = {},
): PodReport {
  return { name, state: podState, labels, ...extra };
}
