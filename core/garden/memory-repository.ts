import { ConflictError, NotFoundError } from '../errors.js';
import type { Seed } from '../model/seed.js';
import type { Shoot } from '../model/shoot.js';
import { hostsControlPlanes, SeedUnavailableError } from './errors.js';
import type { Page, PageRequest } from './page.js';
import { decodePageToken, encodePageToken, listIdentity, seedShootsListIdentity } from './page-token.js';
import type { GardenRepository } from './repository.js';
import { systemClock, type Clock } from './context.js';
import { seedWithLease, withoutLease, withoutReport, type SeedLease } from './seed-lease.js';

/** A stored seed: the document without its version and shoot count, which live beside it as in DynamoDB. */
interface SeedEntry {
  doc: Seed;
  rv: number;
  shoots: number;
}

interface ShootEntry {
  doc: Shoot;
  rv: number;
}

/** Everything a memory repository holds, as the API would return it. */
export interface GardenSnapshot {
  seeds: Seed[];
  shoots: Shoot[];
}

/**
 * The garden state in maps, with the semantics of `DynamoGardenRepository`: resourceVersions count
 * writes from 1, every racing write is conditional and fails into the same domain errors, a seed's
 * shoot count changes in the same step as the shoot that is placed on or removed from it, and lists
 * are sorted by name and paged with an opaque `continue` token.
 *
 * Each method does all its checks before its first change and never awaits in between, so that it is
 * atomic with respect to concurrent calls. Values are copied on the way in and out (through JSON, which
 * also drops `undefined` members as the DynamoDB marshaller does): no caller can change stored state.
 */
export class MemoryGardenRepository implements GardenRepository {
  private readonly seeds = new Map<string, SeedEntry>();
  private readonly shoots = new Map<string, ShootEntry>();
  private readonly leases = new Map<string, SeedLease>();
  private readonly clock: Clock;

  constructor(options: { clock?: Clock } = {}) {
    this.clock = options.clock ?? systemClock;
  }

  async getSeed(name: string, options: { controlPlanes?: boolean } = {}): Promise<Seed | undefined> {
    const entry = this.seeds.get(name);
    if (!entry) return undefined;
    const seed = this.seedOut(entry);
    return options.controlPlanes === false ? withoutReport(seed) : seed;
  }

  async listSeeds(page: PageRequest, options: { leases?: boolean; controlPlanes?: boolean } = {}): Promise<Page<Seed>> {
    return paginate([...this.seeds.entries()], page, listIdentity('seeds'), (entry) => {
      const seed = this.seedOut(entry);
      if (options.leases === false) return withoutLease(seed);
      return options.controlPlanes === false ? withoutReport(seed) : seed;
    });
  }

  async renewLease(lease: SeedLease): Promise<void> {
    const entry = this.seeds.get(lease.seed);
    if (!entry) throw new NotFoundError(`seed "${lease.seed}" not found`);
    if (entry.doc.status.identity !== lease.holderIdentity) {
      throw new ConflictError(
        `seed "${lease.seed}" has identity ${entry.doc.status.identity}, not ${lease.holderIdentity}`,
        { code: 'IdentityMismatch', field: 'identity' },
      );
    }
    this.leases.set(lease.seed, copy(lease));
  }

  async createSeed(seed: Seed): Promise<Seed> {
    const name = seed.metadata.name;
    const existing = this.seeds.get(name);
    if (existing)
      throw new ConflictError(`seed "${name}" already exists`, {
        code: 'AlreadyExists',
        current: this.seedOut(existing),
      });
    const entry: SeedEntry = { doc: copy(withoutLease(seed)), rv: 1, shoots: 0 };
    this.seeds.set(name, entry);
    return this.seedOut(entry);
  }

  async updateSeed(seed: Seed, expectedVersion: string): Promise<Seed> {
    const name = seed.metadata.name;
    const entry = this.seeds.get(name);
    if (!entry) throw new NotFoundError(`seed "${name}" not found`);
    if (entry.rv !== Number(expectedVersion)) throw versionConflict('seed', name, expectedVersion, this.seedOut(entry));
    // The shoot count is not an update's business: it changes only with shoot placement.
    entry.doc = copy(withoutLease(seed));
    entry.rv += 1;
    return this.seedOut(entry);
  }

  async deleteSeed(name: string, expectedVersion?: string): Promise<void> {
    const entry = this.seeds.get(name);
    if (!entry) throw new NotFoundError(`seed "${name}" not found`);
    if (entry.shoots > 0) {
      throw new ConflictError(
        `seed "${name}" hosts ${entry.shoots} shoot(s); migrate or delete them before deleting the seed`,
        {
          code: 'SeedHostsShoots',
          current: this.seedOut(entry),
        },
      );
    }
    const hosted = this.leases.get(name)?.controlPlanes.length ?? 0;
    if (hosted > 0) throw hostsControlPlanes(name, hosted, this.seedOut(entry));
    // As in DynamoDB, an empty expected version means "unconditional".
    if (expectedVersion && entry.rv !== Number(expectedVersion))
      throw versionConflict('seed', name, expectedVersion, this.seedOut(entry));
    this.seeds.delete(name);
    this.leases.delete(name);
  }

