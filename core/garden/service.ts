import { AdmissionError, ConflictError, NotFoundError, UnavailableError, ValidationError } from '../errors.js';
import { heartbeatInput, seedInput, type HeartbeatInput, type HostedControlPlane, type Seed } from '../model/seed.js';
import { dryRunRequest, shootInput, shootMergePatch, type Shoot } from '../model/shoot.js';
import { assertOutboundUrl, STRICT_OUTBOUND, type OutboundPolicy } from '../net/outbound-url.js';
import {
  type Clock,
  type EventSink,
  type IdSource,
  type SeedProvisioner,
  discardEvents,
  noProvisioning,
  randomIds,
  systemClock,
} from './context.js';
import { applyMergePatch, isPlainObject } from './merge-patch.js';
import type { Page, PageRequest } from './page.js';
import type { GardenRepository } from './repository.js';
import { newSeed, updatedSeed } from './seed-resource.js';
import { DEFAULT_LEASE_DURATION_SECONDS, leaseExpired, renewedLease, seedWithLease } from './seed-lease.js';
import { newShoot, updatedShoot } from './shoot-resource.js';
import { parseInput } from './validate.js';
import {
  admitOnSeed,
  assertSeedExists,
  HEALTH_ONLY,
  listAllSeeds,
  scheduleAndCreate,
  type SchedulingPolicy,
} from './placement.js';
import { schedule, type ScheduleResult } from '../scheduling/schedule.js';
import { controlPlaneLayout, layoutObjects } from '../ha/layout.js';
import { releasable, releaseCandidates, type Release } from './leftovers.js';
import { assertDeletable, deleting, migrationRunning, operationForUpdate, withOperation } from './shoot-operations.js';

export interface GardenServiceOptions {
  repository: GardenRepository;
  clock?: Clock;
  ids?: IdSource;
  events?: EventSink;
  /** Creates a new seed's command queue; none in unit tests. */
  provisioner?: SeedProvisioner;
  /**
   * How often a write without a client-supplied resourceVersion re-reads and retries after a concurrent
   * change (default 60, with jittered backoff); past it the write fails with UnavailableError (503), never 409.
   */
  maxUnconditionalRetries?: number;
  /** Waits between such retries; tests pass one that does not sleep. */
  pause?: (ms: number) => Promise<void>;
  /** Which URLs a heartbeat may name for the garden to fetch (docs/design.md section 12). Default: https, public addresses only. */
  outbound?: OutboundPolicy;
  /** Region strategy and distances of the scheduler (Gardener's scheduler configuration). */
  scheduling?: SchedulingPolicy;
  /** How long a heartbeat holds when the agent does not say (three of its intervals). Default 30 s. */
  leaseDurationSeconds?: number;
}

/** The HA layout of a shoot's control plane, as the API returns it. */
export interface ControlPlaneLayoutView {
  kind: 'ControlPlaneLayout';
  technicalID: string;
  seedName: string;
  failureTolerance: string;
  zones: string[];
  zonePinned: boolean;
  items: unknown[];
  /** The etcd as the seed's agent last reported it: its members (zone, role, serving) and leader. */
  etcd?: { leader?: string; members: NonNullable<HostedControlPlane['etcdMembers']> };
}

/** What a heartbeat answers: the seed as renewed, and the leftovers its agent may remove. */
export interface HeartbeatAnswer {
  seed: Seed;
  release: Release[];
}

/** What a shoot deletion did: removed at once (never placed), or requested from its seed. */
export type ShootDeletion = { removed: true } | { removed: false; shoot: Shoot };

export interface Written<T> {
  resource: T;
  created: boolean;
}

/**
 * The garden's resource logic: seeds, shoots and heartbeats. Validation, admission and optimistic
 * concurrency live here; the repository makes each write atomic and conditional.
 */
export class GardenService {
  private readonly repo: GardenRepository;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly events: EventSink;
  private readonly retries: number;
  private readonly policy: SchedulingPolicy;
  private readonly provisioner: SeedProvisioner;
  private readonly leaseDurationSeconds: number;
  private readonly pause: (ms: number) => Promise<void>;
  private readonly outbound: OutboundPolicy;

