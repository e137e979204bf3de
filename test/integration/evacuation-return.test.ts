import { LambdaClient } from '@aws-sdk/client-lambda';
import { Route53Client } from '@aws-sdk/client-route-53';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import type { Evacuation } from '../../core/evacuation/record.js';
import type { HostedControlPlane, Seed } from '../../core/model/seed.js';
import type { Shoot } from '../../core/model/shoot.js';
import { backedSeed } from '../../harness/fixtures/index.js';
import { registerSeedWithAgent, type AgentProcess } from '../../harness/agent-process.js';
import { evacuationRound, hasKeys, shootOn, writeKeys } from '../../harness/evacuation.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { TEST_OWNERSHIP_TIMINGS } from '../../harness/timings.js';
import { until } from '../../harness/until.js';

/**
 * Issue 16: a seed that comes back during its evacuation, and a shoot that fits nowhere. Seed RETURNS
 * (opted in, one move at a time) hosts three shoots; its agent freezes (its etcds and sidecars keep
 * running: the seed is cut off from the garden, not dead), so its lease runs out and the evacuation
 * starts (rounds driven here; the test stack's schedule is off). The only destination holds one shoot:
 * the first shoot moves, the second fits nowhere and shows why on itself (GET shoot: status.scheduling)
 * until the destination's capacity is raised and it moves too. While that move runs the seed's agent
 * wakes: the move finishes, the evacuation ends Stopped, the seed releases the two shoots it no longer
 * owns (no etcd, sidecar or data left there), and the third shoot stays on it, serving its keys.
 */
const garden = testGarden();
const { api, deployment, aws } = garden;
const lambda = new LambdaClient(aws);
const owners = new Route53OwnerRecords({
  hostedZoneId: deployment.outputs.HostedZoneId,
  api: route53Api(new Route53Client(aws)),
});
const workDir = mkdtempSync(join(tmpdir(), 'gl-evacuation-return-'));
const RETURNS = 'evac-returns';
const DESTINATION = 'evac-dest';
const POOL = { pool: 'evac-return' };
const PROJECT = 'back';
/** By priority: r0 moves first, r1 waits for capacity, r2 is never moved. */
const SHOOTS = ['r0', 'r1', 'r2'];
const KEYS = 5;
const agents = new Map<string, AgentProcess>();
const ids = new Map<string, string>();
let passed = false;

const seed = async (name: string): Promise<Seed | undefined> => {
  const res = await garden.setup.request<Seed>('GET', `/seeds/${name}`).catch(() => undefined);
  return res?.status === 200 ? res.body : undefined;
};
const controlPlane = async (seedName: string, shoot: string): Promise<HostedControlPlane | undefined> =>
  (await seed(seedName))?.status.controlPlanes?.find((c) => c.technicalID === ids.get(shoot));
const shootOf = async (name: string) => (await api.request<Shoot>('GET', `/projects/${PROJECT}/shoots/${name}`)).body;
const evacuation = async () => {
  const res = await api.request<Evacuation>('GET', `/seeds/${RETURNS}/evacuation`);
  return res.status === 200 ? res.body : undefined;
};
const stateOf = (e: Evacuation | undefined, name: string) => e?.shoots.find((s) => s.name === name)?.state;

function seedBody(name: string, i: number, capacity?: number) {
  const body = backedSeed(name, 40 + i);
  if (name === RETURNS)
    body.spec.settings = {
      evacuation: { enabled: true, after: '5s', maxParallel: 1, destinationSelector: { matchLabels: POOL } },
    };
  else body.metadata.labels = POOL;
  if (capacity !== undefined) body.spec.capacity = { shoots: capacity };
  return body;
}

async function round(): Promise<void> {
  expect((await evacuationRound(lambda, deployment.outputs.EvacuationFunctionName)).error).toBeUndefined();
}

/** Every key of the shoot, with its value, from the etcd the seed reports for it. */
async function servesKeys(seedName: string, shoot: string): Promise<boolean> {
  const cp = await controlPlane(seedName, shoot);
  return cp?.active === true && cp.etcdClientUrl !== undefined && hasKeys(cp.etcdClientUrl, `back/${shoot}/`, KEYS);
}

/** The seed's processes (agent, sidecars, etcds) whose command line names the shoot's technical ID. */
function processesOf(seedName: string, shoot: string): number[] {
  return agents
    .get(seedName)!
    .descendants()
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(ids.get(shoot)!);
      } catch {
        return false;
      }
    });
}

