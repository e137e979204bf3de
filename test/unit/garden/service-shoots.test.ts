import { describe, expect, it } from 'vitest';
import {
  AdmissionError,
  ConflictError,
  NotFoundError,
  UnavailableError,
  ValidationError,
} from '../../../core/errors.js';
import { SeedUnavailableError } from '../../../core/garden/errors.js';
import { MemoryGardenRepository } from '../../../core/garden/memory-repository.js';
import { GardenService } from '../../../core/garden/service.js';
import type { Seed } from '../../../core/model/seed.js';
import { T0, garden, rejection, seedBody, shootBody, type Garden } from './builders.js';

const CONFIRM = { metadata: { annotations: { 'confirmation.gardener.cloud/deletion': 'true' } } };

async function withSeed(capacity = 250): Promise<Garden> {
  const g = garden();
  await g.service.putSeed('aws-eu1', seedBody({ spec: { capacity: { shoots: capacity } } }));
  return g;
}

describe('GardenService shoot creation', () => {
  it('stores a shoot without spec.seedName unscheduled, with a pending Create operation', async () => {
    // Prepare
    const { service } = garden();
    // Act
    const { resource, created } = await service.putShoot('dev', 'api1', shootBody());
    // Assess
    expect(created).toBe(true);
    expect(resource.metadata).toMatchObject({
      project: 'dev',
      name: 'api1',
      resourceVersion: '1',
      uid: 'uuid-1',
      creationTimestamp: T0.toISOString(),
    });
    expect(resource.status).toMatchObject({
      technicalID: 'shoot--dev--api1',
      lastOperation: {
        type: 'Create',
        state: 'Pending',
        progress: 0,
        description: expect.any(String),
        lastUpdateTime: T0.toISOString(),
      },
      constraints: [],
    });
    expect(resource.status.seedName).toBeUndefined();
    expect(resource.spec.seedName).toBeUndefined();
  });

  it('places a shoot with spec.seedName on that seed and counts it there', async () => {
    // Prepare
    const { service } = await withSeed();
    // Act
    const { resource } = await service.putShoot('dev', 'api1', shootBody({ spec: { seedName: 'aws-eu1' } }));
    // Assess
    expect(resource.status.seedName).toBe('aws-eu1');
    expect(resource.status.lastOperation).toMatchObject({ type: 'Create', state: 'Processing' });
    expect((await service.getSeed('aws-eu1')).status.shoots).toBe(1);
  });

  it.each<[string, number, SeedUnavailableError['reason']]>([
    ['unknown', -1, 'NotFound'],
    ['full', 1, 'Full'],
  ])('refuses to place a shoot on an %s seed and writes nothing', async (_name, capacity, reason) => {
    // Prepare
    const g = capacity < 0 ? garden() : await withSeed(capacity);
    if (capacity > 0) await g.service.putShoot('dev', 'first', shootBody({ spec: { seedName: 'aws-eu1' } }));
    const before = g.repo.snapshot();
    // Act
    const error = await rejection(g.service.putShoot('dev', 'api1', shootBody({ spec: { seedName: 'aws-eu1' } })));
    // Assess
    expect(error).toBeInstanceOf(SeedUnavailableError);
    expect(error).toMatchObject({ reason, seedName: 'aws-eu1', field: 'spec.seedName' });
    expect(g.repo.snapshot()).toEqual(before);
  });

  it.each<[string, string, boolean]>([
    ['p'.repeat(14), 'n'.repeat(40), true], // shoot--<14>--<40>: 63 characters
    ['p'.repeat(14), 'n'.repeat(41), false], // 64
    ['p'.repeat(20), 'n'.repeat(40), false], // 69
  ])('admits the technical ID of %s/%s: %s', async (project, name, ok) => {
    // Prepare
    const { service, repo } = garden();
    // Act
    const result = service.putShoot(project, name, shootBody());
    // Assess
    if (ok) {
      expect((await result).resource.status.technicalID).toHaveLength(63);
    } else {
      const error = await rejection(result);
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ code: 'NameTooLong', field: 'metadata.name' });
      expect(repo.snapshot().shoots).toEqual([]);
    }
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['name', { name: 'api2' }, 'metadata.name'],
    ['project', { project: 'prod' }, 'metadata.project'],
  ])('refuses a body whose %s differs from the path', async (_name, metadata, field) => {
    const { service, repo } = garden();
    const error = await rejection(service.putShoot('dev', 'api1', shootBody({ metadata })));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe(field);
    expect(repo.snapshot().shoots).toEqual([]);
  });

  it('accepts a body whose name and project match the path', async () => {
    const { service } = garden();
    const { created } = await service.putShoot(
      'dev',
      'api1',
      shootBody({ metadata: { name: 'api1', project: 'dev' } }),
    );
    expect(created).toBe(true);
  });
});

