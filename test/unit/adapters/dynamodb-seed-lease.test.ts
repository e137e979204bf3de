import { describe, expect, it } from 'vitest';
import { DynamoGardenRepository } from '../../../adapters/dynamodb/garden-repository.js';
import { TABLE_INDEXES } from '../../../adapters/dynamodb/keys.js';
import { REPORT_CHUNK_BYTES } from '../../../adapters/dynamodb/seed-lease-items.js';
import { HEARTBEAT_MAX_BODY_BYTES } from '../../../core/model/seed.js';
import { newSeed } from '../../../core/garden/seed-resource.js';
import type { SeedLease } from '../../../core/garden/seed-lease.js';
import { parseInput } from '../../../core/garden/validate.js';
import { seedInput, type HostedControlPlane } from '../../../core/model/seed.js';
import { DynamoDbFake } from '../../harness/dynamodb-fake.js';
import { T0, seedBody } from '../garden/builders.js';

const at = (s: number) => new Date(T0.getTime() + s * 1_000).toISOString();

function planes(count: number, probedAt: number, overrides: Partial<HostedControlPlane> = {}): HostedControlPlane[] {
  return Array.from({ length: count }, (_, i) => ({
    technicalID: `shoot--dev--s${i}`,
    active: true,
    internalProbe: 'Success' as const,
    // The agent probes its planes one after the other: later planes a little later.
    internalProbeTime: at(probedAt + i / 1_000),
    externalUrl: `https://lb.example/s${i}`,
    ...overrides,
  }));
}

/** Planes as an agent reports an HA (`node`) shoot's: three of each server, their pods and members (about 5 KB). */
function bulky(count: number, probedAt: number): HostedControlPlane[] {
  const components = [
    'etcd',
    'kube-apiserver',
    'kube-controller-manager',
    'kube-scheduler',
    'gardener-resource-manager',
  ];
  return planes(count, probedAt).map((p) => ({
    ...p,
    components: Object.fromEntries(components.map((c) => [c, { replicas: 3 }])),
    etcdMembers: [0, 1, 2].map((k) => ({
      name: `etcd-main-${k}`,
      role: k === 0 ? ('leader' as const) : ('follower' as const),
      ready: true,
      healthy: true,
      fenced: false,
    })),
    pods: components.flatMap((c) =>
      [0, 1, 2].map((k) => ({
        name: `${c}-${p.technicalID}-${k}`,
        uid: `${p.technicalID}-${c}-${k}`,
        labels: { 'gardener.cloud/role': 'controlplane', app: c, 'gardener.cloud/shoot': p.technicalID },
        state: 'Running',
      })),
    ),
  }));
}

async function garden() {
  const fake = new DynamoDbFake(Object.values(TABLE_INDEXES));
  const repo = new DynamoGardenRepository({
    tableName: 'garden',
    client: fake.client(),
    clock: { now: () => new Date(at(10)) },
  });
  const seed = await repo.createSeed(newSeed('aws-eu1', parseInput(seedInput, seedBody()), { now: T0, uuid: 'u-1' }));
  const beat = (controlPlanes: HostedControlPlane[], renewedAt: number) => {
    const lease: SeedLease = {
      seed: 'aws-eu1',
      holderIdentity: seed.status.identity,
      renewTime: at(renewedAt),
      leaseDurationSeconds: 30,
      conditions: [{ type: 'GardenletReady', status: 'True' }],
      controlPlanes,
    };
    return repo.renewLease(lease);
  };
  const written = () => {
    const writes = fake.calls.filter((c) => c.operation === 'TransactWriteItems');
    fake.calls.length = 0;
    return writes.map((w) => (w.input.TransactItems as object[]).length);
  };
  return { fake, repo, beat, written };
}

