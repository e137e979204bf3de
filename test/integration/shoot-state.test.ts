import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { DynamoShootStateStore } from '../../adapters/dynamodb/shoot-state-store.js';
import { S3BlobStore } from '../../adapters/s3/blob-store.js';
import { s3Api } from '../../adapters/s3/s3-api.js';
import {
  annotate,
  memoryActuators,
  MemoryExtensionWorld,
  MIGRATE_ORDER,
  operateAll,
  RESTORE_ORDER,
  shootExtensions,
} from '../../core/extensions/index.js';
import {
  applyShootState,
  BLOB_THRESHOLD_BYTES,
  BlobIntegrityError,
  BlobNotFoundError,
  collectShootState,
  isBlobRef,
  loadShootState,
  persistShootState,
  sha256Hex,
  ShootStateConflictError,
  type ShootState,
} from '../../core/shootstate/index.js';
import { emulatorCredentials } from '../../local/aws-env.js';

function adapters() {
  const deployment = inject('deployment');
  const config = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: emulatorCredentials() };
  const s3 = new S3Client({ ...config, forcePathStyle: true });
  const bucket = deployment.outputs.StateBucketName;
  return {
    s3,
    bucket,
    blobs: new S3BlobStore({ bucket, api: s3Api(s3) }),
    store: new DynamoShootStateStore({ tableName: deployment.outputs.TableName, client: new DynamoDBClient(config) }),
  };
}

let counter = 0;
const aShoot = () => {
  const name = `state-${process.pid}-${++counter}`;
  return { project: 'it', name, technicalID: `shoot--it--${name}` };
};

describe('S3BlobStore against the emulator', () => {
  it('writes with SSE and the sha256 in metadata, and reads back verified', async () => {
    // Prepare
    const { blobs, s3, bucket } = adapters();
    const body = new TextEncoder().encode(JSON.stringify({ hello: 'world' }));

    // Act
    const ref = await blobs.put(`it/${process.pid}/blob-1`, body);
    const read = await blobs.get(ref);
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: ref.key }));

    // Assess
    expect(ref).toEqual({ bucket, key: `it/${process.pid}/blob-1`, sha256: sha256Hex(body), size: body.byteLength });
    expect(Buffer.from(read).equals(Buffer.from(body))).toBe(true);
    expect(head.Metadata?.sha256).toBe(sha256Hex(body));
    expect(head.ServerSideEncryption).toBe('AES256');
  });

  it('refuses an object replaced behind its back, and names a missing one', async () => {
    // Prepare
    const { blobs, s3, bucket } = adapters();
    const ref = await blobs.put(`it/${process.pid}/blob-2`, new TextEncoder().encode('"original"'));
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: ref.key, Body: '"tampered"', Metadata: { sha256: ref.sha256 } }),
    );

    // Act / Assess
    await expect(blobs.get(ref)).rejects.toBeInstanceOf(BlobIntegrityError);
    await expect(blobs.get({ ...ref, key: `it/${process.pid}/absent` })).rejects.toBeInstanceOf(BlobNotFoundError);
  });
});

describe('DynamoShootStateStore against the emulator', () => {
  it('versions saves and refuses stale ones with the current version', async () => {
    // Prepare
    const { store, blobs } = adapters();
    const shoot = aShoot();
    const state: ShootState = {
      apiVersion: 'core.gardenless.io/v1',
      kind: 'ShootState',
      shoot,
      extensions: [],
      collectedAt: new Date(0).toISOString(),
      collectedAfter: 'reconcile',
    };

    // Act
    const first = await persistShootState({ state, store, blobs, expectedVersion: 0 });
    const second = await persistShootState({ state, store, blobs, expectedVersion: 1 });
    const unconditional = await persistShootState({ state, store, blobs });
    const stale = persistShootState({ state, store, blobs, expectedVersion: 1 });
    const create = persistShootState({ state, store, blobs, expectedVersion: 0 });

    // Assess
    expect([first.version, second.version, unconditional.version]).toEqual([1, 2, 3]);
    await expect(stale).rejects.toMatchObject({
      name: 'ShootStateConflictError',
      details: { expectedVersion: 1, currentVersion: 3 },
    });
    await expect(create).rejects.toBeInstanceOf(ShootStateConflictError);
    expect((await store.load(shoot))?.version).toBe(3);
  });

  it('lets exactly one of 10 concurrent saves on the same version win', async () => {
    // Prepare
    const { store, blobs } = adapters();
    const shoot = aShoot();
    const state: ShootState = {
      apiVersion: 'core.gardenless.io/v1',
      kind: 'ShootState',
      shoot,
      extensions: [],
      collectedAt: new Date(0).toISOString(),
      collectedAfter: 'reconcile',
    };
    await persistShootState({ state, store, blobs, expectedVersion: 0 });

    // Act
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => persistShootState({ state, store, blobs, expectedVersion: 1 })),
    );

    // Assess
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof ShootStateConflictError)).toHaveLength(
      9,
    );
  });

  it('carries migrated extensions across seeds, with a state above 100 KB in the state bucket', async () => {
    // Prepare
    const { store, blobs, s3, bucket } = adapters();
    const shoot = aShoot();
    const world = new MemoryExtensionWorld();
    const now = () => new Date('2025-01-01T00:00:00Z');
    const created = await operateAll({
      resources: shootExtensions({ technicalID: shoot.technicalID }),
      actuators: memoryActuators({ world, seed: 'source' }),
      now,
      order: RESTORE_ORDER,
    });
    const migrated = await operateAll({
      resources: created.resources.map((r) => annotate(r, 'migrate')),
      actuators: memoryActuators({ world, seed: 'source' }),
      now,
      order: MIGRATE_ORDER,
    });
    const collected = collectShootState({ shoot, resources: migrated.resources, now: now(), seed: 'source' });
    const big = { ...(collected.extensions[0]!.state as object), terraform: 't'.repeat(BLOB_THRESHOLD_BYTES + 1) };
    const state: ShootState = {
      ...collected,
      extensions: collected.extensions.map((e, i) => (i === 0 ? { ...e, state: big } : e)),
    };

    // Act
    const { packed, version } = await persistShootState({ state, store, blobs, expectedVersion: 0 });
    const loaded = await loadShootState({ ...shoot, store, blobs });
    const restored = await operateAll({
      resources: applyShootState({ state: loaded!.state }),
      actuators: memoryActuators({ world, seed: 'destination' }),
      now,
      order: RESTORE_ORDER,
    });

    // Assess
    expect(version).toBe(1);
    const blob = packed.extensions[0]!.state!;
    expect(isBlobRef(blob)).toBe(true);
    expect(packed.extensions.slice(1).every((e) => e.state === undefined || !isBlobRef(e.state))).toBe(true);
    if (isBlobRef(blob)) {
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: blob.ref.key }));
      expect(object.Metadata?.sha256).toBe(blob.ref.sha256);
    }
    expect(loaded?.state).toEqual(state);
    expect(restored.error).toBeUndefined();
    expect(world.seedObjects('destination')).toHaveLength(migrated.resources.length);
  });
});