  constructor(options: GardenServiceOptions) {
    this.repo = options.repository;
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? randomIds;
    this.events = options.events ?? discardEvents;
    this.retries = options.maxUnconditionalRetries ?? 60;
    this.pause = options.pause ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.outbound = options.outbound ?? STRICT_OUTBOUND;
    this.policy = options.scheduling ?? {};
    this.provisioner = options.provisioner ?? noProvisioning;
    this.leaseDurationSeconds = options.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS;
  }

  async putSeed(name: string, body: unknown): Promise<Written<Seed>> {
    const input = parseInput(seedInput, body);
    const expected = input.metadata?.resourceVersion;
    return this.upsert({
      expected,
      uid: input.metadata?.uid,
      read: () => this.repo.getSeed(name),
      create: async () => {
        if (expected !== undefined)
          throw new NotFoundError(`seed "${name}" does not exist; omit metadata.resourceVersion to create it`);
        const fresh = newSeed(name, input, { now: this.clock.now(), uuid: this.ids.uuid() });
        // The queue comes first: a stored seed always has one, and a failure here writes nothing.
        const { commandQueueUrl } = await this.provisioner.provision(name);
        const seed = await this.repo.createSeed(
          commandQueueUrl ? { ...fresh, status: { ...fresh.status, commandQueueUrl } } : fresh,
        );
        await this.events.publish('SeedRegistered', { seed: name, identity: seed.status.identity });
        return seed;
      },
      update: async (current) => {
        const next = updatedSeed(current, input);
        return sameResource(current, next) ? current : this.repo.updateSeed(next, current.metadata.resourceVersion);
      },
    });
  }

  async getSeed(name: string, options: { controlPlanes?: boolean } = {}): Promise<Seed> {
    const seed = await this.repo.getSeed(name, options);
    if (!seed) throw new NotFoundError(`seed "${name}" not found`);
    return seed;
  }

  listSeeds(page: PageRequest): Promise<Page<Seed>> {
    return this.repo.listSeeds(page);
  }

