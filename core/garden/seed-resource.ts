import { AdmissionError, ValidationError } from '../errors.js';
import { deriveSeedLabels } from '../scheduling/multi-zonal.js';
import type { Seed, SeedInput } from '../model/seed.js';

export const API_VERSION = 'core.gardenless.io/v1' as const;

/** A new seed registration; its identity is what owner records will name. */
export function newSeed(name: string, input: SeedInput, options: { now: Date; uuid: string }): Seed {
  assertNameMatches(name, input.metadata?.name);
  return {
    apiVersion: API_VERSION,
    kind: 'Seed',
    metadata: newObjectMeta(name, input.metadata, options),
    spec: input.spec,
    status: {
      identity: `${name}-${options.uuid}`,
      conditions: [],
      shoots: 0,
      labels: statusLabels(input),
      ...(input.spec.capacity ? { allocatable: { shoots: input.spec.capacity.shoots } } : {}),
    },
  };
}

/** The seed after an operator's update: spec and labels change, status and identity stay. */
export function updatedSeed(current: Seed, input: SeedInput): Seed {
  assertNameMatches(current.metadata.name, input.metadata?.name);
  const { labels: _l, annotations: _a, ...keep } = current.metadata;
  const { allocatable: _alloc, ...status } = current.status;
  return {
    ...current,
    metadata: {
      ...keep,
      ...userMetadata(input.metadata),
    },
    spec: input.spec,
    status: {
      ...status,
      labels: statusLabels(input),
      ...(input.spec.capacity ? { allocatable: { shoots: input.spec.capacity.shoots } } : {}),
    },
  };
}

/** Metadata of a resource being created: the client's labels and annotations, the server's identity and time. */
export function newObjectMeta(
  name: string,
  metadata: Parameters<typeof userMetadata>[0],
  options: { now: Date; uuid: string },
) {
  return {
    name,
    ...userMetadata(metadata),
    resourceVersion: '0',
    uid: options.uuid,
    creationTimestamp: options.now.toISOString(),
  };
}

/** The parts of metadata a client owns (labels, annotations), present only when given. */
export function userMetadata(
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } | undefined,
) {
  return {
    ...(metadata?.labels ? { labels: metadata.labels } : {}),
    ...(metadata?.annotations ? { annotations: metadata.annotations } : {}),
  };
}

export function assertNameMatches(name: string, bodyName: string | undefined): void {
  if (bodyName !== undefined && bodyName !== name) {
    throw new ValidationError(`metadata.name "${bodyName}" does not match the name in the path "${name}"`, {
      field: 'metadata.name',
    });
  }
}

/** The labels the scheduler trusts: the operator's plus the multi-zonal label derived from the worker pools. */
function statusLabels(input: SeedInput): Record<string, string> {
  const derived = deriveSeedLabels(input.spec, input.metadata?.labels ?? {});
  if (!derived.ok)
    throw new AdmissionError(derived.message, { field: derived.field, code: 'MultiZonalLabelNotBacked' });
  return derived.labels;
}
