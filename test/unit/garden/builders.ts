import type { Clock, IdSource } from '../../../core/garden/context.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import type { GardenRepository } from '../../../core/garden/repository.js';
import { GardenService } from '../../../core/garden/service.js';
import { attemptStarted, operationSucceeded } from '../../../core/garden/shoot-operations.js';
import type { Shoot } from '../../../core/model/shoot.js';

export const T0 = new Date('2025-01-01T00:00:00.000Z');

/** A clock that stands still until a test moves it. */
export class ManualClock implements Clock {
  constructor(private current: Date = T0) {}
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/** Ids uuid-1, uuid-2, ... in order. */
export class SequentialIds implements IdSource {
  private next = 0;
  uuid(): string {
    this.next += 1;
    return `uuid-${this.next}`;
  }
}

export type RepositoryMethod = keyof GardenRepository;
export type Interference = Partial<
  Record<RepositoryMethod, (call: number, inner: MemoryGardenRepository) => Promise<unknown> | unknown>
>;

export interface Garden {
  repo: MemoryGardenRepository;
  service: GardenService;
  clock: ManualClock;
  ids: SequentialIds;
  /** How often the service called each repository method. */
  calls: Partial<Record<RepositoryMethod, number>>;
}

/**
 * A garden service on the memory repository with a manual clock and sequential ids. `before[method]`
 * runs before the n-th call (from 1) of that method reaches the repository, so that a test can slip a
 * concurrent write in, or throw to fail the call.
 */
export function garden(options: { before?: Interference } = {}): Garden {
  const clock = new ManualClock();
  const repo = new MemoryGardenRepository({ clock });
  const ids = new SequentialIds();
  const { repo: wrapped, calls } = interfering(repo, options.before ?? {});
  const service = new GardenService({ repository: wrapped, clock, ids });
  return { repo, service, clock, ids, calls };
}

function interfering(
  inner: MemoryGardenRepository,
  before: Interference,
): { repo: GardenRepository; calls: Garden['calls'] } {
  const calls: Garden['calls'] = {};
  const repo = new Proxy(inner, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      const method = prop as RepositoryMethod;
      return async (...args: unknown[]) => {
        const call = (calls[method] ?? 0) + 1;
        calls[method] = call;
        await before[method]?.(call, target);
        return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
  return { repo, calls };
}

type Json = Record<string, unknown>;

/** A valid `PUT /seeds/{name}` body (docs/design.md section 2), with overrides merged into spec. */
export function seedBody(overrides: { spec?: Json; metadata?: Json } = {}): Json {
  return {
    metadata: { labels: { env: 'prod' }, ...overrides.metadata },
    spec: {
      provider: { type: 'aws', region: 'eu-west-1', zones: ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'] },
      backup: { bucket: 'gl-backup-aws-eu1', region: 'eu-west-1' },
      networks: { nodes: '10.0.0.0/16', pods: '10.1.0.0/16', services: '10.2.0.0/16' },
      taints: [{ key: 'seed.gardener.cloud/protected' }],
      settings: { scheduling: { visible: true } },
      capacity: { shoots: 250 },
      workerPools: [{ name: 'cp', zones: ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'], minimum: 3, taints: [] }],
      ...overrides.spec,
    },
  };
}

/** A valid `PUT /projects/{p}/shoots/{n}` body, unscheduled unless spec.seedName is given. */
export function shootBody(overrides: { spec?: Json; metadata?: Json } = {}): Json {
  return {
    ...(overrides.metadata ? { metadata: overrides.metadata } : {}),
    spec: {
      provider: { type: 'aws' },
      region: 'eu-west-1',
      purpose: 'production',
      networking: { nodes: '10.250.0.0/16', pods: '100.96.0.0/11', services: '100.64.0.0/13' },
      controlPlane: { highAvailability: { failureTolerance: { type: 'zone' } } },
      ...overrides.spec,
    },
  };
}

/** The rejection of a promise, for assertions on its type and fields. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/**
 * The shoot's Create as its seed's agent answered it (command sent, Succeeded), the way the operate-shoot
 * state machine leaves it: for tests that need a placed shoot whose control plane exists.
 */
export async function createAnswered(repo: GardenRepository, project: string, name: string, now: Date): Promise<Shoot> {
  const shoot = (await repo.getShoot(project, name))!;
  return repo.updateShoot(
    operationSucceeded(attemptStarted(shoot, now), 'created', now),
    shoot.metadata.resourceVersion,
  );
}
