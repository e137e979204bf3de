import { describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/errors.js';
import { SeedUnavailableError } from '../../../core/garden/errors.js';
import { FailingGardenRepository, MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import type { GardenRepository } from '../../../core/garden/repository.js';
import { newSeed } from '../../../core/garden/seed-resource.js';
import { newShoot } from '../../../core/garden/shoot-resource.js';
import { parseInput } from '../../../core/garden/validate.js';
import { seedInput, type Seed } from '../../../core/model/seed.js';
import { shootInput, type Shoot } from '../../../core/model/shoot.js';
import { T0, rejection, seedBody, shootBody } from './builders.js';

function seed(name: string, capacity?: number): Seed {
  const body = seedBody({ spec: { capacity: capacity === undefined ? undefined : { shoots: capacity } } });
  return newSeed(name, parseInput(seedInput, JSON.parse(JSON.stringify(body))), { now: T0, uuid: `u-${name}` });
}

function shoot(project: string, name: string, seedName?: string): Shoot {
  return newShoot(project, name, parseInput(shootInput, shootBody({ spec: seedName ? { seedName } : {} })), {
    now: T0,
    uuid: `u-${name}`,
  });
}

async function conflict(promise: Promise<unknown>, code: string): Promise<ConflictError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(ConflictError);
  expect((error as ConflictError).code).toBe(code);
  return error as ConflictError;
}

async function unavailable(promise: Promise<unknown>, reason: SeedUnavailableError['reason']): Promise<void> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(SeedUnavailableError);
  expect(error).toMatchObject({ reason, code: `Seed${reason}`, field: 'spec.seedName' });
}

