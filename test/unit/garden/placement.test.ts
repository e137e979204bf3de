import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AdmissionError, ConflictError, ValidationError } from '../../../core/errors.js';
import { SeedUnavailableError } from '../../../core/garden/errors.js';
import { chooseDestination, MAX_STORED_REJECTIONS, placed } from '../../../core/garden/placement.js';
import type { Shoot } from '../../../core/model/shoot.js';
import { garden, rejection, seedBody, shootBody, type Garden } from './builders.js';

const READY = {
  conditions: [
    { type: 'GardenletReady', status: 'True' },
    { type: 'BackupBucketsReady', status: 'True' },
  ],
};
const NON_HA = { controlPlane: undefined };

function filler(seedName: string): Shoot {
  return {
    apiVersion: 'core.gardenless.io/v1',
    kind: 'Shoot',
    metadata: {
      project: 'dev',
      name: 'filler',
      resourceVersion: '0',
      uid: 'filler',
      creationTimestamp: new Date(0).toISOString(),
    },
    spec: { provider: { type: 'aws' }, region: 'eu-west-1', seedName },
    status: { technicalID: 'shoot--dev--filler', seedName, conditions: [], constraints: [] },
  };
}

/** A ready seed whose networks do not overlap the shoots'; multi-zonal with three zones, single-zonal with one. */
async function addSeed(g: Garden, name: string, options: { zones: 1 | 3; capacity?: number; index: number }) {
  const zones = ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'].slice(0, options.zones);
  await g.service.putSeed(
    name,
    seedBody({
      spec: {
        provider: { type: 'aws', region: 'eu-west-1', zones },
        networks: {
          nodes: `10.${options.index * 3}.0.0/16`,
          pods: `10.${options.index * 3 + 1}.0.0/16`,
          services: `10.${options.index * 3 + 2}.0.0/16`,
        },
        workerPools: [{ name: 'cp', zones, minimum: 3 }],
        taints: undefined,
        ...(options.capacity === undefined ? { capacity: undefined } : { capacity: { shoots: options.capacity } }),
      },
    }),
  );
  await g.service.heartbeat(name, READY);
}

describe('placement of new shoots', () => {
  it('a placed shoot no longer shows why it waited (status.scheduling), and keeps the rest of its status', () => {
    const waiting = {
      ...filler('old'),
      status: {
        ...filler('old').status,
        scheduling: { lastAttemptTime: new Date(0).toISOString(), summary: 'no seed fits', rejected: [] },
      },
    };
    const now = new Date('2026-11-24T00:00:00Z');
    const shoot = placed(waiting, 'seed-b', 'least loaded', now);
    expect(shoot.status.scheduling).toBeUndefined();
    expect(shoot.status).toMatchObject({ seedName: 'seed-b', technicalID: 'shoot--dev--filler' });
    expect(shoot.spec.seedName).toBe('seed-b');
    expect(shoot.status.conditions).toContainEqual(expect.objectContaining({ type: 'Scheduled', status: 'True' }));
  });

  it('prefers the single-zonal seed for a shoot without zone tolerance, and a multi-zonal one for zone', async () => {
    // Prepare
    const g = garden();
    await addSeed(g, 'multi', { zones: 3, index: 1 });
    await addSeed(g, 'single', { zones: 1, index: 2 });
    // Act
    const plain = await g.service.putShoot('dev', 'plain', shootBody({ spec: NON_HA }));
    const zone = await g.service.putShoot('dev', 'zonal', shootBody());
    // Assess
    expect(plain.resource.status.seedName).toBe('single');
    expect(plain.resource.spec.seedName).toBe('single');
    expect(plain.resource.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'Scheduled', status: 'True' }),
    );
    expect(zone.resource.status.seedName).toBe('multi');
    expect((await g.service.getSeed('single')).status.shoots).toBe(1);
  });

  it('decides again on fresh seeds when a concurrent placement filled the chosen one', async () => {
    // Prepare: right before the service's write, another shoot takes the last place on "single".
    const g = garden({
      before: {
        createShoot: async (call, repo) => {
          if (call === 1) await repo.createShoot(filler('single'));
        },
      },
    });
    await addSeed(g, 'single', { zones: 1, capacity: 1, index: 1 });
    await addSeed(g, 'multi', { zones: 3, index: 2 });
    // Act
    const placed = await g.service.putShoot('dev', 'plain', shootBody({ spec: NON_HA }));
    // Assess: the first choice was full by then, so the shoot went elsewhere and nothing exceeded capacity.
    expect(g.calls.createShoot).toBe(2);
    expect(placed.resource.status.seedName).toBe('multi');
    expect((await g.service.getSeed('single')).status.shoots).toBe(1);
    expect((await g.repo.getShoot('dev', 'filler'))?.status.seedName).toBe('single');
  });

  it('stores an unschedulable shoot with every rejection, capped in status with the count of the rest', async () => {
    // Prepare
    const g = garden();
    for (let i = 0; i < MAX_STORED_REJECTIONS + 5; i++) {
      await g.service.putSeed(
        `seed-${i}`,
        seedBody({
          spec: {
            provider: { type: 'aws', region: 'us-east-1', zones: ['us-east-1a'] },
            workerPools: undefined,
            taints: undefined,
          },
        }),
      );
    }
    // Act
    const { resource } = await g.service.putShoot('dev', 'lost', shootBody());
    // Assess
    expect(resource.status.seedName).toBeUndefined();
    expect(resource.status.lastOperation).toMatchObject({ type: 'Create', state: 'Pending' });
    expect(resource.status.scheduling?.rejected).toHaveLength(MAX_STORED_REJECTIONS);
    expect(resource.status.scheduling?.rejectedOmitted).toBe(5);
    const dryRun = await g.service.dryRunSchedule({ shoot: shootBody() });
    expect(dryRun.rejected).toHaveLength(MAX_STORED_REJECTIONS + 5);
  });

  it('refuses a dry run whose metadata names a project or name that is not a string, and accepts other metadata', async () => {
    // Prepare
    const g = garden();
    // Act, Assess
    for (const metadata of [{ project: null }, { name: 7 }, { project: ['dev'] }]) {
      await expect(g.service.dryRunSchedule({ shoot: shootBody({ metadata }) })).rejects.toBeInstanceOf(
        ValidationError,
      );
    }
    const dryRun = await g.service.dryRunSchedule({
      shoot: shootBody({ metadata: { project: 'dev', name: 'any', labels: { a: 'b' } } }),
    });
    expect(dryRun.total).toBe(0);
  });

  it('never exceeds capacity when placements race (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 15 }), async (capacity, shoots) => {
        // Prepare
        const g = garden();
        await addSeed(g, 'single', { zones: 1, capacity, index: 1 });
        await addSeed(g, 'multi', { zones: 3, capacity: 100, index: 2 });
        // Act
        const placed = await Promise.all(
          Array.from({ length: shoots }, (_, i) => g.service.putShoot('race', `s-${i}`, shootBody({ spec: NON_HA }))),
        );
        // Assess
        const onSingle = placed.filter((p) => p.resource.status.seedName === 'single').length;
        expect(onSingle).toBe(Math.min(capacity, shoots));
        expect((await g.service.getSeed('single')).status.shoots).toBe(onSingle);
        expect((await g.service.getSeed('multi')).status.shoots).toBe(shoots - onSingle);
      }),
      { numRuns: 25 },
    );
  });
});

