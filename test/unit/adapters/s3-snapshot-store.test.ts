import { describe, expect, it } from 'vitest';
import type { S3Api } from '../../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../../adapters/s3/snapshot-store.js';
import { quoteTxt, unquoteTxt } from '../../../adapters/route53/owner-records.js';
import { SnapshotNotFoundError, SnapshotStoreError } from '../../../core/snapshots/index.js';

function failing(error: { name: string; status?: number }): S3Api {
  const fail = async (): Promise<never> => {
    throw Object.assign(new Error(error.name), { name: error.name, $metadata: { httpStatusCode: error.status } });
  };
  return new Proxy({} as S3Api, { get: () => fail });
}

describe('S3SnapshotStore error mapping', () => {
  it.each([
    [{ name: 'NoSuchBucket', status: 404 }, 'MissingBucket'],
    [{ name: 'AccessDenied', status: 403 }, 'AccessDenied'],
    [{ name: 'SlowDown', status: 503 }, 'Throttled'],
    [{ name: 'ThrottlingException', status: 400 }, 'Throttled'],
    [{ name: 'InternalError', status: 500 }, 'Unavailable'],
    [{ name: 'TimeoutError' }, 'Unavailable'],
  ])('%o on list is SnapshotStoreError %s', async (error, reason) => {
    const store = new S3SnapshotStore({ bucket: 'gl-backup-x', api: failing(error) });
    const thrown = await store.list('shoot--a--b').catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(SnapshotStoreError);
    expect((thrown as SnapshotStoreError).reason).toBe(reason);
    expect((thrown as Error).message).toContain('gl-backup-x');
  });

  it('reports a bare 404 of HeadBucket as a missing bucket, and of HeadObject as a missing key', async () => {
    const store = new S3SnapshotStore({ bucket: 'gl-backup-x', api: failing({ name: 'NotFound', status: 404 }) });
    await expect(store.checkBucket()).rejects.toMatchObject({ reason: 'MissingBucket' });
    expect(await store.head('shoot--a--b/v2/Full-00000000-00000001-1')).toBeUndefined();
  });

  it('reports NoSuchKey on get as SnapshotNotFoundError', async () => {
    const store = new S3SnapshotStore({ bucket: 'gl-backup-x', api: failing({ name: 'NoSuchKey', status: 404 }) });
    await expect(store.get('k')).rejects.toBeInstanceOf(SnapshotNotFoundError);
  });
});

describe('TXT quoting', () => {
  it.each(['seed-a-1', 'with "quotes"', 'back\\slash', 'x'.repeat(300), `${'"'.repeat(200)}`])(
    'round-trips %s',
    (value) => {
      const quoted = quoteTxt(value);
      for (const chunk of quoted.match(/"((?:[^"\\]|\\.)*)"/g) ?? []) expect(chunk.length - 2).toBeLessThanOrEqual(255);
      expect(unquoteTxt(quoted)).toBe(value);
    },
  );
});
