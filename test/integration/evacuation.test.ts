import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { Route53Client } from '@aws-sdk/client-route-53';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import type { Evacuation } from '../../core/evacuation/record.js';
import type { MigrationRecord } from '../../core/migration/record.js';
import type { HostedControlPlane, Seed } from '../../core/model/seed.js';
import type { Shoot } from '../../core/model/shoot.js';
import { backedSeed, fixture } from '../fixtures/index.js';
import { AgentProcess } from '../harness/agent-process.js';
import { resetGardenState, testGarden } from '../harness/garden.js';
import { TEST_OWNERSHIP_TIMINGS } from '../harness/timings.js';
import { until } from '../harness/until.js';

/**
 * Issue 16, "Must show": a seed that opted in to evacuation hosts 6 shoots; its agent and every sidecar
 * and etcd are killed; the evacuation controller (its rounds driven here, its schedule being off in the
 * test stack) moves all 6 to the other seeds, at most `maxParallel` at once, each serving its keys on its
 * new seed, with the owner record naming the destination and `status.seedName` set.
 */
const garden = testGarden();
const { api, deployment } = garden;
const aws = { endpoint: deployment.awsEndpoint, region: deployment.region, credentials: async () => ({ accessKeyId: 'test', secretAccessKey: 'test' }) };
const lambda = new LambdaClient(aws);
const owners = new Route53OwnerRecords({ hostedZoneId: deployment.outputs.HostedZoneId, api: route53Api(new Route53Client(aws)) });
const workDir = mkdtempSync(join(tmpdir(), 'gl-evacuation-'));
const LOST = 'evac-lost';
const OTHERS = ['evac-a', 'evac-b', 'evac-c'];
const PROJECT = 'evac';
const SHOOTS = Array.from({ length: 6 }, (_, i) => `s${i}`);
const KEYS = 20;
const MAX_PARALLEL = 2;
const AFTER_S = 5;
const agents = new Map<string, AgentProcess>();
let passed = false;


const seed = async (name: string) => (await api.request<Seed>('GET', `/seeds/${name}`)).body;
const controlPlane = async (seedName: string, technicalID: string): Promise<HostedControlPlane | undefined> =>
  (await seed(seedName)).status.controlPlanes?.find((c) => c.technicalID === technicalID);

/** One evacuation round, as the schedule or an event would run it. */
async function round(): Promise<Record<string, unknown>> {
  const res = await lambda.send(new InvokeCommand({ FunctionName: deployment.outputs.EvacuationFunctionName, Payload: Buffer.from(JSON.stringify({ round: true })) }));
  const body = JSON.parse(Buffer.from(res.Payload ?? new Uint8Array()).toString() || '{}') as Record<string, unknown>;
  expect(res.FunctionError, JSON.stringify(body)).toBeUndefined();
  return body;
}