describe('HA admission and layout through the service', () => {
  it.each([
    [
      'zone on a single-zonal seed at creation',
      'single',
      { controlPlane: { highAvailability: { failureTolerance: { type: 'zone' } } } },
      'ZoneToleranceNeedsMultiZonalSeed',
    ],
  ])('refuses %s with 422', async (_title, seedName, spec, code) => {
    const g = garden();
    await addSeed(g, 'single', { zones: 1, index: 1 });
    const error = await rejection(g.service.putShoot('dev', 'x', shootBody({ spec: { ...spec, seedName } })));
    expect(error).toBeInstanceOf(AdmissionError);
    expect(error).toMatchObject({ code });
    expect(await g.repo.getShoot('dev', 'x')).toBeUndefined();
  });

  it('refuses to lower the failure tolerance of a scheduled shoot', async () => {
    const g = garden();
    await addSeed(g, 'multi', { zones: 3, index: 1 });
    await g.service.putShoot('dev', 'ha', shootBody());
    const error = await rejection(
      g.service.patchShoot('dev', 'ha', {
        spec: { controlPlane: { highAvailability: { failureTolerance: { type: 'node' } } } },
      }),
    );
    expect(error).toMatchObject({
      code: 'HighAvailabilityDowngrade',
      field: 'spec.controlPlane.highAvailability.failureTolerance.type',
    });
  });

  it('rejects an unknown explicit seed as SeedUnavailable and lays out only scheduled shoots', async () => {
    const g = garden();
    expect(await rejection(g.service.putShoot('dev', 'x', shootBody({ spec: { seedName: 'ghost' } })))).toBeInstanceOf(
      SeedUnavailableError,
    );
    await g.service.putShoot('dev', 'waiting', shootBody());
    expect(await rejection(g.service.controlPlane('dev', 'waiting'))).toBeInstanceOf(ConflictError);

    await addSeed(g, 'multi', { zones: 3, index: 1 });
    await g.service.putShoot('dev', 'ha', shootBody());
    const layout = await g.service.controlPlane('dev', 'ha');
    expect(layout).toMatchObject({
      kind: 'ControlPlaneLayout',
      technicalID: 'shoot--dev--ha',
      seedName: 'multi',
      failureTolerance: 'zone',
    });
    expect(layout.zones).toHaveLength(3);
    expect(layout.items).toHaveLength(14);
  });

  it('chooses a migration destination other than the current seed', async () => {
    const g = garden();
    await addSeed(g, 'multi-a', { zones: 3, index: 1 });
    await addSeed(g, 'multi-b', { zones: 3, index: 2 });
    const { resource } = await g.service.putShoot('dev', 'ha', shootBody());
    const choice = await chooseDestination({ repo: g.repo, project: 'dev', name: 'ha', exclude: [], policy: {} });
    expect(choice.seedName).toBeDefined();
    expect(choice.seedName).not.toBe(resource.status.seedName);
    expect(
      (
        await chooseDestination({
          repo: g.repo,
          project: 'dev',
          name: 'ha',
          exclude: ['multi-a', 'multi-b'],
          policy: {},
        })
      ).seedName,
    ).toBeUndefined();
  });
});
