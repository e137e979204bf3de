import { NotFoundError } from '../errors.js';
import { admitHighAvailability, toAdmissionError } from '../ha/admission.js';
import type { Seed } from '../model/seed.js';
import type { Shoot, ShootStatus } from '../model/shoot.js';
import { schedule, type ScheduleOptions, type ScheduleResult } from '../scheduling/schedule.js';
import { SeedUnavailableError } from './errors.js';
import type { GardenRepository } from './repository.js';
import { createOperation } from './shoot-operations.js';

/** Rejections kept in a stored shoot's status; a dry run returns all of them. */
export const MAX_STORED_REJECTIONS = 200;

export type SchedulingPolicy = Pick<ScheduleOptions, 'strategy' | 'regionDistances' | 'maxHeartbeatAgeMs'>;

/** Every seed with its lease; `controlPlanes: false` without the agents' reports of their control planes. */
export async function listAllSeeds(repo: GardenRepository, options: { controlPlanes?: boolean } = {}): Promise<Seed[]> {
  const seeds: Seed[] = [];
  let token: string | undefined;
  do {
    const page = await repo.listSeeds({ limit: 500, ...(token ? { continue: token } : {}) }, options);
    seeds.push(...page.items);
    token = page.continue;
  } while (token);
  return seeds;
}

/** What the scheduler reads of a seed's lease: its health, not the report of the control planes it hosts. */
export const HEALTH_ONLY = { controlPlanes: false } as const;

/** HA admission of a shoot against the seed it is, or is about to be, placed on. */
export function admitOnSeed(options: { shoot: Shoot; seed?: Seed; previous?: Shoot }): void {
  const violations = admitHighAvailability({
    newSpec: options.shoot.spec,
    ...(options.previous ? { oldSpec: options.previous.spec } : {}),
    ...(options.seed ? { seed: options.seed } : {}),
  });
  if (violations[0]) throw toAdmissionError(violations[0]);
}

/** The shoot placed on `seedName`: why it waited (`status.scheduling`) is over, so it goes. */
export function placed(shoot: Shoot, seedName: string, summary: string, now: Date): Shoot {
  const { scheduling: _waited, ...status } = shoot.status;
  return {
    ...shoot,
    spec: { ...shoot.spec, seedName },
    status: {
      ...status,
      seedName,
      operation: createOperation(shoot, seedName, now),
      lastOperation: {
        type: 'Create',
        state: 'Processing',
        progress: 0,
        description: `Scheduled onto seed ${seedName} (${summary}); creating the control plane`,
        lastUpdateTime: now.toISOString(),
      },
      conditions: upsertCondition(shoot.status.conditions, {
        type: 'Scheduled',
        status: 'True',
        reason: 'Scheduled',
        message: `placed on seed ${seedName}`,
        lastTransitionTime: now.toISOString(),
      }),
    },
  };
}

/**
 * What a shoot shows when the scheduler found no seed for it (`status.scheduling`): the summary, or
 * `summary` when the caller words it, and the rejections, at most MAX_STORED_REJECTIONS of them.
 */
export function schedulingStatus(
  result: Pick<ScheduleResult, 'summary' | 'rejected'>,
  now: Date,
  summary = result.summary,
): NonNullable<ShootStatus['scheduling']> {
  const rejected = result.rejected;
  return {
    lastAttemptTime: now.toISOString(),
    summary,
    rejected: rejected.slice(0, MAX_STORED_REJECTIONS),
    ...(rejected.length > MAX_STORED_REJECTIONS ? { rejectedOmitted: rejected.length - MAX_STORED_REJECTIONS } : {}),
  };
}

export function unschedulable(shoot: Shoot, result: ScheduleResult, now: Date): Shoot {
  return {
    ...shoot,
    status: {
      ...shoot.status,
      lastOperation: {
        type: 'Create',
        state: 'Pending',
        progress: 0,
        description: `Unschedulable: ${result.summary}`,
        lastUpdateTime: now.toISOString(),
      },
      conditions: upsertCondition(shoot.status.conditions, {
        type: 'Scheduled',
        status: 'False',
        reason: 'Unschedulable',
        message: result.summary.slice(0, 1024),
        lastTransitionTime: now.toISOString(),
      }),
      scheduling: schedulingStatus(result, now),
    },
  };
}