  async deleteSeed(name: string, expectedVersion?: string): Promise<void> {
    await this.getSeed(name);
    await this.repo.deleteSeed(name, expectedVersion);
    await this.events.publish('SeedDeleted', { seed: name });
    try {
      await this.provisioner.deprovision(name);
    } catch (error) {
      // The seed is gone; a queue left behind is harmless (a new registration of the name reuses it), so
      // the deletion stands and operators see the leftover on the bus.
      await this.events.publish('SeedDeprovisionFailed', {
        seed: name,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /**
   * The seed agent's heartbeat renews the seed's lease with what the agent reports; the Seed resource
   * itself is not written (its resourceVersion stays), so operators' updates never race heartbeats.
   */
  async heartbeat(name: string, body: unknown): Promise<HeartbeatAnswer> {
    const input = parseInput(heartbeatInput, body);
    input.controlPlanes?.forEach((cp, i) => {
      if (cp.externalUrl !== undefined)
        assertOutboundUrl(cp.externalUrl, this.outbound, `controlPlanes.${i}.externalUrl`);
    });
    // Identity and lease are all a heartbeat reads: the report it replaces is most of a busy seed's bytes.
    const current = await this.getSeed(name, HEALTH_ONLY);
    if (input.identity !== undefined && input.identity !== current.status.identity) {
      throw new ConflictError(
        `heartbeat identity "${input.identity}" is not the identity of seed "${name}" (${current.status.identity}); the agent belongs to an earlier registration`,
        { code: 'IdentityMismatch', field: 'identity' },
      );
    }
    const now = this.clock.now();
    const lease = renewedLease({
      seed: current,
      heartbeat: input,
      now,
      defaultDurationSeconds: this.leaseDurationSeconds,
    });
    await this.repo.renewLease(lease);
    const seed = seedWithLease(current, lease, now);
    if (leaseExpired(current, now))
      await this.events.publish('SeedReady', { seed: name, identity: current.status.identity });
    const release = await this.leftovers(name, input.controlPlanes ?? []);
    for (const r of release)
      await this.events.publish('LeftoverReleased', { seed: name, technicalID: r.technicalID, reason: r.reason });
    return { seed, release };
  }

  private async leftovers(seed: string, planes: NonNullable<HeartbeatInput['controlPlanes']>): Promise<Release[]> {
    const candidates = releaseCandidates(planes);
    if (candidates.length === 0) return [];
    const shoots = new Map<string, Shoot | undefined>();
    for (const plane of candidates)
      shoots.set(plane.technicalID, await this.repo.getShoot(plane.shoot!.project, plane.shoot!.name));
    return releasable({ seed, planes: candidates, shoots });
  }

  /** Every project's shoots (`-A`), sorted by project and name. */
  listAllShoots(page: PageRequest): Promise<Page<Shoot>> {
    return this.repo.listAllShoots(page);
  }

  async putShoot(project: string, name: string, body: unknown): Promise<Written<Shoot>> {
    const input = parseInput(shootInput, body);
    const expected = input.metadata?.resourceVersion;
    return this.upsert({
      expected,
      uid: input.metadata?.uid,
      read: () => this.repo.getShoot(project, name),
      create: async () => {
        if (expected !== undefined)
          throw new NotFoundError(
            `shoot "${project}/${name}" does not exist; omit metadata.resourceVersion to create it`,
          );
        return this.createShoot(newShoot(project, name, input, { now: this.clock.now(), uuid: this.ids.uuid() }));
      },
      update: (current) => this.updateShoot(current, updatedShoot(current, input)),
    });
  }

  /** With `spec.seedName`, admitted against that seed; without, placed by the scheduler. */
  private async createShoot(shoot: Shoot): Promise<Shoot> {
    const { project, name } = shoot.metadata;
    const seedName = shoot.spec.seedName;
    if (seedName) {
      const seed = await this.repo.getSeed(seedName, HEALTH_ONLY);
      assertSeedExists(seed, seedName);
      admitOnSeed({ shoot, seed });
      const created = await this.repo.createShoot(shoot);
      await this.events.publish('ShootCreated', { project, shoot: name, seedName });
      return created;
    }
    const { shoot: created, result } = await scheduleAndCreate({
      repo: this.repo,
      shoot,
      policy: this.policy,
      now: this.clock.now(),
    });
    await this.events.publish('ShootCreated', { project, shoot: name, seedName: created.status.seedName ?? null });
    await this.events.publish(created.status.seedName ? 'ShootScheduled' : 'ShootUnschedulable', {
      project,
      shoot: name,
      seedName: created.status.seedName ?? null,
      summary: result.summary,
    });
    return created;
  }

  private async updateShoot(current: Shoot, next: Shoot): Promise<Shoot> {
    // Nothing changes: nothing is written, and the resourceVersion stays (Kubernetes does the same).
    if (sameResource(current, next)) return current;
    const seedName = current.status.seedName;
    const seed = seedName ? await this.repo.getSeed(seedName, HEALTH_ONLY) : undefined;
    admitOnSeed({ shoot: next, previous: current, ...(seed ? { seed } : {}) });
    const { project, name } = current.metadata;
    if (deleting(current) && !sameSpec(current, next)) {
      throw new ConflictError(`shoot "${project}/${name}" is being deleted; its spec no longer changes`, {
        code: 'ShootDeleting',
      });
    }
    const type = operationForUpdate(current, next);
    if (type === undefined) return this.repo.updateShoot(next, current.metadata.resourceVersion);
    if (migrationRunning(current)) {
      throw new ConflictError(
        `shoot "${project}/${name}" is being migrated; change what its control plane depends on after the migration ends`,
        { code: 'MigrationInProgress' },
      );
    }
    const id = this.ids.uuid();
    const written = await this.repo.updateShoot(
      withOperation(next, { type, id, now: this.clock.now() }),
      current.metadata.resourceVersion,
    );
    await this.events.publish('ShootOperationRequested', {
      project,
      shoot: name,
      operationId: id,
      type,
      seedName: seedName ?? null,
    });
    return written;
  }

  /** The scheduler's decision for a shoot that need not exist: ranked candidates and every rejection. */
  async dryRunSchedule(body: unknown): Promise<ScheduleResult> {
    const { shoot } = parseInput(dryRunRequest, body);
    return schedule({ shoot, seeds: await listAllSeeds(this.repo, HEALTH_ONLY), ...this.policy });
  }

  async controlPlane(project: string, name: string): Promise<ControlPlaneLayoutView> {
    const shoot = await this.getShoot(project, name);
    const seedName = shoot.status.seedName;
    if (!seedName) {
      throw new ConflictError(`shoot "${project}/${name}" is not scheduled yet, so its control plane has no layout`, {
        code: 'NotScheduled',
      });
    }
    const seed = await this.getSeed(seedName);
    const layout = controlPlaneLayout({ shoot, seed });
    const { components: _components, ...summary } = layout;
    const reported = seed.status.controlPlanes?.find((p) => p.technicalID === layout.technicalID);
    const etcd = reported?.etcdMembers
      ? { ...(reported.etcdLeader ? { leader: reported.etcdLeader } : {}), members: reported.etcdMembers }
      : undefined;
    return { kind: 'ControlPlaneLayout', ...summary, items: layoutObjects(layout), ...(etcd ? { etcd } : {}) };
  }

  /**
   * JSON merge patch of metadata (labels, annotations, resourceVersion, uid) and spec. The patch itself is
   * validated first against `shootMergePatch` (the schema the OpenAPI document shows), then the merged
   * shoot against the shoot schema. A patch that changes nothing writes nothing.
   */
  async patchShoot(project: string, name: string, body: unknown): Promise<Shoot> {
    if (!isPlainObject(body)) throw new ValidationError('a merge patch must be a JSON object');
    const patch = parseInput(shootMergePatch, body);
    const patchVersion = patch.metadata?.resourceVersion ?? undefined;
    const write = async () => {
      const current = await this.getShoot(project, name);
      const base = {
        metadata: pickDefined({ labels: current.metadata.labels, annotations: current.metadata.annotations }),
        spec: current.spec,
      };
      const merged = applyMergePatch(base, body);
      const input = parseMerged(merged);
      assertUid(current, input.metadata?.uid);
      const expected = input.metadata?.resourceVersion;
      if (expected !== undefined && expected !== current.metadata.resourceVersion)
        throw staleVersion('shoot', `${project}/${name}`, expected, current);
      return this.updateShoot(current, updatedShoot(current, input));
    };
    return patchVersion === undefined ? this.unconditionally(`shoot "${project}/${name}"`, write) : write();
  }

  async getShoot(project: string, name: string): Promise<Shoot> {
    const shoot = await this.repo.getShoot(project, name);
    if (!shoot) throw new NotFoundError(`shoot "${project}/${name}" not found`);
    return shoot;
  }

  listShoots(project: string, page: PageRequest): Promise<Page<Shoot>> {
    return this.repo.listShoots(project, page);
  }

  /**
   * Gardener's deletion: refused without the confirmation annotation (422) and during a migration (409).
   * A shoot never placed goes at once; a placed one gets its deletionTimestamp and a Delete operation on
   * its seed, and goes (freeing its place) when the seed's agent has removed its control plane. Asking
   * again while it is being deleted changes nothing.
   */
  async deleteShoot(project: string, name: string, expectedVersion?: string): Promise<ShootDeletion> {
    const remove = async (): Promise<{ deletion: ShootDeletion; requested?: Shoot }> => {
      const shoot = await this.getShoot(project, name);
      if (expectedVersion !== undefined && expectedVersion !== shoot.metadata.resourceVersion)
        throw staleVersion('shoot', `${project}/${name}`, expectedVersion, shoot);
      assertDeletable(shoot);
      if (deleting(shoot)) return { deletion: { removed: false, shoot } };
      if (!shoot.status.seedName) {
        await this.repo.deleteShoot(project, name, shoot.metadata.resourceVersion);
        return { deletion: { removed: true } };
      }
      const now = this.clock.now();
      const marked: Shoot = { ...shoot, metadata: { ...shoot.metadata, deletionTimestamp: now.toISOString() } };
      const requested = await this.repo.updateShoot(
        withOperation(marked, { type: 'Delete', id: `delete-${shoot.metadata.uid}`, now }),
        shoot.metadata.resourceVersion,
      );
      return { deletion: { removed: false, shoot: requested }, requested };
    };
    // Without a precondition a concurrent update is no reason to refuse: read again and delete.
    const { deletion, requested } =
      expectedVersion === undefined ? await this.unconditionally(`shoot "${project}/${name}"`, remove) : await remove();
    if (deletion.removed) await this.events.publish('ShootDeleted', { project, shoot: name, seedName: null });
    if (requested) {
      await this.events.publish('ShootOperationRequested', {
        project,
        shoot: name,
        operationId: requested.status.operation!.id,
        type: 'Delete',
        seedName: requested.status.seedName ?? null,
      });
    }
    return deletion;
  }

  /**
   * Create when absent, else update. With a client-supplied resourceVersion the update is conditional
   * on it (409 on mismatch); without one, a concurrent change is re-read and retried, as `kubectl
   * replace` without a version would succeed.
   */
  private async upsert<T extends Seed | Shoot>(op: {
    expected: string | undefined;
    uid: string | undefined;
    read: () => Promise<T | undefined>;
    create: () => Promise<T>;
    update: (current: T) => Promise<T>;
  }): Promise<Written<T>> {
    const write = async (): Promise<Written<T>> => {
      const current = await op.read();
      if (!current) {
        if (op.uid !== undefined) throw uidMismatch(op.uid, undefined);
        return { resource: await op.create(), created: true };
      }
      assertUid(current, op.uid);
      if (op.expected !== undefined && op.expected !== current.metadata.resourceVersion) {
        throw staleVersion(current.kind.toLowerCase(), current.metadata.name, op.expected, current);
      }
      return { resource: await op.update(current), created: false };
    };
    return op.expected === undefined ? this.unconditionally('the resource', write) : write();
  }

  /**
   * Runs a read-modify-write that carries no client precondition until it wins against concurrent
   * writers: a lost race (`Conflict`, or `AlreadyExists` for a create) re-reads and retries after a
   * jittered pause. The client never sees a 409 for a version it did not send; a write that keeps
   * losing past the budget is a 503 to retry.
   */
  private async unconditionally<T>(what: string, write: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        const lostRace =
          error instanceof ConflictError && (error.code === 'Conflict' || error.code === 'AlreadyExists');
        if (!lostRace) throw error;
        if (attempt >= this.retries) {
          throw new UnavailableError(
            `${what} kept changing while it was written (${attempt + 1} attempts); retry the request`,
            { code: 'TooManyConflicts', cause: error },
          );
        }
        // Full jitter, growing to a second: many writers of one item spread out instead of colliding again.
        await this.pause(Math.random() * Math.min(1_000, 10 * 2 ** Math.min(attempt, 7)));
      }
    }
  }
}

function staleVersion(kind: string, name: string, expected: string, current: Seed | Shoot): ConflictError {
  return new ConflictError(
    `${kind} "${name}" has been modified: resourceVersion is ${current.metadata.resourceVersion}, not ${expected}; read it again and retry`,
    { field: 'metadata.resourceVersion', current },
  );
}

/**
 * The shoot a valid patch produces, validated as a shoot. A result that is not a valid shoot (an object
 * patched in that lacks a required member, say) is 422, as Kubernetes answers a patch whose result fails
 * validation; a malformed patch itself was a 400 already.
 */
function parseMerged(merged: unknown) {
  try {
    return parseInput(shootInput, merged);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new AdmissionError(`the patched shoot is not valid: ${error.message}`, {
      ...(error.field ? { field: error.field } : {}),
      code: 'Invalid',
      cause: error,
    });
  }
}

function assertUid(current: Seed | Shoot, uid: string | undefined): void {
  if (uid !== undefined && uid !== current.metadata.uid) throw uidMismatch(uid, current);
}

/** Kubernetes' UID precondition: the object sent is not the one stored (it was deleted and created anew). */
function uidMismatch(uid: string, current: Seed | Shoot | undefined): ConflictError {
  return new ConflictError(
    `precondition failed: metadata.uid is ${uid}, but the stored object's is ${current ? current.metadata.uid : 'absent (it does not exist)'}`,
    { code: 'UidMismatch', field: 'metadata.uid', current },
  );
}

function sameSpec(a: Shoot, b: Shoot): boolean {
  return canonical(a.spec) === canonical(b.spec);
}

/** Whether an update would store exactly what is stored (member order aside). */
function sameResource(a: Seed | Shoot, b: Seed | Shoot): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isPlainObject(v)
      ? Object.fromEntries(
          Object.entries(v)
            .filter(([, x]) => x !== undefined)
            .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)),
        )
      : v,
  );
}

function pickDefined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