describe('a seed lease and its report of control planes', () => {
  it('writes the report only when it changed; a heartbeat that changes only probe times writes the lease alone', async () => {
    // Prepare
    const { repo, beat, written } = await garden();

    // Act
    await beat(planes(3, 1), 1);
    const first = written();
    await beat(planes(3, 2), 2);
    const unchanged = written();
    await beat(planes(3, 3, { active: false }), 3);
    const changed = written();

    // Assess: the first and the changed one try the lease alone, then write lease and report (identity, lease, one chunk).
    expect(first).toEqual([2, 3]);
    expect(unchanged).toEqual([2]);
    expect(changed).toEqual([2, 3]);
    const seed = await repo.getSeed('aws-eu1');
    expect(seed?.status.controlPlanes?.map((p) => p.active)).toEqual([false, false, false]);
  });

  it('reads a probe time no later than the agent took it: the earliest of the heartbeat, or the stored one if later', async () => {
    // Prepare: the report was written with probes at 1 s; the next heartbeat probes at 5 s and changes nothing else.
    const { repo, beat } = await garden();
    await beat(planes(3, 1), 1);
    await beat(planes(3, 5), 5);

    // Act
    const reported = (await repo.getSeed('aws-eu1'))!.status.controlPlanes!;

    // Assess: every plane reads as probed at the heartbeat's earliest probe (5 s), never at its own later one.
    expect(reported.map((p) => p.internalProbeTime)).toEqual([at(5), at(5), at(5)]);
    for (const [i, p] of reported.entries())
      expect(Date.parse(p.internalProbeTime!)).toBeLessThanOrEqual(Date.parse(at(5 + i / 1_000)));
  });

  it('holds more planes than one item could, in chunks DynamoDB takes, and lists seeds with or without them', async () => {
    // Prepare: three chunks' worth of planes (the fake refuses an item over 400 KB, as DynamoDB does).
    const { repo, beat } = await garden();
    const many = Math.ceil((2.5 * REPORT_CHUNK_BYTES) / JSON.stringify(bulky(1, 1)[0]).length);

    // Act
    await beat(bulky(many, 1), 1);
    await beat(bulky(10, 2), 2);
    const shrunk = await repo.getSeed('aws-eu1');
    await beat(bulky(many, 3), 3);
    const [listed] = (await repo.listSeeds({ limit: 10 })).items;
    const [healthOnly] = (await repo.listSeeds({ limit: 10 }, { controlPlanes: false })).items;

    // Assess: the shorter report ignores the longer one's old chunks; the lease alone carries no planes.
    expect(shrunk?.status.controlPlanes).toHaveLength(10);
    expect(listed?.status.controlPlanes).toHaveLength(many);
    expect(listed?.status.controlPlanes?.at(-1)).toMatchObject({
      technicalID: `shoot--dev--s${many - 1}`,
      pods: bulky(many, 3).at(-1)!.pods,
    });
    expect(healthOnly?.status).not.toHaveProperty('controlPlanes');
    expect(healthOnly?.status.lastHeartbeatTime).toBe(at(3));
  });

  it("reads one seed's health without its report: its item and its lease, none of the report's chunks", async () => {
    // Prepare: a report of three chunks.
    const { fake, repo, beat } = await garden();
    const many = Math.ceil((2.5 * REPORT_CHUNK_BYTES) / JSON.stringify(bulky(1, 1)[0]).length);
    await beat(bulky(many, 4), 4);
    fake.calls.length = 0;

    // Act
    const healthOnly = await repo.getSeed('aws-eu1', { controlPlanes: false });
    const reads = fake.calls.map((c) => ({
      operation: c.operation,
      keys: Object.values(c.input.RequestItems as Record<string, { Keys: { sk: { S: string } }[] }>).flatMap((r) =>
        r.Keys.map((k) => k.sk.S),
      ),
    }));
    const missing = await repo.getSeed('aws-us1', { controlPlanes: false });

    // Assess: one consistent read of two small items; the lease's health is there, its planes are not.
    expect(reads).toEqual([{ operation: 'BatchGetItem', keys: ['SEED', 'LEASE'] }]);
    expect(healthOnly?.metadata.name).toBe('aws-eu1');
    expect(healthOnly?.status).not.toHaveProperty('controlPlanes');
    expect(healthOnly?.status.lastHeartbeatTime).toBe(at(4));
    expect(healthOnly?.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'GardenletReady', status: 'True' }),
    );
    expect((await repo.getSeed('aws-eu1'))?.status.controlPlanes).toHaveLength(many);
    expect(missing).toBeUndefined();
  });

  it('stores the largest report a heartbeat may carry, with its lease, in one transaction DynamoDB takes', async () => {
    // Prepare: as many planes as a heartbeat body of the largest size holds.
    const { repo, beat } = await garden();
    const count = Math.floor(HEARTBEAT_MAX_BODY_BYTES / (JSON.stringify(bulky(1, 1)[0]).length + 1));

    // Act: the fake refuses a transaction over 4 MB or 100 items, as DynamoDB does.
    await beat(bulky(count, 1), 1);
    await beat(bulky(count - 1, 2), 2);

    // Assess
    expect((await repo.getSeed('aws-eu1'))?.status.controlPlanes).toHaveLength(count - 1);
  });

  it('reads a report again that a heartbeat replaced between the reads of its lease and its chunks, never a part of it', async () => {
    // Prepare: two reports, three chunks each, as the table held each after its heartbeat.
    const { fake, repo, beat } = await garden();
    const many = Math.ceil((2.5 * REPORT_CHUNK_BYTES) / JSON.stringify(bulky(1, 1)[0]).length);
    await beat(bulky(many, 1), 1);
    const first = fake.snapshot();
    await beat(bulky(many - 1, 2), 2);
    const second = fake.snapshot();
    const isLease = (key: string) => key.endsWith('|LEASE');
    // The first report's lease beside the second's chunks: what a partition query finds mid-heartbeat.
    const mixed = new Map([...second].map(([key, item]) => [key, isLease(key) ? first.get(key)! : item]));
    /** The table as `before`, then as after the second heartbeat from the first read of `trigger` on. */
    const heartbeatBefore = (before: typeof first, trigger: (input: Record<string, unknown>) => boolean) => {
      fake.restore(before);
      fake.beforeAnswer = (operation, input) => {
        if (operation !== 'BatchGetItem' || !trigger(input)) return;
        fake.restore(second);
        fake.beforeAnswer = undefined;
      };
    };

    // Act: a list reads the first lease, then the second heartbeat lands before it reads the chunks; a get
    // finds the mixed partition, and the second heartbeat's table when it reads again.
    heartbeatBefore(first, (input) => JSON.stringify(input).includes('REPORT#'));
    const [listed] = (await repo.listSeeds({ limit: 10 })).items;
    heartbeatBefore(mixed, () => true);
    const got = await repo.getSeed('aws-eu1');

    // Assess: each read the second report whole.
    expect(listed?.status.controlPlanes).toHaveLength(many - 1);
    expect(got?.status.controlPlanes).toHaveLength(many - 1);
  });

  it('deletes the report with the seed once its agent reports nothing', async () => {
    // Prepare
    const { fake, repo, beat } = await garden();
    await beat(bulky(200, 1), 1);
    await beat([], 2);

    // Act
    await repo.deleteSeed('aws-eu1');

    // Assess: no item of the seed's partition is left.
    fake.calls.length = 0;
    const { QueryCommand } = await import('@aws-sdk/client-dynamodb');
    const left = await fake.client().send(
      new QueryCommand({
        TableName: 'garden',
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: 'SEED#aws-eu1' } },
      }),
    );
    expect(left.Items).toEqual([]);
  });
});