  async getShoot(project: string, name: string): Promise<Shoot | undefined> {
    const entry = this.shoots.get(shootId(project, name));
    return entry ? shootOut(entry) : undefined;
  }

  async listShoots(project: string, page: PageRequest): Promise<Page<Shoot>> {
    const inProject = [...this.shoots.values()].filter((e) => e.doc.metadata.project === project);
    return paginate(
      inProject.map((e) => [e.doc.metadata.name, e] as const),
      page,
      listIdentity('shoots', project),
      shootOut,
    );
  }

  /** Every shoot of every project, sorted by `<project>/<name>` as DynamoDB's kind index sorts them. */
  async listAllShoots(page: PageRequest): Promise<Page<Shoot>> {
    return paginate([...this.shoots.entries()], page, listIdentity('shoots'), shootOut);
  }

  async listShootsOnSeed(seedName: string, page: PageRequest): Promise<Page<Shoot>> {
    const placed = [...this.shoots.entries()].filter(([, e]) => e.doc.status.seedName === seedName);
    return paginate(placed, page, seedShootsListIdentity(seedName), shootOut);
  }

  async createShoot(shoot: Shoot): Promise<Shoot> {
    const { project, name } = shoot.metadata;
    const id = shootId(project, name);
    if (this.shoots.has(id)) throw new ConflictError(`shoot "${id}" already exists`, { code: 'AlreadyExists' });
    const seedName = shoot.status.seedName;
    const seed = seedName ? this.admitting(seedName) : undefined;
    const entry: ShootEntry = { doc: copy(shoot), rv: 1 };
    this.shoots.set(id, entry);
    if (seed) seed.shoots += 1;
    return shootOut(entry);
  }

  async updateShoot(shoot: Shoot, expectedVersion: string): Promise<Shoot> {
    const id = shootId(shoot.metadata.project, shoot.metadata.name);
    const entry = this.shoots.get(id);
    if (!entry) throw new NotFoundError(`shoot "${id}" not found`);
    // Placement is not an update's business: the stored seed must be the one the caller saw.
    const samePlacement = (entry.doc.status.seedName || undefined) === (shoot.status.seedName || undefined);
    if (entry.rv !== Number(expectedVersion) || !samePlacement)
      throw versionConflict('shoot', id, expectedVersion, shootOut(entry));
    entry.doc = copy(shoot);
    entry.rv += 1;
    return shootOut(entry);
  }

  /** The seed a shoot is created, moved or placed onto: it exists, is not being deleted and has room (as the Dynamo transaction's condition). */
  private admitting(name: string) {
    const to = this.seeds.get(name);
    if (!to) throw new SeedUnavailableError(`seed "${name}" does not exist`, name, 'NotFound');
    if (to.doc.metadata.deletionTimestamp)
      throw new SeedUnavailableError(`seed "${name}" is being deleted`, name, 'Deleting');
    const capacity = to.doc.spec.capacity?.shoots;
    if (capacity !== undefined && to.shoots >= capacity) {
      throw new SeedUnavailableError(
        `seed "${name}" is full: it hosts ${to.shoots} of ${capacity} shoots`,
        name,
        'Full',
      );
    }
    return to;
  }

  async moveShoot(
    shoot: Shoot,
    options: { fromSeed: string; toSeed: string; expectedVersion: string },
  ): Promise<Shoot> {
    const id = shootId(shoot.metadata.project, shoot.metadata.name);
    const entry = this.shoots.get(id);
    if (!entry) throw new NotFoundError(`shoot "${id}" not found`);
    if (entry.rv !== Number(options.expectedVersion) || entry.doc.status.seedName !== options.fromSeed) {
      throw versionConflict('shoot', id, options.expectedVersion, shootOut(entry));
    }
    const from = this.seeds.get(options.fromSeed);
    const to = this.admitting(options.toSeed);
    if (!from || from.shoots <= 0)
      throw new ConflictError(
        `seed "${options.fromSeed}" does not count shoot "${id}"; the garden state is inconsistent`,
        { code: 'Inconsistent' },
      );
    from.shoots -= 1;
    to.shoots += 1;
    entry.doc = copy(shoot);
    entry.rv += 1;
    return shootOut(entry);
  }