describe('evacuation of a lost seed with real agents', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    const s3 = new S3Client({ ...aws, forcePathStyle: true });
    for (const [i, name] of [LOST, ...OTHERS].entries()) {
      await s3.send(new CreateBucketCommand({ Bucket: `gl-backup-${name}` })).catch(() => undefined);
      const body = backedSeed(name, 20 + i);
      if (name === LOST) body.spec.settings = { evacuation: { enabled: true, after: `${AFTER_S}s`, maxParallel: MAX_PARALLEL } };
      expect((await garden.setup.request('PUT', `/seeds/${name}`, { body })).status).toBe(201);
      const agent = new AgentProcess({ seed: name, deployment, workDir: join(workDir, name), heartbeatIntervalSeconds: 2, ownership: TEST_OWNERSHIP_TIMINGS });
      agent.start();
      agents.set(name, agent);
    }
    for (const name of [LOST, ...OTHERS]) {
      await until(`seed ${name} ready`, async () => (await seed(name)).status.conditions.some((c) => c.type === 'GardenletReady' && c.status === 'True'), 120_000);
    }
  }, 240_000);

  afterAll(async () => {
    await Promise.all([...agents.values()].map((a) => a.stop()));
    if (passed) rmSync(workDir, { recursive: true, force: true });
    else console.log(`evacuation: agent logs kept in ${workDir}`);
  });

  it('moves all 6 shoots of the killed seed, at most maxParallel at once, each serving its keys on its new seed', async () => {
    // Prepare: 6 shoots serving on the seed that opted in, keys in each etcd, snapshotted.
    const ids = new Map<string, string>();
    for (const name of SHOOTS) {
      const shoot = fixture('shoot-dev-api1');
      shoot.metadata = { name, ...(name === 's5' ? { annotations: { 'gardenless.io/evacuation-priority': '10' } } : {}) };
      shoot.spec.seedName = LOST;
      delete shoot.spec.tolerations;
      delete shoot.spec.controlPlane;
      const put = await garden.setup.request<Shoot>('PUT', `/projects/${PROJECT}/shoots/${name}`, { body: shoot });
      expect(put.status).toBe(201);
      ids.set(name, put.body.status.technicalID);
    }
    for (const name of SHOOTS) {
      const url = await until(`${name} serving on ${LOST}`, async () => {
        const cp = await controlPlane(LOST, ids.get(name)!);
        return cp?.active && cp.etcdClientUrl;
      }, 180_000);
      const etcd = new Etcd3({ hosts: url });
      for (let i = 0; i < KEYS; i++) await etcd.put(`evac/${name}/key-${i}`).value(`v${i}`);
      etcd.close();
    }
    // Delta snapshots every 2 s: the bad path restores the latest one, so give it a few.
    await new Promise((r) => setTimeout(r, 8_000));

    // Act: kill the seed's agent, sidecars and etcds; drive evacuation rounds until it ends.
    const lost = agents.get(LOST)!;
    const pids = [...lost.agentPids(), ...lost.descendants()];
    expect(pids.length).toBeGreaterThan(6);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone with its parent.
      }
    }
    const killedAt = Date.now();
    let peak = 0;
    const migrating = async () => {
      let n = 0;
      for (const name of SHOOTS) {
        const res = await api.request<MigrationRecord>('GET', `/projects/${PROJECT}/shoots/${name}/migration`);
        if (res.status === 200 && res.body.state === 'Running') n++;
      }
      return n;
    };
    const startedAt = new Map<string, number>();
    const evacuation = await until('the evacuation to complete', async () => {
      await round();
      peak = Math.max(peak, await migrating());
      const res = await api.request<Evacuation>('GET', `/seeds/${LOST}/evacuation`);
      if (res.status !== 200) return undefined;
      for (const s of res.body.shoots) if (s.state !== 'Pending' && !startedAt.has(s.name)) startedAt.set(s.name, Date.now() - killedAt);
      return res.body.phase === 'Completed' && res.body;
    }, 600_000);
    const elapsed = Date.now() - killedAt;

    // Assess: every shoot Moved, never more than maxParallel migrations at once, the highest priority first.
    expect(evacuation.shoots.map((s) => s.state)).toEqual(SHOOTS.map(() => 'Moved'));
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(MAX_PARALLEL);
    expect(evacuation.shoots[0]!.name).toBe('s5');
    for (const name of SHOOTS) {
      const shoot = (await api.request<Shoot>('GET', `/projects/${PROJECT}/shoots/${name}`)).body;
      const destination = shoot.status.seedName!;
      expect(OTHERS).toContain(destination);
      const migration = (await api.request<MigrationRecord>('GET', `/projects/${PROJECT}/shoots/${name}/migration`)).body;
      expect(migration).toMatchObject({ state: 'Succeeded', mode: 'bad', path: 'bad', destination: { name: destination } });
      const record = await owners.get(`owner.${name}.${PROJECT}.${deployment.outputs.InternalDomain}`);
      expect(record?.value).toBe((await seed(destination)).status.identity);
      const url = await until(`${name} serving on ${destination}`, async () => {
        const cp = await controlPlane(destination, ids.get(name)!);
        return cp?.active && cp.etcdClientUrl;
      });
      const etcd = new Etcd3({ hosts: url });
      expect(await etcd.getAll().prefix(`evac/${name}/`).count()).toBe(KEYS);
      etcd.close();
    }
    passed = true;
    console.log(`evacuation: 6 shoots moved ${(elapsed / 1000).toFixed(1)} s after the kill (after ${AFTER_S} s, lease 6 s), peak ${peak} migrations at once (maxParallel ${MAX_PARALLEL}); moves began at ${[...startedAt.values()].map((ms) => (ms / 1000).toFixed(0)).join(', ')} s`);
  }, 900_000);
});