describe('MemoryGardenRepository seeds', () => {
  it('creates a seed at resourceVersion 1 with no shoots, whatever the input says', async () => {
    // Prepare
    const repo = new MemoryGardenRepository();
    const input = seed('aws-eu1');
    input.status.shoots = 7;
    // Act
    const created = await repo.createSeed(input);
    // Assess
    expect(created.metadata.resourceVersion).toBe('1');
    expect(created.status.shoots).toBe(0);
    expect(await repo.getSeed('aws-eu1')).toEqual(created);
  });

  it('refuses to create an existing seed with AlreadyExists and the current seed', async () => {
    const repo = new MemoryGardenRepository();
    const first = await repo.createSeed(seed('aws-eu1'));
    const error = await conflict(repo.createSeed(seed('aws-eu1', 3)), 'AlreadyExists');
    expect(error.current).toEqual(first);
  });

  it('increments the resourceVersion per update and keeps the shoot count', async () => {
    // Prepare
    const repo = new MemoryGardenRepository();
    await repo.createSeed(seed('aws-eu1'));
    await repo.createShoot(shoot('dev', 'api1', 'aws-eu1'));
    const current = (await repo.getSeed('aws-eu1'))!;
    // Act
    const once = await repo.updateSeed({ ...current, status: { ...current.status, shoots: 0 } }, '1');
    const twice = await repo.updateSeed(once, '2');
    // Assess
    expect([once.metadata.resourceVersion, twice.metadata.resourceVersion]).toEqual(['2', '3']);
    expect(twice.status.shoots).toBe(1);
  });

  it.each(['1', '3'])(
    'refuses an update expecting version %s of a seed at version 2, with the current seed',
    async (expected) => {
      // Prepare
      const repo = new MemoryGardenRepository();
      const created = await repo.createSeed(seed('aws-eu1'));
      const stored = await repo.updateSeed(created, '1');
      // Act
      const error = await conflict(
        repo.updateSeed({ ...stored, spec: { ...stored.spec, taints: [] } }, expected),
        'Conflict',
      );
      // Assess
      expect(error.field).toBe('metadata.resourceVersion');
      expect(error.current).toEqual(stored);
      expect(await repo.getSeed('aws-eu1')).toEqual(stored);
    },
  );

  it('reports an update of a missing seed as NotFound', async () => {
    await expect(new MemoryGardenRepository().updateSeed(seed('aws-eu1'), '1')).rejects.toBeInstanceOf(NotFoundError);
  });

  it.each<[string, string | undefined, string | undefined]>([
    ['unconditionally', undefined, undefined],
    ['with the current version', '1', undefined],
    ['with an empty version, read as none', '', undefined],
    ['with a stale version', '2', 'Conflict'],
  ])('deletes an empty seed %s', async (_name, expected, code) => {
    // Prepare
    const repo = new MemoryGardenRepository();
    await repo.createSeed(seed('aws-eu1'));
    // Act
    const result = repo.deleteSeed('aws-eu1', expected);
    // Assess
    if (code) {
      const error = await conflict(result, code);
      expect(error.field).toBe('metadata.resourceVersion');
      expect(await repo.getSeed('aws-eu1')).toBeDefined();
    } else {
      await result;
      expect(await repo.getSeed('aws-eu1')).toBeUndefined();
    }
  });

  it.each([undefined, '1', '9'])(
    'refuses to delete a seed hosting shoots (expected version %s) with SeedHostsShoots',
    async (expected) => {
      // Prepare
      const repo = new MemoryGardenRepository();
      await repo.createSeed(seed('aws-eu1'));
      await repo.createShoot(shoot('dev', 'api1', 'aws-eu1'));
      // Act
      const error = await conflict(repo.deleteSeed('aws-eu1', expected), 'SeedHostsShoots');
      // Assess
      expect((error.current as Seed).status.shoots).toBe(1);
      expect(await repo.getSeed('aws-eu1')).toBeDefined();
    },
  );

  it('reports deleting a missing seed as NotFound', async () => {
    await expect(new MemoryGardenRepository().deleteSeed('aws-eu1')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('MemoryGardenRepository shoots', () => {
  it('creates an unscheduled shoot at resourceVersion 1 and refuses a second one with AlreadyExists', async () => {
    const repo = new MemoryGardenRepository();
    const created = await repo.createShoot(shoot('dev', 'api1'));
    expect(created.metadata.resourceVersion).toBe('1');
    expect(await repo.getShoot('dev', 'api1')).toEqual(created);
    await conflict(repo.createShoot(shoot('dev', 'api1')), 'AlreadyExists');
  });

  it('counts a placed shoot on its seed and releases it on delete', async () => {
    // Prepare
    const repo = new MemoryGardenRepository();
    await repo.createSeed(seed('aws-eu1'));
    // Act
    await repo.createShoot(shoot('dev', 'api1', 'aws-eu1'));
    await repo.createShoot(shoot('dev', 'api2', 'aws-eu1'));
    await repo.createShoot(shoot('dev', 'api3'));
    const counted = (await repo.getSeed('aws-eu1'))!.status.shoots;
    await repo.deleteShoot('dev', 'api1');
    await repo.deleteShoot('dev', 'api3');
    // Assess
    expect(counted).toBe(2);
    expect((await repo.getSeed('aws-eu1'))!.status.shoots).toBe(1);
    expect(await repo.getShoot('dev', 'api1')).toBeUndefined();
  });

  it.each<[string, (repo: MemoryGardenRepository) => Promise<unknown>, SeedUnavailableError['reason']]>([
    ['is missing', async () => {}, 'NotFound'],
    [
      'has no room left',
      async (repo) => {
        await repo.createSeed(seed('aws-eu1', 1));
        await repo.createShoot(shoot('other', 'api1', 'aws-eu1'));
      },
      'Full',
    ],
    ['has a capacity of zero', (repo) => repo.createSeed(seed('aws-eu1', 0)), 'Full'],
    [
      'is being deleted',
      async (repo) => {
        const created = await repo.createSeed(seed('aws-eu1'));
        await repo.updateSeed(
          { ...created, metadata: { ...created.metadata, deletionTimestamp: T0.toISOString() } },
          '1',
        );
      },
      'Deleting',
    ],
  ])('refuses to place a shoot on a seed that %s, and writes nothing', async (_name, prepare, reason) => {
    // Prepare
    const repo = new MemoryGardenRepository();
    await prepare(repo);
    const before = repo.snapshot();
    // Act
    await unavailable(repo.createShoot(shoot('dev', 'api1', 'aws-eu1')), reason);
    // Assess
    expect(repo.snapshot()).toEqual(before);
  });

  it('reports an existing shoot before an unavailable seed', async () => {
    const repo = new MemoryGardenRepository();
    await repo.createShoot(shoot('dev', 'api1'));
    await conflict(repo.createShoot(shoot('dev', 'api1', 'aws-eu1')), 'AlreadyExists');
  });

  it('places exactly as many concurrent shoots as the seed has room for', async () => {
    // Prepare
    const repo = new MemoryGardenRepository();
    await repo.createSeed(seed('aws-eu1', 5));
    // Act
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => repo.createShoot(shoot('dev', `api${i}`, 'aws-eu1'))),
    );
    // Assess
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof SeedUnavailableError)).toHaveLength(15);
    expect((await repo.getSeed('aws-eu1'))!.status.shoots).toBe(5);
  });

  it('updates a shoot conditionally on its version and its placement', async () => {
    // Prepare
    const repo = new MemoryGardenRepository();
    await repo.createSeed(seed('aws-eu1'));
    await repo.createSeed(seed('aws-eu2'));
    const created = await repo.createShoot(shoot('dev', 'api1', 'aws-eu1'));
    const hibernated = { ...created, spec: { ...created.spec, hibernation: { enabled: true } } };
    // Act
    const updated = await repo.updateShoot(hibernated, '1');
    const stale = await conflict(repo.updateShoot(hibernated, '1'), 'Conflict');
    const moved = await conflict(
      repo.updateShoot({ ...updated, status: { ...updated.status, seedName: 'aws-eu2' } }, '2'),
      'Conflict',
    );
    const unplaced = await conflict(
      repo.updateShoot({ ...updated, status: { ...updated.status, seedName: undefined } }, '2'),
      'Conflict',
    );
    // Assess
    expect(updated.metadata.resourceVersion).toBe('2');
    expect(updated.spec.hibernation).toEqual({ enabled: true });
    for (const error of [stale, moved, unplaced]) expect(error.current).toEqual(updated);
    expect((await repo.getSeed('aws-eu1'))!.status.shoots).toBe(1);
    expect((await repo.getSeed('aws-eu2'))!.status.shoots).toBe(0);
  });

  it('reports an update of a missing shoot as NotFound', async () => {
    await expect(new MemoryGardenRepository().updateShoot(shoot('dev', 'api1'), '1')).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it.each<[string | undefined, string | undefined]>([
    [undefined, undefined],
    ['1', undefined],
    ['2', 'Conflict'],
    ['', 'Conflict'],
  ])('deletes a shoot expecting version %j: %s', async (expected, code) => {
    // Prepare
    const repo = new MemoryGardenRepository();
    await repo.createSeed(seed('aws-eu1'));
    await repo.createShoot(shoot('dev', 'api1', 'aws-eu1'));
    const before = repo.snapshot();
    // Act
    const result = repo.deleteShoot('dev', 'api1', expected);
    // Assess
    if (code) {
      await conflict(result, code);
      expect(repo.snapshot()).toEqual(before);
    } else {
      await result;
      expect(repo.snapshot().shoots).toEqual([]);
      expect((await repo.getSeed('aws-eu1'))!.status.shoots).toBe(0);
    }
  });

  it('reports deleting a missing shoot as NotFound', async () => {
    await expect(new MemoryGardenRepository().deleteShoot('dev', 'api1')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('MemoryGardenRepository lists', () => {
  async function pages<T>(
    list: (cont: string | undefined) => Promise<{ items: T[]; continue?: string }>,
  ): Promise<T[][]> {
    const out: T[][] = [];
    let cont: string | undefined;
    do {
      const page = await list(cont);
      out.push(page.items);
      cont = page.continue;
    } while (cont !== undefined);
    return out;
  }

  it('lists seeds sorted by name in pages', async () => {
    // Prepare
    const repo = new MemoryGardenRepository();
    for (const name of ['c', 'a', 'e', 'b', 'd']) await repo.createSeed(seed(name));
    // Act
    const seen = await pages((cont) => repo.listSeeds({ limit: 2, ...(cont ? { continue: cont } : {}) }));
    // Assess
    expect(seen.map((p) => p.map((s) => s.metadata.name))).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('lists the shoots of one project only, sorted by name', async () => {
    // Prepare
    const repo = new MemoryGardenRepository();
    for (const [p, n] of [
      ['dev', 'b'],
      ['prod', 'a'],
      ['dev', 'a'],
      ['dev', 'c'],
      ['dev2', 'a'],
    ] as const)
      await repo.createShoot(shoot(p, n));
    // Act
    const seen = await pages((cont) => repo.listShoots('dev', { limit: 2, ...(cont ? { continue: cont } : {}) }));
    // Assess
    expect(seen.map((p) => p.map((s) => s.metadata.name))).toEqual([['a', 'b'], ['c']]);
    expect((await repo.listShoots('none', { limit: 10 })).items).toEqual([]);
  });

  it('lists the shoots of all projects sorted by project and name', async () => {
    const repo = new MemoryGardenRepository();
    for (const [p, n] of [
      ['dev', 'b'],
      ['prod', 'a'],
      ['dev', 'a'],
      ['dev2', 'a'],
    ] as const)
      await repo.createShoot(shoot(p, n));
    const seen = await pages((cont) => repo.listAllShoots({ limit: 3, ...(cont ? { continue: cont } : {}) }));
    expect(seen.map((p) => p.map((s) => `${s.metadata.project}/${s.metadata.name}`))).toEqual([
      ['dev/a', 'dev/b', 'dev2/a'],
      ['prod/a'],
    ]);
  });

  it("lists one seed's shoots in pages, sorted by project and name, and none of another's", async () => {
    // Prepare
    const repo = new MemoryGardenRepository();
    await repo.createSeed(seed('a'));
    await repo.createSeed(seed('b'));
    for (const [p, n, s] of [
      ['dev', 'b', 'a'],
      ['prod', 'a', 'a'],
      ['dev', 'a', 'b'],
      ['dev', 'c', 'a'],
      ['dev', 'd', undefined],
    ] as const)
      await repo.createShoot(shoot(p, n, s));
    // Act
    const seen = await pages((cont) => repo.listShootsOnSeed('a', { limit: 2, ...(cont ? { continue: cont } : {}) }));
    // Assess
    expect(seen.map((p) => p.map((s) => `${s.metadata.project}/${s.metadata.name}`))).toEqual([
      ['dev/b', 'dev/c'],
      ['prod/a'],
    ]);
    const other = await repo.listShootsOnSeed('b', { limit: 10 });
    expect(other.items.map((s) => s.metadata.name)).toEqual(['a']);
    // A token of one seed's list is no token of another's.
    const first = await repo.listShootsOnSeed('a', { limit: 1 });
    await expect(repo.listShootsOnSeed('b', { limit: 1, continue: first.continue! })).rejects.toBeInstanceOf(
      ValidationError,
    );
  });

  it('lists seeds without their leases when asked', async () => {
    // Prepare
    const repo = new MemoryGardenRepository();
    const created = await repo.createSeed(seed('a'));
    await repo.renewLease({
      seed: 'a',
      holderIdentity: created.status.identity,
      renewTime: T0.toISOString(),
      leaseDurationSeconds: 30,
      conditions: [{ type: 'GardenletReady', status: 'True' }],
      controlPlanes: [{ technicalID: 'shoot--dev--x', active: true }],
    });
    // Act
    const [withLease] = (await repo.listSeeds({ limit: 1 })).items;
    const [without] = (await repo.listSeeds({ limit: 1 }, { leases: false })).items;
    // Assess
    expect(withLease!.status.controlPlanes).toHaveLength(1);
    expect(without!.status).not.toHaveProperty('controlPlanes');
    expect(without!.status).not.toHaveProperty('lastHeartbeatTime');
    expect(without!.status.shoots).toBe(0);
  });

  it('gives no token when a page holds everything', async () => {
    const repo = new MemoryGardenRepository();
    await repo.createSeed(seed('a'));
    expect(await repo.listSeeds({ limit: 1 })).toEqual({ items: [await repo.getSeed('a')] });
  });

  it.each([
    ['not base64 JSON', '!!!'],
    ['an array', Buffer.from('[]').toString('base64url')],
    ['a number where a name belongs', Buffer.from('{"after":1}').toString('base64url')],
    ['an extra key', Buffer.from('{"after":"a","x":1}').toString('base64url')],
    ['a DynamoDB key', Buffer.from('{"pk":"SEED#a","sk":"SEED"}').toString('base64url')],
  ])('refuses a continue token that is %s', async (_name, token) => {
    const repo = new MemoryGardenRepository();
    for (const list of [
      () => repo.listSeeds({ limit: 1, continue: token }),
      () => repo.listShoots('dev', { limit: 1, continue: token }),
    ]) {
      const error = await rejection(list());
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe('continue');
    }
  });
});

describe('MemoryGardenRepository copies', () => {
  it('keeps stored state safe from changes to inputs and results', async () => {
    // Prepare
    const repo = new MemoryGardenRepository();
    const input = seed('aws-eu1');
    const created = await repo.createSeed(input);
    const snapshot = structuredClone(repo.snapshot());
    // Act
    input.spec.provider.zones.push('eu-west-1z');
    created.metadata.labels!.env = 'changed';
    (await repo.getSeed('aws-eu1'))!.status.conditions.push({ type: 'Ready', status: 'True' });
    (await repo.listSeeds({ limit: 10 })).items[0]!.spec.taints!.length = 0;
    repo.snapshot().seeds[0]!.status.identity = 'someone-else';
    // Assess
    expect(repo.snapshot()).toEqual(snapshot);
  });
});

describe('FailingGardenRepository', () => {
  const failure = new Error('throttled');
  const repo: GardenRepository = new FailingGardenRepository(failure);
  it.each<[string, () => Promise<unknown>]>([
    ['getSeed', () => repo.getSeed('a')],
    ['listSeeds', () => repo.listSeeds({ limit: 1 })],
    ['createSeed', () => repo.createSeed(seed('a'))],
    ['updateSeed', () => repo.updateSeed(seed('a'), '1')],
    ['deleteSeed', () => repo.deleteSeed('a')],
    ['getShoot', () => repo.getShoot('dev', 'a')],
    ['listShoots', () => repo.listShoots('dev', { limit: 1 })],
    ['listAllShoots', () => new FailingGardenRepository(failure).listAllShoots()],
    ['createShoot', () => repo.createShoot(shoot('dev', 'a'))],
    ['updateShoot', () => repo.updateShoot(shoot('dev', 'a'), '1')],
    ['deleteShoot', () => repo.deleteShoot('dev', 'a')],
  ])('%s rejects with the given error', async (_name, call) => {
    await expect(call()).rejects.toBe(failure);
  });
});