describe('GardenService shoot updates', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['moves a placed shoot to another seed', { seedName: 'aws-eu2' }, 'spec.seedName'],
    ['removes the seed of a placed shoot', { seedName: undefined }, 'spec.seedName'],
    ['changes the provider type', { provider: { type: 'gcp' } }, 'spec.provider.type'],
    ['changes the region', { region: 'eu-central-1' }, 'spec.region'],
    [
      'changes the nodes network',
      { networking: { nodes: '10.251.0.0/16', pods: '100.96.0.0/11', services: '100.64.0.0/13' } },
      'spec.networking.nodes',
    ],
    [
      'changes the pods network',
      { networking: { nodes: '10.250.0.0/16', pods: '100.128.0.0/11', services: '100.64.0.0/13' } },
      'spec.networking.pods',
    ],
    [
      'changes the services network',
      { networking: { nodes: '10.250.0.0/16', pods: '100.96.0.0/11', services: '100.72.0.0/13' } },
      'spec.networking.services',
    ],
    ['drops the networking', { networking: undefined }, 'spec.networking.nodes'],
  ])('refuses an update that %s as an AdmissionError naming the field', async (_name, spec, field) => {
    // Prepare
    const { service, repo } = await withSeed();
    await service.putSeed('aws-eu2', seedBody());
    await service.putShoot('dev', 'api1', shootBody({ spec: { seedName: 'aws-eu1' } }));
    const before = repo.snapshot();
    // Act
    const error = await rejection(
      service.putShoot(
        'dev',
        'api1',
        JSON.parse(JSON.stringify(shootBody({ spec: { seedName: 'aws-eu1', ...spec } }))),
      ),
    );
    // Assess
    expect(error).toBeInstanceOf(AdmissionError);
    expect(error).toMatchObject({ code: 'FieldImmutable', field });
    expect(repo.snapshot()).toEqual(before);
  });

  it('refuses to set spec.seedName of an unscheduled shoot by an update', async () => {
    const { service } = await withSeed();
    await service.putShoot('dev', 'api1', shootBody());
    await expect(service.putShoot('dev', 'api1', shootBody({ spec: { seedName: 'aws-eu1' } }))).rejects.toMatchObject({
      name: 'AdmissionError',
      field: 'spec.seedName',
    });
  });

  it('updates the mutable spec and labels, keeping status and placement', async () => {
    // Prepare
    const { service } = await withSeed();
    const { resource: first } = await service.putShoot('dev', 'api1', shootBody({ spec: { seedName: 'aws-eu1' } }));
    // Act
    const { resource, created } = await service.putShoot(
      'dev',
      'api1',
      shootBody({
        metadata: { labels: { team: 'a' } },
        spec: { seedName: 'aws-eu1', hibernation: { enabled: true }, purpose: 'testing' },
      }),
    );
    // Assess
    expect(created).toBe(false);
    expect(resource.metadata).toMatchObject({ resourceVersion: '2', uid: first.metadata.uid, labels: { team: 'a' } });
    expect(resource.spec).toMatchObject({ hibernation: { enabled: true }, purpose: 'testing' });
    // Hibernation matters to the seed: a Hibernate operation is requested; placement stays.
    expect(resource.status).toEqual({
      ...first.status,
      operation: {
        id: expect.any(String),
        type: 'Hibernate',
        seedName: 'aws-eu1',
        attempts: 0,
        requestedAt: expect.any(String),
      },
      lastOperation: {
        type: 'Hibernate',
        state: 'Processing',
        progress: 0,
        description: expect.stringContaining('Hibernating'),
        lastUpdateTime: expect.any(String),
      },
    });
    expect((await service.getSeed('aws-eu1')).status.shoots).toBe(1);
  });

  it('updates at the resourceVersion given and refuses a stale one with the current shoot', async () => {
    // Prepare
    const { service, repo } = garden();
    await service.putShoot('dev', 'api1', shootBody());
    await service.putShoot(
      'dev',
      'api1',
      shootBody({ metadata: { resourceVersion: '1' }, spec: { purpose: 'testing' } }),
    );
    const before = repo.snapshot();
    // Act
    const error = await rejection(
      service.putShoot(
        'dev',
        'api1',
        shootBody({ metadata: { resourceVersion: '1' }, spec: { purpose: 'evaluation' } }),
      ),
    );
    // Assess
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: 'Conflict', field: 'metadata.resourceVersion' });
    expect((error as ConflictError<{ metadata: { resourceVersion: string } }>).current?.metadata.resourceVersion).toBe(
      '2',
    );
    expect(repo.snapshot()).toEqual(before);
  });

  it('retries an update without resourceVersion after a concurrent change, and keeps the concurrent change counted', async () => {
    // Prepare: another writer updates the shoot between this update's read and its write.
    const { service, calls } = garden({
      before: {
        updateShoot: async (call, inner) => {
          if (call === 1) await inner.updateShoot((await inner.getShoot('dev', 'api1'))!, '1');
        },
      },
    });
    await service.putShoot('dev', 'api1', shootBody());
    // Act
    const { resource } = await service.putShoot('dev', 'api1', shootBody({ spec: { purpose: 'testing' } }));
    // Assess
    expect(calls.updateShoot).toBe(2);
    expect(calls.getShoot).toBe(3);
    expect(resource.metadata.resourceVersion).toBe('3');
    expect(resource.spec.purpose).toBe('testing');
  });

  it('does not retry an update carrying a resourceVersion when the store reports a conflict', async () => {
    const { service, calls } = garden({
      before: {
        updateShoot: async (call, inner) => {
          if (call === 1) await inner.updateShoot((await inner.getShoot('dev', 'api1'))!, '1');
        },
      },
    });
    await service.putShoot('dev', 'api1', shootBody());
    await expect(
      service.putShoot('dev', 'api1', shootBody({ metadata: { resourceVersion: '1' }, spec: { purpose: 'testing' } })),
    ).rejects.toMatchObject({ code: 'Conflict' });
    expect(calls.updateShoot).toBe(1);
  });

  it('never answers a conflict to an update without resourceVersion: past its retry budget it is Unavailable (503), to retry', async () => {
    // Prepare: every write of this update loses to a concurrent one.
    const repo = new MemoryGardenRepository();
    const interfering = new Proxy(repo, {
      get(target, prop, receiver) {
        if (prop !== 'updateSeed') return Reflect.get(target, prop, receiver) as unknown;
        return async (seed: Seed, version: string) => {
          const now = (await target.getSeed(seed.metadata.name))!;
          await target.updateSeed(now, now.metadata.resourceVersion);
          return target.updateSeed(seed, version);
        };
      },
    });
    const pauses: number[] = [];
    const service = new GardenService({
      repository: interfering,
      maxUnconditionalRetries: 7,
      pause: async (ms) => void pauses.push(ms),
    });
    await service.putSeed('aws-eu1', seedBody());
    // Act
    const error = await rejection(service.putSeed('aws-eu1', seedBody({ metadata: { labels: { env: 'staging' } } })));
    // Assess
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error).toMatchObject({ code: 'TooManyConflicts' });
    expect(pauses).toHaveLength(7);
    expect(pauses.every((ms) => ms >= 0 && ms <= 1_000)).toBe(true);
  });

  it('retries a create that lost the race to a concurrent create as an update', async () => {
    const { service, calls } = garden({
      before: {
        createShoot: async (call, inner) => {
          if (call === 1)
            await inner.createShoot((await garden().service.putShoot('dev', 'api1', shootBody())).resource);
        },
      },
    });
    const { resource, created } = await service.putShoot('dev', 'api1', shootBody({ spec: { purpose: 'testing' } }));
    expect(created).toBe(false);
    expect(calls.createShoot).toBe(1);
    expect(resource).toMatchObject({ metadata: { resourceVersion: '2' }, spec: { purpose: 'testing' } });
  });
});

