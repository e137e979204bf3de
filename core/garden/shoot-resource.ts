import { AdmissionError, ValidationError } from '../errors.js';
import { MAX_TECHNICAL_ID_LENGTH, technicalID } from '../model/names.js';
import type { Shoot, ShootInput } from '../model/shoot.js';
import { createOperation } from './shoot-operations.js';
import { API_VERSION, assertNameMatches, newObjectMeta, userMetadata } from './seed-resource.js';

export function newShoot(
  project: string,
  name: string,
  input: ShootInput,
  options: { now: Date; uuid: string },
): Shoot {
  assertNameMatches(name, input.metadata?.name);
  assertProjectMatches(project, input.metadata?.project);
  const id = technicalID(project, name);
  if (id.length > MAX_TECHNICAL_ID_LENGTH) {
    throw new ValidationError(
      `the technical ID "${id}" has ${id.length} characters; project and shoot names together must keep it within ${MAX_TECHNICAL_ID_LENGTH}`,
      { field: 'metadata.name', code: 'NameTooLong' },
    );
  }
  const at = options.now.toISOString();
  const seedName = input.spec.seedName;
  const shoot: Shoot = {
    apiVersion: API_VERSION,
    kind: 'Shoot',
    metadata: { project, ...newObjectMeta(name, input.metadata, options) },
    spec: input.spec,
    status: {
      technicalID: id,
      ...(seedName ? { seedName } : {}),
      lastOperation: {
        type: 'Create',
        state: seedName ? 'Processing' : 'Pending',
        progress: 0,
        description: seedName
          ? `Creating the control plane on seed ${seedName}`
          : 'Waiting to be scheduled onto a seed',
        lastUpdateTime: at,
      },
      conditions: [],
      constraints: [],
    },
  };
  return seedName
    ? { ...shoot, status: { ...shoot.status, operation: createOperation(shoot, seedName, options.now) } }
    : shoot;
}

/**
 * The shoot after an update of its spec. Placement, provider, region and networks do not change
 * through an update: placement changes only through scheduling or migration.
 */
export function updatedShoot(current: Shoot, input: ShootInput): Shoot {
  assertNameMatches(current.metadata.name, input.metadata?.name);
  assertProjectMatches(current.metadata.project, input.metadata?.project);
  const next = input.spec;
  const prev = current.spec;
  if (prev.seedName !== undefined && next.seedName !== prev.seedName) {
    throw new AdmissionError(
      `spec.seedName is "${prev.seedName}" and cannot be changed by an update; to move the control plane, POST /projects/${current.metadata.project}/shoots/${current.metadata.name}/migrate`,
      { field: 'spec.seedName', code: 'FieldImmutable' },
    );
  }
  if (prev.seedName === undefined && next.seedName !== undefined) {
    throw new AdmissionError(
      'spec.seedName of an unscheduled shoot is set by the scheduler; to choose a seed, create the shoot with spec.seedName',
      { field: 'spec.seedName', code: 'FieldImmutable' },
    );
  }
  immutable('spec.provider.type', prev.provider.type, next.provider.type);
  immutable('spec.region', prev.region, next.region);
  for (const net of ['nodes', 'pods', 'services'] as const) {
    immutable(`spec.networking.${net}`, prev.networking?.[net], next.networking?.[net]);
  }
  const { labels: _l, annotations: _a, ...keep } = current.metadata;
  return {
    ...current,
    metadata: {
      ...keep,
      ...userMetadata(input.metadata),
    },
    spec: next,
  };
}

function immutable(field: string, before: string | undefined, after: string | undefined): void {
  if (before !== after) {
    throw new AdmissionError(`${field} is immutable (it is "${before ?? ''}"); create a new shoot instead`, {
      field,
      code: 'FieldImmutable',
    });
  }
}

function assertProjectMatches(project: string, bodyProject: string | undefined): void {
  if (bodyProject !== undefined && bodyProject !== project) {
    throw new ValidationError(`metadata.project "${bodyProject}" does not match the project in the path "${project}"`, {
      field: 'metadata.project',
    });
  }
}