  async placeShoot(shoot: Shoot, options: { toSeed: string; expectedVersion: string }): Promise<Shoot> {
    const id = shootId(shoot.metadata.project, shoot.metadata.name);
    const entry = this.shoots.get(id);
    if (!entry) throw new NotFoundError(`shoot "${id}" not found`);
    if (entry.rv !== Number(options.expectedVersion) || entry.doc.status.seedName !== undefined) {
      throw versionConflict('shoot', id, options.expectedVersion, shootOut(entry));
    }
    const to = this.admitting(options.toSeed);
    to.shoots += 1;
    entry.doc = copy(shoot);
    entry.rv += 1;
    return shootOut(entry);
  }

  async deleteShoot(project: string, name: string, expectedVersion?: string): Promise<void> {
    const id = shootId(project, name);
    const entry = this.shoots.get(id);
    if (!entry) throw new NotFoundError(`shoot "${id}" not found`);
    if (expectedVersion !== undefined && Number(expectedVersion) !== entry.rv)
      throw versionConflict('shoot', id, expectedVersion, shootOut(entry));
    const seedName = entry.doc.status.seedName;
    if (seedName) {
      const seed = this.seeds.get(seedName);
      if (!seed || seed.shoots <= 0) {
        throw new ConflictError(`seed "${seedName}" does not count shoot "${id}"; the garden state is inconsistent`, {
          code: 'Inconsistent',
        });
      }
      seed.shoots -= 1;
    }
    this.shoots.delete(id);
  }

  private seedOut(entry: SeedEntry): Seed {
    const seed = copy(entry.doc);
    const stored = {
      ...seed,
      metadata: { ...seed.metadata, resourceVersion: String(entry.rv) },
      status: { ...seed.status, shoots: entry.shoots },
    };
    return seedWithLease(stored, this.leases.get(seed.metadata.name), this.clock.now());
  }

  /** Every stored seed and shoot, sorted, as the API would return them: for tests that a request wrote nothing. */
  snapshot(): GardenSnapshot {
    return {
      seeds: [...this.seeds.keys()].sort().map((k) => this.seedOut(this.seeds.get(k)!)),
      shoots: [...this.shoots.keys()].sort().map((k) => shootOut(this.shoots.get(k)!)),
    };
  }
}

/** A repository whose every call fails with the given error: for fault tests (throttling, network loss). */
export class FailingGardenRepository implements GardenRepository {
  constructor(private readonly error: Error = new Error('garden repository unavailable')) {}

  async getSeed(): Promise<Seed | undefined> {
    throw this.error;
  }
  async listSeeds(): Promise<Page<Seed>> {
    throw this.error;
  }
  async createSeed(): Promise<Seed> {
    throw this.error;
  }
  async updateSeed(): Promise<Seed> {
    throw this.error;
  }
  async deleteSeed(): Promise<void> {
    throw this.error;
  }
  async renewLease(): Promise<void> {
    throw this.error;
  }
  async getShoot(): Promise<Shoot | undefined> {
    throw this.error;
  }
  async listShoots(): Promise<Page<Shoot>> {
    throw this.error;
  }
  async listAllShoots(): Promise<Page<Shoot>> {
    throw this.error;
  }
  async listShootsOnSeed(): Promise<Page<Shoot>> {
    throw this.error;
  }
  async createShoot(): Promise<Shoot> {
    throw this.error;
  }
  async updateShoot(): Promise<Shoot> {
    throw this.error;
  }
  async moveShoot(): Promise<Shoot> {
    throw this.error;
  }
  async placeShoot(): Promise<Shoot> {
    throw this.error;
  }
  async deleteShoot(): Promise<void> {
    throw this.error;
  }
}

function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function shootOut(entry: ShootEntry): Shoot {
  const shoot = copy(entry.doc);
  return { ...shoot, metadata: { ...shoot.metadata, resourceVersion: String(entry.rv) } };
}

function shootId(project: string, name: string): string {
  return `${project}/${name}`;
}

function versionConflict<T>(kind: string, name: string, expected: string, current: T): ConflictError<T> {
  return new ConflictError(
    `${kind} "${name}" has been modified since resourceVersion ${expected}; read it again and retry`,
    {
      field: 'metadata.resourceVersion',
      current,
    },
  );
}

/** Sorts by key, resumes after the key in the token, and hands out a token only when more items follow. */
function paginate<E, T>(
  entries: (readonly [string, E])[],
  page: PageRequest,
  list: string,
  out: (entry: E) => T,
): Page<T> {
  const after = decodePageToken(page.continue, list);
  const sorted = entries
    .filter(([key]) => after === undefined || key > after)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const taken = sorted.slice(0, Math.max(0, page.limit));
  const last = taken.at(-1);
  const more = sorted.length > taken.length && last !== undefined;
  return {
    items: taken.map(([, e]) => out(e)),
    ...(more ? { continue: encodePageToken({ list, after: last[0] }) } : {}),
  };
}