/**
 * Places a new shoot: chooses a seed and creates the shoot counted on it in one conditional write. When
 * a concurrent placement fills the chosen seed first, the decision is made again on fresh seeds, so
 * capacity is never exceeded and a full preferred seed never makes the shoot fail.
 */
export async function scheduleAndCreate(options: {
  repo: GardenRepository;
  shoot: Shoot;
  policy: SchedulingPolicy;
  now: Date;
  attempts?: number;
}): Promise<{ shoot: Shoot; result: ScheduleResult }> {
  const attempts = options.attempts ?? 8;
  for (let attempt = 1; ; attempt++) {
    const seeds = await listAllSeeds(options.repo, HEALTH_ONLY);
    const result = schedule({ shoot: options.shoot, seeds, ...options.policy });
    if (!result.seedName) {
      return { shoot: await options.repo.createShoot(unschedulable(options.shoot, result, options.now)), result };
    }
    try {
      return {
        shoot: await options.repo.createShoot(placed(options.shoot, result.seedName, result.summary, options.now)),
        result,
      };
    } catch (error) {
      if (!(error instanceof SeedUnavailableError) || attempt >= attempts) throw error;
    }
  }
}

/**
 * A pending shoot (stored without a seed) placed now if the scheduler finds a seed: counted on it
 * atomically (a lost race for the last place is scheduled again). When none fits the shoot keeps its
 * reasons; they are written only when they changed, so that retries do not churn its resourceVersion.
 */
export async function placePending(options: {
  repo: GardenRepository;
  shoot: Shoot;
  policy: SchedulingPolicy;
  now: Date;
  attempts?: number;
}): Promise<{ shoot: Shoot; result: ScheduleResult; placed: boolean }> {
  const attempts = options.attempts ?? 4;
  let shoot = options.shoot;
  for (let attempt = 1; ; attempt++) {
    const result = schedule({ shoot, seeds: await listAllSeeds(options.repo, HEALTH_ONLY), ...options.policy });
    if (!result.seedName) {
      if (shoot.status.scheduling?.summary === result.summary) return { shoot, result, placed: false };
      return {
        shoot: await options.repo.updateShoot(
          unschedulable(shoot, result, options.now),
          shoot.metadata.resourceVersion,
        ),
        result,
        placed: false,
      };
    }
    try {
      const next = placed(shoot, result.seedName, result.summary, options.now);
      return {
        shoot: await options.repo.placeShoot(next, {
          toSeed: result.seedName,
          expectedVersion: shoot.metadata.resourceVersion,
        }),
        result,
        placed: true,
      };
    } catch (error) {
      if (!(error instanceof SeedUnavailableError) || attempt >= attempts) throw error;
      const fresh = await options.repo.getShoot(shoot.metadata.project, shoot.metadata.name);
      if (!fresh || fresh.status.seedName) return { shoot: fresh ?? shoot, result, placed: false };
      shoot = fresh;
    }
  }
}

/** A migration destination for an existing shoot: the scheduler's choice among every seed but `exclude`. */
export async function chooseDestination(options: {
  repo: GardenRepository;
  project: string;
  name: string;
  exclude: readonly string[];
  policy: SchedulingPolicy;
}): Promise<ScheduleResult> {
  const shoot = await options.repo.getShoot(options.project, options.name);
  if (!shoot) throw new NotFoundError(`shoot "${options.project}/${options.name}" not found`);
  const exclude = [...options.exclude, ...(shoot.status.seedName ? [shoot.status.seedName] : [])];
  return schedule({
    shoot,
    seeds: await listAllSeeds(options.repo, HEALTH_ONLY),
    excludeSeeds: exclude,
    ...options.policy,
  });
}

export function assertSeedExists(seed: Seed | undefined, seedName: string): asserts seed is Seed {
  if (!seed) throw new SeedUnavailableError(`seed "${seedName}" does not exist`, seedName, 'NotFound');
}

function upsertCondition<C extends { type: string }>(conditions: readonly C[], next: C): C[] {
  return [...conditions.filter((c) => c.type !== next.type), next];
}
