import { describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/errors.js';
import { T0, garden, rejection, seedBody, shootBody } from './builders.js';

const T1 = new Date(T0.getTime() + 60_000).toISOString();
const T2 = new Date(T0.getTime() + 120_000).toISOString();

describe('GardenService seeds', () => {
  it('registers a seed with an identity, a uid, a creation time and its allocatable shoots', async () => {
    // Prepare
    const { service } = garden();
    // Act
    const { resource, created } = await service.putSeed('aws-eu1', seedBody());
    // Assess
    expect(created).toBe(true);
    expect(resource).toMatchObject({
      apiVersion: 'core.gardenless.io/v1',
      kind: 'Seed',
      metadata: {
        name: 'aws-eu1',
        labels: { env: 'prod' },
        resourceVersion: '1',
        uid: 'uuid-1',
        creationTimestamp: T0.toISOString(),
      },
      spec: seedBody().spec,
      status: { identity: 'aws-eu1-uuid-1', conditions: [], shoots: 0, labels: {}, allocatable: { shoots: 250 } },
    });
    expect(await service.getSeed('aws-eu1')).toEqual(resource);
  });

  it('updates spec and labels, keeps identity, uid and status, and bumps the resourceVersion', async () => {
    // Prepare
    const { service, clock } = garden();
    const { resource: first } = await service.putSeed('aws-eu1', seedBody());
    await service.heartbeat('aws-eu1', { conditions: [{ type: 'Ready', status: 'True' }], leaseDurationSeconds: 300 });
    clock.advance(60_000);
    const body = seedBody({ metadata: { labels: { env: 'staging' } }, spec: { capacity: undefined, taints: [] } });
    // Act
    const { resource, created } = await service.putSeed('aws-eu1', JSON.parse(JSON.stringify(body)));
    // Assess
    expect(created).toBe(false);
    expect(resource.metadata).toMatchObject({
      resourceVersion: '2',
      uid: first.metadata.uid,
      creationTimestamp: first.metadata.creationTimestamp,
      labels: { env: 'staging' },
    });
    expect(resource.status.identity).toBe(first.status.identity);
    expect(resource.status.conditions.map((c) => c.type)).toEqual(['Ready']);
    expect(resource.spec.taints).toEqual([]);
    expect(resource.spec.capacity).toBeUndefined();
    expect(resource.status.allocatable).toBeUndefined();
  });

  it('ignores the status a client sends', async () => {
    const { service } = garden();
    const { resource } = await service.putSeed('aws-eu1', {
      ...seedBody(),
      status: { identity: 'forged', shoots: 99 },
    });
    expect(resource.status).toMatchObject({ identity: 'aws-eu1-uuid-1', shoots: 0 });
  });

  it.each<[string, unknown, string]>([
    ['a name that differs from the path', seedBody({ metadata: { name: 'aws-eu2' } }), 'metadata.name'],
    ['an unknown field', seedBody({ spec: { color: 'green' } }), 'spec.color'],
    ['a missing spec', { metadata: {} }, 'spec'],
  ])('refuses a seed with %s as a ValidationError', async (_name, body, field) => {
    const { service, repo } = garden();
    const error = await rejection(service.putSeed('aws-eu1', body));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe(field);
    expect(repo.snapshot().seeds).toEqual([]);
  });

  it('does not create a seed when the client sends a resourceVersion', async () => {
    const { service, repo } = garden();
    await expect(service.putSeed('aws-eu1', seedBody({ metadata: { resourceVersion: '1' } }))).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(repo.snapshot().seeds).toEqual([]);
  });

  it('lists seeds by name, in pages', async () => {
    // Prepare
    const { service } = garden();
    for (const name of ['aws-eu2', 'aws-eu1', 'aws-us1']) await service.putSeed(name, seedBody());
    // Act
    const first = await service.listSeeds({ limit: 2 });
    const second = await service.listSeeds({ limit: 2, continue: first.continue! });
    // Assess
    expect(first.items.map((s) => s.metadata.name)).toEqual(['aws-eu1', 'aws-eu2']);
    expect(second.items.map((s) => s.metadata.name)).toEqual(['aws-us1']);
    expect(second.continue).toBeUndefined();
  });

  it('reads a missing seed as NotFound', async () => {
    await expect(garden().service.getSeed('aws-eu1')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('refuses to delete a seed while it hosts shoots, and deletes it once they are gone', async () => {
    // Prepare
    const { service, repo: repository } = garden();
    await service.putSeed('aws-eu1', seedBody());
    await service.putShoot('dev', 'api1', shootBody({ spec: { seedName: 'aws-eu1' } }));
    // Act
    const refused = await rejection(service.deleteSeed('aws-eu1'));
    await service.patchShoot('dev', 'api1', {
      metadata: { annotations: { 'confirmation.gardener.cloud/deletion': 'true' } },
    });
    await service.deleteShoot('dev', 'api1');
    // The agent removed the control plane: the operation's last step deletes the shoot and frees its place.
    await repository.deleteShoot('dev', 'api1');
    await service.deleteSeed('aws-eu1');
    // Assess
    expect(refused).toBeInstanceOf(ConflictError);
    expect((refused as ConflictError).code).toBe('SeedHostsShoots');
    await expect(service.getSeed('aws-eu1')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('deletes a seed only at the version given', async () => {
    const { service } = garden();
    await service.putSeed('aws-eu1', seedBody());
    await expect(service.deleteSeed('aws-eu1', '2')).rejects.toMatchObject({
      code: 'Conflict',
      field: 'metadata.resourceVersion',
    });
    await service.deleteSeed('aws-eu1', '1');
    await expect(service.deleteSeed('aws-eu1')).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('GardenService heartbeat', () => {
  it('merges conditions: lastTransitionTime stays while the status stays', async () => {
    // Prepare
    const { service, clock } = garden();
    await service.putSeed('aws-eu1', seedBody());
    // Act
    await service.heartbeat('aws-eu1', {
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'BackupReady', status: 'True' },
      ],
      leaseDurationSeconds: 300,
    });
    clock.advance(60_000);
    const same = (
      await service.heartbeat('aws-eu1', {
        identity: 'aws-eu1-uuid-1',
        conditions: [{ type: 'Ready', status: 'True' }],
        leaseDurationSeconds: 300,
      })
    ).seed;
    clock.advance(60_000);
    const changed = (
      await service.heartbeat('aws-eu1', {
        conditions: [{ type: 'Ready', status: 'False', reason: 'EtcdDown' }],
        leaseDurationSeconds: 300,
      })
    ).seed;
    // Assess
    expect(same.status.lastHeartbeatTime).toBe(T1);
    expect(same.status.conditions).toEqual([
      { type: 'BackupReady', status: 'True', lastTransitionTime: T0.toISOString(), lastUpdateTime: T0.toISOString() },
      { type: 'Ready', status: 'True', lastTransitionTime: T0.toISOString(), lastUpdateTime: T1 },
    ]);
    expect(changed.status.conditions[1]).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'EtcdDown',
      lastTransitionTime: T2,
      lastUpdateTime: T2,
    });
    expect(changed.metadata.resourceVersion).toBe('1');
  });

  it('records the control planes the agent reports', async () => {
    const { service } = garden();
    await service.putSeed('aws-eu1', seedBody());
    const controlPlanes = [{ technicalID: 'shoot--dev--api1', active: true, ownerCheck: 'owner' as const }];
    const seed = (await service.heartbeat('aws-eu1', { conditions: [], controlPlanes })).seed;
    expect(seed.status.controlPlanes).toEqual(controlPlanes);
  });

  it('records what the runtime can do, each capability once, until a heartbeat reports none', async () => {
    const { service } = garden();
    await service.putSeed('aws-eu1', seedBody());
    const heartbeat = (capabilities?: 'live-walk'[]) =>
      service.heartbeat('aws-eu1', { conditions: [], ...(capabilities ? { capabilities } : {}) });
    expect((await heartbeat(['live-walk', 'live-walk'])).seed.status.capabilities).toEqual(['live-walk']);
    expect((await service.getSeed('aws-eu1')).status.capabilities).toEqual(['live-walk']);
    expect((await heartbeat()).seed.status).not.toHaveProperty('capabilities');
    expect((await service.getSeed('aws-eu1')).status).not.toHaveProperty('capabilities');
  });

  it('rejects the heartbeat of an agent from another registration with IdentityMismatch and writes nothing', async () => {
    // Prepare
    const { service, repo } = garden();
    await service.putSeed('aws-eu1', seedBody());
    const before = repo.snapshot();
    // Act
    const error = await rejection(
      service.heartbeat('aws-eu1', { identity: 'aws-eu1-old', conditions: [{ type: 'Ready', status: 'True' }] }),
    );
    // Assess
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: 'IdentityMismatch', field: 'identity' });
    expect(repo.snapshot()).toEqual(before);
  });

  it('reports the heartbeat of an unknown seed as NotFound', async () => {
    await expect(garden().service.heartbeat('aws-eu1', { conditions: [] })).rejects.toBeInstanceOf(NotFoundError);
  });

  it("never writes the seed: an operator's update in between neither conflicts with a heartbeat nor is undone by it", async () => {
    // Prepare: an operator's update lands between the heartbeat's read and its lease renewal.
    const { service, calls, repo } = garden({
      before: {
        renewLease: async (call, inner) => {
          if (call === 1)
            await inner.updateSeed(
              {
                ...(await inner.getSeed('aws-eu1'))!,
                metadata: { ...(await inner.getSeed('aws-eu1'))!.metadata, labels: { env: 'staging' } },
              },
              '1',
            );
        },
      },
    });
    await service.putSeed('aws-eu1', seedBody());
    // Act
    const seed = (await service.heartbeat('aws-eu1', { conditions: [{ type: 'Ready', status: 'True' }] })).seed;
    // Assess
    expect(calls.updateSeed).toBeUndefined();
    expect(seed.status.conditions.map((c) => c.type)).toEqual(['Ready']);
    const stored = (await repo.getSeed('aws-eu1'))!;
    expect(stored.metadata).toMatchObject({ resourceVersion: '2', labels: { env: 'staging' } });
    expect(stored.status.conditions.map((c) => c.type)).toEqual(['Ready']);
  });

  it('reports GardenletReady Unknown once the lease has expired, and ready again with the next heartbeat', async () => {
    const { service, clock } = garden();
    await service.putSeed('aws-eu1', seedBody());
    await service.heartbeat('aws-eu1', {
      conditions: [
        { type: 'GardenletReady', status: 'True' },
        { type: 'BackupBucketsReady', status: 'True' },
      ],
      leaseDurationSeconds: 30,
    });

    clock.advance(29_999);
    const fresh = await service.getSeed('aws-eu1');
    clock.advance(1);
    const expired = await service.getSeed('aws-eu1');
    const back = (
      await service.heartbeat('aws-eu1', {
        conditions: [
          { type: 'GardenletReady', status: 'True' },
          { type: 'BackupBucketsReady', status: 'True' },
        ],
      })
    ).seed;

    expect(fresh.status.conditions.map((c) => c.status)).toEqual(['True', 'True']);
    expect(expired.status.conditions).toEqual([
      expect.objectContaining({ type: 'BackupBucketsReady', status: 'Unknown', reason: 'AgentStoppedReporting' }),
      expect.objectContaining({
        type: 'GardenletReady',
        status: 'Unknown',
        reason: 'LeaseExpired',
        message: expect.stringContaining('stopped heartbeating'),
      }),
    ]);
    expect(back.status.conditions.find((c) => c.type === 'GardenletReady')).toMatchObject({
      status: 'True',
      lastTransitionTime: clock.now().toISOString(),
    });
  });
});
