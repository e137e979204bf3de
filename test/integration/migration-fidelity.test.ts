import { S3Client } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Api } from '../../adapters/s3/s3-api.js';
import { S3SnapshotStore } from '../../adapters/s3/snapshot-store.js';
import type { MigrationRecord } from '../../core/migration/record.js';
import type { LastOperation } from '../../core/model/common.js';
import type { HostedControlPlane } from '../../core/model/seed.js';
import { technicalID } from '../../core/model/names.js';
import { decodeDelta, encodeDelta } from '../../seed/backup-restore/index.js';
import { fixture } from '../../harness/fixtures/index.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import {
  checkLeasedFixture,
  FAITHFUL_FIXTURE,
  readKeySpace,
  writeLeasedFixture,
  type LeasedFixture,
} from '../../harness/scenario/index.js';
import { startLocalSeed, type LocalSeed } from '../../harness/local-seed.js';
import { untilWith } from '../../harness/until.js';

/**
 * The fidelity check in a migration with real seed agents, sidecars and etcds (docs/design.md section 4,
 * "Fidelity"): a delta in the source's bucket loses one event of a transaction, which no revision shows;
 * the restore of the migration refuses it with both digests and ends in Error at restore-etcd, with
 * nothing serving; `migrate` resumes it once the delta is repaired, or with the operator's override,
 * which the record keeps. A good migration hands over keys on a 30-minute lease with their lease.
 */
const garden = testGarden();
const { api, aws, deployment } = garden;
const s3 = new S3Client({ ...aws, forcePathStyle: true });
const project = 'fid';
const workDir = mkdtempSync(join(tmpdir(), 'gl-fidelity-'));
const agents: LocalSeed[] = [];
const logs: string[] = [];
const HEX64 = /[0-9a-f]{64}/g;

type View = MigrationRecord & { progress: number };
interface ShootView {
  status: { seedName?: string; lastOperation?: LastOperation };
}

const bucket = (seed: string) => `gl-backup-${seed}`;
const store = (seed: string) => new S3SnapshotStore({ bucket: bucket(seed), api: s3Api(s3) });

async function startSeed(name: string, networkIndex: number) {
  const local = await startLocalSeed({
    garden: api,
    deployment,
    name,
    networkIndex,
    workDir: join(workDir, name),
    log: (entry) => logs.push(JSON.stringify({ seed: name, ...entry })),
  });
  agents.push(local);
  return local;
}

const until = untilWith({ timeoutMs: 60_000, intervalMs: 250, explain: () => logs.slice(-20).join('\n') });

async function reported(seed: string, name: string): Promise<HostedControlPlane | undefined> {
  const res = await api.request<{ status: { controlPlanes?: HostedControlPlane[] } }>('GET', `/seeds/${seed}`);
  return res.body.status.controlPlanes?.find((p) => p.technicalID === technicalID(project, name));
}

const migration = async (name: string) =>
  (await api.request<View>('GET', `/projects/${project}/shoots/${name}/migration`)).body;

async function settled(name: string): Promise<View> {
  return until(
    `the migration of ${name} to settle`,
    async () => {
      const m = await migration(name);
      return m.state !== 'Running' ? m : undefined;
    },
    { timeoutMs: 240_000 },
  );
}

/**
 * A shoot serving on `seed` with the leased fixture and one transaction of two puts, whose delta in the
 * source's bucket then loses the transaction's second put (header, digest and revisions untouched): the
 * revisions still add up, only the key space does not. Returns the delta's key and its original bytes.
 */
async function corruptedShoot(name: string, seed: string) {
  const body = fixture('shoot-dev-api1');
  body.metadata = { name };
  body.spec.seedName = seed;
  delete body.spec.tolerations;
  delete body.spec.controlPlane;
  expect((await api.request('PUT', `/projects/${project}/shoots/${name}`, { body })).status).toBe(201);
  const url = await until(`${name} serving on ${seed}`, async () => {
    const plane = await reported(seed, name);
    return plane?.active && plane.etcdClientUrl;
  });
  const leased = await writeLeasedFixture(url, `/registry/${name}`);
  const client = new Etcd3({ hosts: url });
  let txn: number;
  try {
    const res = await client.kv.txn({
      compare: [],
      success: [1, 2].map((i) => ({
        request_put: { key: Buffer.from(`/registry/${name}/txn/${i}`), value: Buffer.from(String(i)) },
      })),
    });
    txn = Number(res.header.revision);
  } finally {
    client.close();
  }
  const id = technicalID(project, name);
  const delta = await until(`a delta holding revision ${txn}`, async () =>
    (await store(seed).list(id)).find((s) => s.kind === 'Incr' && s.startRevision <= txn && s.lastRevision >= txn),
  );
  const original = await store(seed).get(delta.key);
  const { header, events } = decodeDelta(original, delta.key);
  const kept = events.filter(
    (e) => !(e.revision === txn && Buffer.from(e.key, 'base64').toString() === `/registry/${name}/txn/2`),
  );
  expect(kept).toHaveLength(events.length - 1);
  await store(seed).put(
    delta.key,
    encodeDelta({
      ...header,
      events: kept,
      leases: header.leases ?? [],
      digest: header.digest,
      gzip: delta.compressionSuffix === '.gz',
    }),
  );
  return { id, leased, txn, delta: delta.key, original };
}

