import type { Seed } from '../model/seed.js';
import type { SeedLease } from './seed-lease.js';
import type { Shoot } from '../model/shoot.js';
import type { Page, PageRequest } from './page.js';

/**
 * The garden state seam. Every write that can race is conditional and fails with a domain error:
 * `ConflictError` (carrying the current record when the store returns it) or `NotFoundError`.
 */
export interface GardenRepository {
  /**
   * The seed with its lease joined in. `controlPlanes: false`: without its agent's report of the control
   * planes it hosts (`status.controlPlanes` absent), for a caller that needs its health or identity alone
   * (a heartbeat, an admission): a busy seed's report is hundreds of KB.
   */
  getSeed(name: string, options?: { controlPlanes?: boolean }): Promise<Seed | undefined>;
  /**
   * Seeds by name, paged, each with its lease joined in. `leases: false`: without it (no lease is read: the
   * stored resource and its shoot count, for a caller that needs neither health nor control planes).
   * `controlPlanes: false`: the lease without the agent's report of its control planes (`status.controlPlanes`
   * absent), which is most of a busy seed's bytes: the scheduler and the lease monitor need only its health.
   */
  listSeeds(page: PageRequest, options?: { leases?: boolean; controlPlanes?: boolean }): Promise<Page<Seed>>;
  /** Fails with ConflictError when the seed exists. */
  createSeed(seed: Seed): Promise<Seed>;
  /** Writes spec, metadata and status; fails with ConflictError unless the stored version is `expectedVersion`. */
  updateSeed(seed: Seed, expectedVersion: string): Promise<Seed>;
  /**
   * Fails with ConflictError while the seed hosts shoots, while its agent reports control planes it
   * hosts (code `SeedHostsControlPlanes`), or when the version does not match. Its lease goes with it.
   */
  deleteSeed(name: string, expectedVersion?: string): Promise<void>;
  /**
   * Renews the seed's lease (its agent's heartbeat), conditional on the seed existing with the lease's
   * holder identity; never writes the Seed resource. Seeds are read with their lease joined in
   * (`seedWithLease`, at the repository's clock).
   */
  renewLease(lease: SeedLease): Promise<void>;

  getShoot(project: string, name: string): Promise<Shoot | undefined>;
  listShoots(project: string, page: PageRequest): Promise<Page<Shoot>>;
  /** Every shoot of every project, sorted by `<project>/<name>`, paged: for fleet-wide sweeps such as the ownership audit. */
  listAllShoots(page: PageRequest): Promise<Page<Shoot>>;
  /**
   * The shoots placed on one seed (`status.seedName`), sorted by `<project>/<name>`, paged: what a job that works
   * seed by seed reads (the watchdog's partitions, the evacuation of a seed) instead of the whole fleet.
   */
  listShootsOnSeed(seedName: string, page: PageRequest): Promise<Page<Shoot>>;
  /**
   * Creates the shoot; when it names a seed (`status.seedName`), counts it on that seed in the same
   * atomic write, failing with SeedUnavailableError when the seed is missing, deleting or full.
   */
  createShoot(shoot: Shoot): Promise<Shoot>;
  /** Fails with ConflictError unless the stored version is `expectedVersion`; does not change placement. */
  updateShoot(shoot: Shoot, expectedVersion: string): Promise<Shoot>;
  /**
   * Moves a shoot to another seed at the end of a migration, in one atomic write: the shoot (with its new
   * `status.seedName`) conditional on `expectedVersion` and its stored seed being `fromSeed`, the count on
   * `fromSeed` released and the count on `toSeed` taken within its capacity (SeedUnavailableError when full).
   */
  moveShoot(shoot: Shoot, options: { fromSeed: string; toSeed: string; expectedVersion: string }): Promise<Shoot>;
  /**
   * Places a shoot that had no seed (a pending shoot the scheduler placed later), in one atomic write: the
   * shoot conditional on `expectedVersion` and on having no seed stored, the count on `toSeed` taken within
   * its capacity (SeedUnavailableError when full, missing or deleting).
   */
  placeShoot(shoot: Shoot, options: { toSeed: string; expectedVersion: string }): Promise<Shoot>;
  /** Deletes the shoot and releases its place on its seed in one atomic write. */
  deleteShoot(project: string, name: string, expectedVersion?: string): Promise<void>;
}