describe('a seed that comes back during its evacuation', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    for (const [i, name] of [RETURNS, DESTINATION].entries()) {
      const body = seedBody(name, i, name === DESTINATION ? 1 : undefined);
      agents.set(
        name,
        await registerSeedWithAgent({
          garden: garden.setup,
          seed: name,
          body,
          workDir,
          deployment,
          ownership: TEST_OWNERSHIP_TIMINGS,
        }),
      );
    }
    for (const name of [RETURNS, DESTINATION]) {
      await until(
        `seed ${name} ready`,
        async () =>
          (await seed(name))?.status.conditions.some((c) => c.type === 'GardenletReady' && c.status === 'True'),
        { timeoutMs: 120_000 },
      );
    }
  }, 240_000);

  afterAll(async () => {
    await Promise.all([...agents.values()].map((a) => a.stop()));
    if (passed) rmSync(workDir, { recursive: true, force: true });
    else console.log(`evacuation-return: agent logs kept in ${workDir}`);
  });

  it('keeps the shoots not moved yet, releases those moved away, and ends Stopped; a shoot that fits nowhere shows why on itself until capacity appears', async () => {
    // Prepare: three shoots serving on RETURNS with keys, snapshotted.
    for (const [i, name] of SHOOTS.entries()) {
      const body = shootOn(RETURNS, name, { 'gardenless.io/evacuation-priority': String(10 - i) });
      const put = await garden.setup.request<Shoot>('PUT', `/projects/${PROJECT}/shoots/${name}`, { body });
      expect(put.status).toBe(201);
      ids.set(name, put.body.status.technicalID);
    }
    for (const name of SHOOTS) {
      const url = await until(
        `${name} serving on ${RETURNS}`,
        async () => {
          const cp = await controlPlane(RETURNS, name);
          return cp?.active && cp.etcdClientUrl;
        },
        { timeoutMs: 180_000 },
      );
      await writeKeys(url, `back/${name}/`, KEYS);
    }
    await new Promise((r) => setTimeout(r, 8_000));

    // Act 1: the seed's agent freezes; the evacuation moves r0 to the destination, which is then full.
    expect(agents.get(RETURNS)!.freeze().length).toBeGreaterThan(0);
    const frozenAt = Date.now();
    const waiting = await until(
      'r0 moved and r1 waiting for a seed',
      async () => {
        await round();
        const e = await evacuation();
        return (
          stateOf(e, 'r0') === 'Moved' && e?.shoots.find((s) => s.name === 'r1' && s.state === 'Pending' && s.reason)
        );
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );
    expect(waiting.reason).toMatch(/no seed fits: .*capacity/);
    const pending = await shootOf('r1');
    expect(pending.status.seedName).toBe(RETURNS);
    expect(pending.status.scheduling).toMatchObject({ summary: `evacuation of seed ${RETURNS}: ${waiting.reason}` });
    expect(pending.status.scheduling!.rejected).toEqual(
      expect.arrayContaining([expect.objectContaining({ seed: DESTINATION, filter: 'capacity' })]),
    );

    // Capacity appears: r1 moves, and the reason is gone from it.
    expect(
      (await garden.setup.request('PUT', `/seeds/${DESTINATION}`, { body: seedBody(DESTINATION, 1, 2) })).status,
    ).toBe(200);
    await until(
      'r1 moving',
      async () => {
        await round();
        return stateOf(await evacuation(), 'r1') === 'Migrating';
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    expect((await shootOf('r1')).status.scheduling).toBeUndefined();

    // Act 2: the seed's agent wakes while r1 moves; r2 was never moved.
    agents.get(RETURNS)!.thaw();
    const thawedAt = Date.now();
    const ended = await until(
      'the evacuation to end',
      async () => {
        await round();
        const e = await evacuation();
        return e && !['Running', 'Paused', 'Cancelling', 'Stopping'].includes(e.phase) && e;
      },
      { timeoutMs: 300_000, intervalMs: 1_000 },
    );

    // Assess: Stopped, with r0 and r1 moved and r2 staying.
    expect(ended).toMatchObject({ phase: 'Stopped', reason: expect.stringMatching(/renewed its lease/) });
    expect(Object.fromEntries(ended.shoots.map((s) => [s.name, s.state]))).toEqual({
      r0: 'Moved',
      r1: 'Moved',
      r2: 'Pending',
    });
    const identity = (await seed(DESTINATION))!.status.identity;
    for (const name of ['r0', 'r1']) {
      expect((await shootOf(name)).status.seedName).toBe(DESTINATION);
      expect((await owners.get(`owner.${name}.${PROJECT}.${deployment.outputs.InternalDomain}`))?.value).toBe(identity);
      await until(`${name} serving its keys on ${DESTINATION}`, () => servesKeys(DESTINATION, name), {
        timeoutMs: 60_000,
        intervalMs: 1_000,
      });
      // Released on the seed that came back: not reported, no process, no data.
      await until(
        `${name} released on ${RETURNS}`,
        async () =>
          (await controlPlane(RETURNS, name)) === undefined &&
          processesOf(RETURNS, name).length === 0 &&
          !existsSync(join(workDir, RETURNS, ids.get(name)!)),
        { timeoutMs: 60_000, intervalMs: 1_000 },
      );
    }
    const stayed = await shootOf('r2');
    expect(stayed.status.seedName).toBe(RETURNS);
    expect(stayed.status.scheduling).toBeUndefined();
    expect((await owners.get(`owner.r2.${PROJECT}.${deployment.outputs.InternalDomain}`))?.value).toBe(
      (await seed(RETURNS))!.status.identity,
    );
    expect(await servesKeys(RETURNS, 'r2')).toBe(true);
    expect(processesOf(RETURNS, 'r2').length).toBeGreaterThan(0);
    passed = true;
    console.log(
      `evacuation-return: r0 moved, r1 waited for capacity then moved; the seed's agent woke ${((thawedAt - frozenAt) / 1000).toFixed(0)} s after it froze; Stopped ${((Date.parse(ended.endedAt!) - thawedAt) / 1000).toFixed(1)} s later, r0 and r1 released on it, r2 serving on it`,
    );
  }, 900_000);
});
