import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { s3Api } from '../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import { fenceBound } from '../../core/ownership/index.js';
import { makeSnapshot, planCopyBatches, validateCopyRequest, type SnapshotFields } from '../../core/snapshots/index.js';
import { backupBucket, causeMessage, deployed, putSnapshot, runCopy, s3Client, unique } from './support/aws.js';

// A fence bound of 3 s (the check timeout is the interval) so that waiting tests take seconds, not minutes.
const fenceTimings = { dnsCacheTTL: 500, ownerCheckInterval: 500, unknownGrace: 1_000, fenceTime: 500 };
const BOUND = fenceBound(fenceTimings);
const MiB = 1024 * 1024;

function nowSeconds(): number {
  return Math.floor(Date.now() / 1_000);
}

describe('copy-snapshots state machine on the deployed stack', () => {
  let s3: S3Client;
  beforeAll(() => {
    s3 = s3Client();
  });

  const request = (
    source: S3SnapshotStore,
    destination: S3SnapshotStore,
    technicalID: string,
    extra: Record<string, unknown> = {},
  ) => ({
    technicalID,
    sourceBucket: source.bucket,
    destinationBucket: destination.bucket,
    fenceTimings,
    waitForFinalTimeoutMs: BOUND + 500,
    pollIntervalSeconds: 1,
    multipartThresholdBytes: 5 * MiB,
    ...extra,
  });

  it('copies the final full snapshot (multipart above the threshold), and a second copy skips everything', async () => {
    // Prepare: an older full snapshot and delta, then the final full snapshot of 12 MiB (three copy parts).
    const [source, destination] = [await backupBucket(s3, 'src'), await backupBucket(s3, 'dst')];
    const technicalID = unique('shoot--it--final');
    const t = nowSeconds();
    await putSnapshot(source, {
      technicalID,
      kind: 'Full',
      startRevision: 0,
      lastRevision: 100,
      createdOn: t - 120,
      compressionSuffix: '.gz',
      final: false,
    });
    await putSnapshot(source, {
      technicalID,
      kind: 'Incr',
      startRevision: 101,
      lastRevision: 150,
      createdOn: t - 60,
      compressionSuffix: '.gz',
      final: false,
    });
    const finalKey = await putSnapshot(
      source,
      {
        technicalID,
        kind: 'Full',
        startRevision: 0,
        lastRevision: 200,
        createdOn: t,
        compressionSuffix: '.gz',
        final: true,
      },
      12 * MiB,
    );

    // Act
    const first = await runCopy(request(source, destination, technicalID, { ownerChangedAt: Date.now() - 5_000 }));

    // Assess: only what the restore needs, checksum kept across the multipart copy.
    expect(first.status, causeMessage(first.cause)).toBe('SUCCEEDED');
    expect(first.output).toMatchObject({
      copied: 1,
      skipped: 0,
      bytes: 12 * MiB,
      finalFound: true,
      lastRevision: 200,
      readyToRestore: true,
      readyReason: 'final-snapshot',
    });
    const [from, to] = await Promise.all([source.head(finalKey), destination.head(finalKey)]);
    expect(to).toEqual(from);
    expect(to?.checksum).toMatch(/^sha256:/);
    expect((await destination.list(technicalID)).map((s) => s.key)).toEqual([finalKey]);

    const second = await runCopy(request(source, destination, technicalID, { ownerChangedAt: Date.now() - 5_000 }));
    expect(second.status, causeMessage(second.cause)).toBe('SUCCEEDED');
    expect(second.output).toMatchObject({
      copied: 0,
      skipped: 1,
      bytes: 0,
      bytesSkipped: 12 * MiB,
      finalFound: true,
      lastRevision: 200,
    });
  });

  it('times out without a final snapshot, proceeds with the latest, and is ready only after the fence bound', async () => {
    const [source, destination] = [await backupBucket(s3, 'src'), await backupBucket(s3, 'dst')];
    const technicalID = unique('shoot--it--timeout');
    const t = nowSeconds();
    await putSnapshot(source, {
      technicalID,
      kind: 'Full',
      startRevision: 0,
      lastRevision: 100,
      createdOn: t - 60,
      compressionSuffix: '',
      final: false,
    });
    await putSnapshot(source, {
      technicalID,
      kind: 'Incr',
      startRevision: 101,
      lastRevision: 180,
      createdOn: t - 20,
      compressionSuffix: '',
      final: false,
    });
    // The owner record changes two seconds after the copy starts: the result must wait for the bound from then.
    const ownerChangedAt = Date.now() + 2_000;

    const result = await runCopy(request(source, destination, technicalID, { ownerChangedAt }));

    expect(result.status, causeMessage(result.cause)).toBe('SUCCEEDED');
    expect(result.output).toMatchObject({
      copied: 2,
      finalFound: false,
      lastRevision: 180,
      readyToRestore: true,
      readyReason: 'fence-bound-elapsed',
    });
    expect(result.stoppedAt).toBeGreaterThanOrEqual(ownerChangedAt + BOUND);
    expect(result.stoppedAt - result.startedAt).toBeGreaterThanOrEqual(BOUND);
  });

  it("does not take a final snapshot copied in by an earlier migration for this one: it waits for the source's own", async () => {
    // Prepare the source seed's bucket as a ping-pong migration leaves it: the earlier source's final
    // snapshot, copied in when the shoot came here, then the full snapshot this seed's restored sidecar took
    // of the same revision before serving. The earlier seed's clock ran ahead: its final looks newer by name.
    const [source, destination] = [await backupBucket(s3, 'src'), await backupBucket(s3, 'dst')];
    const technicalID = unique('shoot--it--pingpong');
    const t = nowSeconds();
    const copiedIn = await putSnapshot(source, {
      technicalID,
      kind: 'Full',
      startRevision: 0,
      lastRevision: 1,
      createdOn: t + 20,
      compressionSuffix: '.gz',
      final: true,
    });
    await new Promise((r) => setTimeout(r, 1_100)); // S3's LastModified has whole seconds
    await putSnapshot(source, {
      technicalID,
      kind: 'Full',
      startRevision: 0,
      lastRevision: 1,
      createdOn: t,
      compressionSuffix: '.gz',
      final: false,
    });

    // Act: no final of this migration comes; then one does, with the writes acknowledged since the restore.
    const stale = await runCopy(request(source, destination, technicalID, { ownerChangedAt: Date.now() }));
    const copying = runCopy(
      request(source, destination, technicalID, { ownerChangedAt: Date.now(), waitForFinalTimeoutMs: BOUND + 60_000 }),
    );
    await new Promise((r) => setTimeout(r, 1_500));
    const ownFinal = await putSnapshot(source, {
      technicalID,
      kind: 'Full',
      startRevision: 0,
      lastRevision: 201,
      createdOn: nowSeconds(),
      compressionSuffix: '.gz',
      final: true,
    });
    const fresh = await copying;

    // Assess: the old final never ended a wait; the source's own final did.
    expect(stale.status, causeMessage(stale.cause)).toBe('SUCCEEDED');
    expect(stale.output).toMatchObject({ finalFound: false, lastRevision: 1, readyReason: 'fence-bound-elapsed' });
    expect(stale.output?.finalKey ?? null).not.toBe(copiedIn);
    expect(fresh.status, causeMessage(fresh.cause)).toBe('SUCCEEDED');
    expect(fresh.output).toMatchObject({ finalFound: true, lastRevision: 201, readyReason: 'final-snapshot' });
    expect((await destination.list(technicalID)).map((s) => s.key)).toContain(ownFinal);
  });

  it('reports a copy without a known owner change as not ready', async () => {
    const [source, destination] = [await backupBucket(s3, 'src'), await backupBucket(s3, 'dst')];
    const technicalID = unique('shoot--it--unknown');
    await putSnapshot(source, {
      technicalID,
      kind: 'Full',
      startRevision: 0,
      lastRevision: 10,
      createdOn: nowSeconds(),
      compressionSuffix: '',
      final: false,
    });

    const result = await runCopy(request(source, destination, technicalID));

    expect(result.status, causeMessage(result.cause)).toBe('SUCCEEDED');
    expect(result.output).toMatchObject({
      copied: 1,
      finalFound: false,
      readyToRestore: false,
      readyReason: 'owner-change-unknown',
    });
  });

  it('resumes a copy interrupted halfway: what arrived intact is skipped, the rest copied', async () => {
    const [source, destination] = [await backupBucket(s3, 'src'), await backupBucket(s3, 'dst')];
    const technicalID = unique('shoot--it--resume');
    const t = nowSeconds();
    await putSnapshot(
      source,
      {
        technicalID,
        kind: 'Full',
        startRevision: 0,
        lastRevision: 100,
        createdOn: t - 100,
        compressionSuffix: '',
        final: false,
      },
      4_096,
    );
    for (let i = 1; i <= 19; i++) {
      await putSnapshot(
        source,
        {
          technicalID,
          kind: 'Incr',
          startRevision: 100 * i + 1,
          lastRevision: 100 * (i + 1),
          createdOn: t - 100 + i,
          compressionSuffix: '',
          final: false,
        },
        1_000 + i,
      );
    }
    await putSnapshot(
      source,
      {
        technicalID,
        kind: 'Full',
        startRevision: 0,
        lastRevision: 2_000,
        createdOn: t,
        compressionSuffix: '',
        final: true,
      },
      8_192,
    );
    // An interrupted copy: half of everything arrived, and one object arrived torn (wrong content).
    const config = validateCopyRequest(
      { technicalID, sourceBucket: source.bucket, destinationBucket: destination.bucket, all: true, fenceTimings },
      Date.now(),
    );
    const plan = await planCopyBatches({ source, config });
    const names = plan.batches.flatMap((b) => b.objects.map((o) => o.name));
    expect(names).toHaveLength(21);
    for (const name of names.slice(0, 10))
      await destination.copyFrom(source.bucket, {
        key: `${technicalID}/v2/${name}`,
        source: (await source.head(`${technicalID}/v2/${name}`))!,
      });
    await destination.put(`${technicalID}/v2/${names[10]}`, new Uint8Array([1, 2, 3]));

    const result = await runCopy(
      request(source, destination, technicalID, { all: true, batchSize: 4, ownerChangedAt: Date.now() }),
    );

    expect(result.status, causeMessage(result.cause)).toBe('SUCCEEDED');
    expect(result.output).toMatchObject({
      copied: 11,
      skipped: 10,
      finalFound: true,
      lastRevision: 2_000,
      readyToRestore: true,
    });
    const copied = await destination.list(technicalID);
    expect(copied.map((s) => s.name).sort()).toEqual([...names].sort());
    for (const s of copied) expect(await destination.head(s.key)).toEqual(await source.head(s.key));
  });

  it('fails with SnapshotStoreMissingBucket when a bucket does not exist', async () => {
    const source = await backupBucket(s3, 'src');
    const missing = new S3SnapshotStore({ bucket: unique('gl-backup-it-missing'), api: s3Api(s3) });
    const result = await runCopy(request(source, missing, 'shoot--it--missing'));
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('SnapshotStoreMissingBucket');
    expect(causeMessage(result.cause)).toContain(`${missing.bucket} does not exist`);
  });

  it('fails with SnapshotStoreAccessDenied when the source bucket belongs to another account', async () => {
    const { awsConfig } = deployed();
    const foreign = new S3Client({
      ...awsConfig,
      forcePathStyle: true,
      credentials: async () => ({ accessKeyId: '111111111111', secretAccessKey: 'test' }),
    });
    const bucket = unique('gl-backup-it-foreign');
    await foreign.send(new CreateBucketCommand({ Bucket: bucket }));
    const destination = await backupBucket(s3, 'dst');
    const result = await runCopy(
      request(new S3SnapshotStore({ bucket, api: s3Api(foreign) }), destination, 'shoot--it--denied'),
    );
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('SnapshotStoreAccessDenied');
    expect(causeMessage(result.cause)).toContain(`access to bucket ${bucket} denied`);
  });

  it('fails with EmptySource when a hibernated source holds no snapshot, and when it holds only deltas', async () => {
    const [source, destination] = [await backupBucket(s3, 'src'), await backupBucket(s3, 'dst')];
    const technicalID = unique('shoot--it--empty');
    const hibernated = await runCopy(request(source, destination, technicalID, { sourceHibernated: true }));
    expect(hibernated.status).toBe('FAILED');
    expect(hibernated.error).toBe('EmptySource');
    expect(causeMessage(hibernated.cause)).toContain(`${source.bucket} holds no snapshot under ${technicalID}/v2/`);

    await putSnapshot(source, {
      technicalID,
      kind: 'Incr',
      startRevision: 5,
      lastRevision: 9,
      createdOn: nowSeconds(),
      compressionSuffix: '',
      final: false,
    });
    const deltasOnly = await runCopy(request(source, destination, technicalID, { sourceHibernated: true }));
    expect(deltasOnly.error).toBe('EmptySource');
    expect(causeMessage(deltasOnly.cause)).toContain('none full');
  });

  it('fails with NoSnapshotBeforeTimeout when nothing appears before the deadline', async () => {
    const [source, destination] = [await backupBucket(s3, 'src'), await backupBucket(s3, 'dst')];
    const technicalID = unique('shoot--it--nothing');
    const result = await runCopy(request(source, destination, technicalID, { ownerChangedAt: Date.now() }));
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('NoSnapshotBeforeTimeout');
    expect(causeMessage(result.cause)).toContain(`no snapshot of ${technicalID} appeared in bucket ${source.bucket}`);
    expect(result.stoppedAt - result.startedAt).toBeGreaterThanOrEqual(BOUND);
  });

  it('rejects a wait-for-final timeout shorter than the fence bound before touching any bucket', async () => {
    const result = await runCopy({
      technicalID: 'shoot--it--short',
      sourceBucket: 'gl-backup-a',
      destinationBucket: 'gl-backup-b',
      fenceTimings,
      waitForFinalTimeoutMs: BOUND - 1,
    });
    expect(result.status).toBe('FAILED');
    expect(result.error).toBe('FenceBoundViolated');
    expect(causeMessage(result.cause)).toContain(`shorter than the fence bound ${BOUND} ms`);
  });

  it('rejects malformed input with InvalidInput', async () => {
    const result = await runCopy({ technicalID: 'shoot--it--bad', sourceBucket: 'gl-backup-a' });
    expect(result.error).toBe('InvalidInput');
    expect(causeMessage(result.cause)).toContain('destinationBucket');
  });

  it('finds the latest and the final snapshot among 10,000 keys (S3 list paging)', async () => {
    const store = await backupBucket(s3, 'many');
    const technicalID = unique('shoot--it--many');
    const t = nowSeconds() - 20_000;
    // A full snapshot every 1,000 objects, deltas in between, the last one final.
    const fields: SnapshotFields[] = Array.from({ length: 10_000 }, (_, i) => {
      const full = i % 1_000 === 0;
      return {
        technicalID,
        kind: full ? 'Full' : 'Incr',
        startRevision: full ? 0 : i * 10 - 9,
        lastRevision: i * 10,
        createdOn: t + i,
        compressionSuffix: '.gz',
        final: false,
      };
    });
    fields.push({
      technicalID,
      kind: 'Full',
      startRevision: 0,
      lastRevision: 99_990,
      createdOn: t + 10_000,
      compressionSuffix: '.gz',
      final: true,
    });
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < fields.length) {
          const f = fields[next++]!;
          await store.put(makeSnapshot(f).key, new Uint8Array(0));
        }
      }),
    );

    const started = performance.now();
    const listing = await store.list(technicalID);
    const listMs = performance.now() - started;

    expect(listing).toHaveLength(10_001);
    expect(listing.at(-1)).toMatchObject({ kind: 'Full', lastRevision: 99_990, final: true });
    const config = validateCopyRequest(
      { technicalID, sourceBucket: store.bucket, destinationBucket: 'gl-backup-unused', fenceTimings },
      Date.now(),
    );
    const plan = await planCopyBatches({ source: store, config });
    expect(plan).toMatchObject({ objects: 1, finalFound: true, lastRevision: 99_990, deltas: 0 });
    console.log(`listed 10,001 snapshot keys in ${listMs.toFixed(0)} ms`);
  });
});