/** The migration ended in Error at restore-etcd, refused with both digests, and the destination serves nothing. */
async function expectRefused(name: string, destination: string): Promise<void> {
  const m = await settled(name);
  expect(m.state, JSON.stringify(m.steps.map((s) => [s.id, s.state, s.message]))).toBe('Error');
  expect(m.error?.step).toBe('restore-etcd');
  expect(m.error?.message).toContain('EtcdRestoreFailed');
  const digests = new Set(m.error?.message.match(HEX64));
  expect(digests.size, m.error?.message).toBe(2);
  const shoot = await api.request<ShootView>('GET', `/projects/${project}/shoots/${name}`);
  expect(shoot.body.status.lastOperation?.state).toBe('Error');
  expect(shoot.body.status.lastOperation?.description).toContain('restore-etcd');
  const plane = await reported(destination, name);
  expect(plane?.active ?? false).toBe(false);
}

describe('the fidelity check of a migration, with real agents, sidecars and etcds', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    await startSeed('fid-a', 80);
    await startSeed('fid-b', 81);
  });

  afterAll(async () => {
    await Promise.all(agents.splice(0).map((x) => x.agent.stop()));
    rmSync(workDir, { recursive: true, force: true });
  });

  it('the override is refused where no restore failed (422)', async () => {
    const body = fixture('shoot-dev-api1');
    body.metadata = { name: 'plain' };
    body.spec.seedName = 'fid-a';
    delete body.spec.tolerations;
    delete body.spec.controlPlane;
    expect((await api.request('PUT', `/projects/${project}/shoots/plain`, { body })).status).toBe(201);
    const res = await api.request<{ code: string; field: string }>(
      'POST',
      `/projects/${project}/shoots/plain/migrate`,
      {
        body: { destinationSeed: 'fid-b', acceptEtcdDigestMismatch: true },
      },
    );
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'OverrideNotApplicable', field: 'acceptEtcdDigestMismatch' });
  });

  it('a delta that lost an event ends the migration in Error at restore-etcd with both digests; repaired, migrate resumes it and every leased key keeps its lease', async () => {
    // Prepare
    const c = await corruptedShoot('repaired', 'fid-a');

    // Act 1: a good-path migration.
    const started = await api.request('POST', `/projects/${project}/shoots/repaired/migrate`, {
      body: { destinationSeed: 'fid-b', mode: 'good' },
    });
    expect(started.status).toBe(202);

    // Assess 1: refused loudly, nothing serves the wrong history; the restore ahead refused it too.
    await expectRefused('repaired', 'fid-b');
    const failed = await migration('repaired');
    expect(failed.steps.find((s) => s.id === 'restore-etcd-ahead')?.message).toMatch(/digest/);

    // Act 2: the operator repairs the delta in the destination's bucket (the copy the restore reads), then resumes.
    await store('fid-b').put(c.delta, c.original);
    const resumed = await api.request<{ resumed: boolean }>('POST', `/projects/${project}/shoots/repaired/migrate`, {
      body: {},
    });
    expect(resumed.status).toBe(202);
    expect(resumed.body.resumed).toBe(true);

    // Assess 2: Succeeded, the check named, no override; the history and the leases as the source had them.
    const m = await settled('repaired');
    expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
    expect(m.overrides).toBeUndefined();
    expect(m.steps.find((s) => s.id === 'restore-etcd')?.message).toMatch(
      /key-space digest [0-9a-f]{64} as the source's/,
    );
    const url = await until('etcd serving on fid-b', async () => {
      const plane = await reported('fid-b', 'repaired');
      return plane?.active && plane.etcdClientUrl;
    });
    expect(await checkLeasedFixture(url, c.leased)).toEqual(FAITHFUL_FIXTURE);
    const txn = await readKeySpace(url, { prefix: '/registry/repaired/txn/' });
    expect([...txn.keys.values()].map((k) => k.modRevision)).toEqual([c.txn, c.txn]);
  }, 420_000);

  it('resumed with the operator override, the destination serves what it restored and the record shows the override', async () => {
    // Prepare
    const c = await corruptedShoot('overridden', 'fid-a');
    await api.request('POST', `/projects/${project}/shoots/overridden/migrate`, {
      body: { destinationSeed: 'fid-b', mode: 'good' },
    });
    await expectRefused('overridden', 'fid-b');

    // Act: resume with the override, the delta still corrupt.
    const resumed = await api.request('POST', `/projects/${project}/shoots/overridden/migrate`, {
      body: { acceptEtcdDigestMismatch: true },
    });
    expect(resumed.status).toBe(202);

    // Assess: Succeeded with the override in the record and in the step, and what was lost is missing.
    const m = await settled('overridden');
    expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
    expect(m.overrides?.etcdDigestMismatch).toMatchObject({ attempt: 2 });
    expect(m.steps.find((s) => s.id === 'restore-etcd')?.message).toMatch(/OVERRIDDEN by the operator/);
    const url = await until('etcd serving on fid-b', async () => {
      const plane = await reported('fid-b', 'overridden');
      return plane?.active && plane.etcdClientUrl;
    });
    const txn = await readKeySpace(url, { prefix: '/registry/overridden/txn/' });
    expect([...txn.keys.keys()]).toEqual(['/registry/overridden/txn/1']);
    expect(await checkLeasedFixture(url, c.leased as LeasedFixture)).toEqual(FAITHFUL_FIXTURE);
  }, 420_000);
});