describe('GardenService shoot merge patch', () => {
  it('merges metadata and spec: objects merge, null removes, scalars replace', async () => {
    // Prepare
    const { service } = garden();
    await service.putShoot(
      'dev',
      'api1',
      shootBody({ metadata: { labels: { team: 'a', tier: 'gold' } }, spec: { hibernation: { enabled: false } } }),
    );
    // Act
    const patched = await service.patchShoot('dev', 'api1', {
      metadata: { labels: { tier: null, cost: 'low' } },
      spec: { hibernation: { enabled: true }, purpose: null, tolerations: [{ key: 'x' }] },
    });
    // Assess
    expect(patched.metadata.labels).toEqual({ team: 'a', cost: 'low' });
    expect(patched.spec).toEqual({
      ...(shootBody().spec as object),
      hibernation: { enabled: true },
      purpose: undefined,
      tolerations: [{ key: 'x' }],
    });
    expect(patched.spec.purpose).toBeUndefined();
    expect(patched.metadata.resourceVersion).toBe('2');
  });

  it.each<[string, unknown, string, string | undefined]>([
    ['an immutable field', { spec: { region: 'us-east-1' } }, 'AdmissionError', 'spec.region'],
    ['a stale resourceVersion', { metadata: { resourceVersion: '5' } }, 'ConflictError', 'metadata.resourceVersion'],
    ['an unknown field', { spec: { colour: 'red' } }, 'ValidationError', 'spec.colour'],
    [
      'a server-owned field',
      { metadata: { creationTimestamp: '2025-01-01T00:00:00Z' } },
      'ValidationError',
      'metadata.creationTimestamp',
    ],
    ['the uid of another object', { metadata: { uid: 'x' } }, 'ConflictError', 'metadata.uid'],
    ['a status', { status: { seedName: 'aws-eu2' } }, 'ValidationError', 'status'],
    [
      'a member named __proto__',
      JSON.parse('{"spec": {"__proto__": {"region": "us-east-1"}}}'),
      'ValidationError',
      'spec.__proto__',
    ],
    ['removing a required field', { spec: { region: null } }, 'ValidationError', 'spec.region'],
    ['a patch that is not an object', ['spec'], 'ValidationError', undefined],
  ])('refuses a patch with %s and writes nothing', async (_name, patch, errorName, field) => {
    // Prepare
    const { service, repo } = garden();
    await service.putShoot('dev', 'api1', shootBody());
    const before = repo.snapshot();
    // Act
    const error = await rejection(service.patchShoot('dev', 'api1', patch));
    // Assess
    expect(error).toMatchObject({ name: errorName, field });
    expect(repo.snapshot()).toEqual(before);
  });

  it('patches at the resourceVersion given', async () => {
    const { service } = garden();
    await service.putShoot('dev', 'api1', shootBody());
    const patched = await service.patchShoot('dev', 'api1', {
      metadata: { resourceVersion: '1' },
      spec: { purpose: 'testing' },
    });
    expect(patched.metadata.resourceVersion).toBe('2');
  });

  it('reports patching a missing shoot as NotFound', async () => {
    await expect(garden().service.patchShoot('dev', 'api1', { spec: {} })).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('GardenService shoot reads and deletes', () => {
  it('lists the shoots of a project and deletes them, releasing their seed', async () => {
    // Prepare
    const { service } = await withSeed();
    for (const name of ['b', 'a', 'c'])
      await service.putShoot('dev', name, shootBody({ spec: { seedName: 'aws-eu1' } }));
    await service.putShoot('prod', 'a', shootBody());
    // Act
    const listed = await service.listShoots('dev', { limit: 10 });
    await service.patchShoot('prod', 'a', CONFIRM);
    const deletion = await service.deleteShoot('prod', 'a');
    // Assess
    expect(listed.items.map((s) => s.metadata.name)).toEqual(['a', 'b', 'c']);
    expect(deletion).toEqual({ removed: true });
    expect((await service.getSeed('aws-eu1')).status.shoots).toBe(3);
    await expect(service.getShoot('prod', 'a')).rejects.toBeInstanceOf(NotFoundError);
    await expect(service.deleteShoot('prod', 'a')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('deletes a shoot only at the version given', async () => {
    const { service } = garden();
    await service.putShoot('dev', 'api1', shootBody({ metadata: { annotations: CONFIRM.metadata.annotations } }));
    await expect(service.deleteShoot('dev', 'api1', '2')).rejects.toMatchObject({ code: 'Conflict' });
    await service.deleteShoot('dev', 'api1', '1');
    expect((await service.listShoots('dev', { limit: 10 })).items).toEqual([]);
  });
});

describe('GardenService: objects as read, no-op writes, unconditional writes', () => {
  it('accepts a shoot PUT back exactly as it was read (apiVersion, kind, uid, creationTimestamp, status) and writes nothing new', async () => {
    // Prepare
    const { service, repo } = await withSeed();
    const { resource } = await service.putShoot('dev', 'api1', shootBody());
    const before = repo.snapshot();
    // Act
    const again = await service.putShoot('dev', 'api1', JSON.parse(JSON.stringify(resource)));
    // Assess
    expect(again).toEqual({ resource, created: false });
    expect(repo.snapshot()).toEqual(before);
  });

  it('accepts a seed PUT back as read, and updates it when its spec changed, keeping identity and status', async () => {
    const { service } = garden();
    const { resource } = await service.putSeed('aws-eu1', seedBody());
    const read = JSON.parse(JSON.stringify(resource)) as Seed;
    expect((await service.putSeed('aws-eu1', read)).resource.metadata.resourceVersion).toBe('1');
    read.spec.capacity = { shoots: 7 };
    const updated = await service.putSeed('aws-eu1', read);
    expect(updated.resource.metadata.resourceVersion).toBe('2');
    expect(updated.resource.status.identity).toBe(resource.status.identity);
  });

  it.each<[string, (g: Garden) => Promise<unknown>]>([
    ['an update of a shoot', (g) => g.service.putShoot('dev', 'api1', shootBody({ metadata: { uid: 'uuid-other' } }))],
    ['an update of a seed', (g) => g.service.putSeed('aws-eu1', seedBody({ metadata: { uid: 'uuid-other' } }))],
    [
      'a re-creation of a deleted shoot from an old read',
      (g) => g.service.putShoot('dev', 'gone', shootBody({ metadata: { uid: 'uuid-1' } })),
    ],
  ])(
    'refuses %s whose metadata.uid is not the stored one with 409 UidMismatch, and writes nothing',
    async (_name, act) => {
      const g = await withSeed();
      await g.service.putShoot('dev', 'api1', shootBody());
      const before = g.repo.snapshot();
      const error = await rejection(act(g));
      expect(error).toBeInstanceOf(ConflictError);
      expect(error).toMatchObject({ code: 'UidMismatch', field: 'metadata.uid' });
      expect(g.repo.snapshot()).toEqual(before);
    },
  );

  it('writes nothing for a merge patch that changes nothing: the resourceVersion stays', async () => {
    const { service, repo } = await withSeed();
    await service.putShoot('dev', 'api1', shootBody({ metadata: { labels: { team: 'a' } } }));
    const before = repo.snapshot();
    const patched = await service.patchShoot('dev', 'api1', {
      metadata: { labels: { team: 'a' } },
      spec: { purpose: 'production', hibernation: null },
    });
    expect(patched.metadata.resourceVersion).toBe('1');
    expect(repo.snapshot()).toEqual(before);
  });

  it('lets 50 concurrent updates without resourceVersion all succeed, none answered with a conflict', async () => {
    // Prepare
    const { service, repo } = await withSeed();
    await service.putShoot('dev', 'api1', shootBody());
    // Act: each writer sets its own label; the memory repository interleaves them at every await.
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        service.patchShoot('dev', 'api1', { metadata: { labels: { [`w${i}`]: 'x' } } }),
      ),
    );
    // Assess
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(Object.keys(repo.snapshot().shoots[0]!.metadata.labels ?? {})).toHaveLength(50);
  });
});
