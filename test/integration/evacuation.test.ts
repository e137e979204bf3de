import { LambdaClient } from '@aws-sdk/client-lambda';
import { Route53Client } from '@aws-sdk/client-route-53';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import type { Evacuation } from '../../core/evacuation/record.js';
import type { MigrationRecord } from '../../core/migration/record.js';
import type { HostedControlPlane, Seed } from '../../core/model/seed.js';
import type { Shoot } from '../../core/model/shoot.js';
import { backedSeed } from '../../harness/fixtures/index.js';
import { registerSeedWithAgent, type AgentProcess } from '../../harness/agent-process.js';
import { evacuationRound, hasKeys, shootOn, splitBrainFindings, writeKeys } from '../../harness/evacuation.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { TEST_OWNERSHIP_TIMINGS } from '../../harness/timings.js';
import { until } from '../../harness/until.js';

/**
 * Issue 16, "Must show": a seed that opted in to evacuation hosts 6 shoots; its agent and every sidecar
 * and etcd are killed; the evacuation controller moves all 6 to the other seeds, each serving its keys on
 * its new seed, with the owner record naming the destination and `status.seedName` set.
 * Issue 34: at most `maxParallel` moves hold a place at once, and a move frees its place as soon as its etcd
 * waits restored ahead on the destination and the owner record names it (core/evacuation/slots.ts), not at
 * the next round: the test drives rounds only until the first moves start (the schedule is off in the test
 * stack), and the events of the moves (an owner record moved, a migration ended) start every other move.
 */
const garden = testGarden();
const { api, deployment, aws } = garden;
const lambda = new LambdaClient(aws);
const owners = new Route53OwnerRecords({
  hostedZoneId: deployment.outputs.HostedZoneId,
  api: route53Api(new Route53Client(aws)),
});
const workDir = mkdtempSync(join(tmpdir(), 'gl-evacuation-'));
const LOST = 'evac-lost';
const OTHERS = ['evac-a', 'evac-b', 'evac-c'];
/** Two more seeds that opted in, for the global cap, pause and cancel (test 2); the selector keeps test 1's shoots off them. */
const [X, Y] = ['evac-x', 'evac-y'];
const SPARE = { pool: 'spare' };
const PROJECT = 'evac';
const SHOOTS = Array.from({ length: 6 }, (_, i) => `s${i}`);
const KEYS = 20;
const MAX_PARALLEL = 2;
const AFTER_S = 5;
/** The lost seed's sidecars refuse writes once their backup lags 5 s (2 s deltas): the copy's wait is short. */
const BACKUP_LAG_LIMIT = '5s';
/** "Within `after` plus a bounded time": the bound on the rest (leases, six bad-case migrations, two holding a place at a time). */
const EVACUATION_BOUND_MS = 600_000;
const agents = new Map<string, AgentProcess>();
let passed = 0;

/** The seed as read now; undefined when the read failed (a poll tries again: under load the emulator's gateway answers 502s or times out). */
const seed = async (name: string): Promise<Seed | undefined> => {
  const res = await garden.setup.request<Seed>('GET', `/seeds/${name}`).catch((error: unknown) => {
    console.log(`evacuation: GET /seeds/${name} failed (${String(error)}); polling again`);
    return undefined;
  });
  return res?.status === 200 ? res.body : undefined;
};
const controlPlane = async (seedName: string, technicalID: string): Promise<HostedControlPlane | undefined> =>
  (await seed(seedName))?.status.controlPlanes?.find((c) => c.technicalID === technicalID);

/** The seeds of this suite: LOST, X and Y opt in (X and Y one move at a time); the others carry the selector's label. */
function seedBody(name: string, i: number) {
  const body = backedSeed(name, 20 + i);
  if (OTHERS.includes(name)) body.metadata.labels = SPARE;
  if (name === LOST)
    body.spec.settings = {
      evacuation: {
        enabled: true,
        after: `${AFTER_S}s`,
        maxParallel: MAX_PARALLEL,
        destinationSelector: { matchLabels: SPARE },
      },
    };
  if (name === X || name === Y)
    body.spec.settings = {
      evacuation: { enabled: true, after: `${AFTER_S}s`, maxParallel: 1, destinationSelector: { matchLabels: SPARE } },
    };
  return body;
}

/** The most intervals open at one moment. */
function peakOverlap(intervals: readonly number[][]): number {
  const edges = intervals.flatMap(([a, b]) => [
    [a!, 1],
    [b!, -1],
  ]);
  edges.sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!);
  let open = 0;
  let peak = 0;
  for (const [, d] of edges) peak = Math.max(peak, (open += d!));
  return peak;
}

/** Kills a seed's agent with its sidecars and etcds (SIGKILL: nothing is shut down cleanly). */
const kill = (seedName: string): number => agents.get(seedName)!.kill();

const evacuationOf = async (seedName: string) => {
  const res = await api.request<Evacuation>('GET', `/seeds/${seedName}/evacuation`);
  return res.status === 200 ? res.body : undefined;
};
const count = (e: Evacuation | undefined, state: string) => e?.shoots.filter((s) => s.state === state).length ?? 0;

/** One evacuation round, as the schedule or an event would run it. */
async function round(): Promise<Record<string, unknown>> {
  const { body, error } = await evacuationRound(lambda, deployment.outputs.EvacuationFunctionName);
  expect(error).toBeUndefined();
  return body;
}

describe('evacuation of a lost seed with real agents', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    for (const [i, name] of [LOST, ...OTHERS, X, Y].entries()) {
      agents.set(
        name,
        await registerSeedWithAgent({
          garden: garden.setup,
          seed: name,
          body: seedBody(name, i),
          workDir,
          deployment,
          ownership: TEST_OWNERSHIP_TIMINGS,
          backupLagLimit: BACKUP_LAG_LIMIT,
        }),
      );
    }
    for (const name of [LOST, ...OTHERS, X, Y]) {
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
    if (passed === 2) rmSync(workDir, { recursive: true, force: true });
    else console.log(`evacuation: agent logs kept in ${workDir}`);
  });

  it('moves all 6 shoots of the killed seed, each serving its keys on its new seed; at most maxParallel hold a place, and a move frees its place at its owner change: every move after the first two starts from an event, not a round', async () => {
    // Prepare: 6 shoots serving on the seed that opted in, keys in each etcd, snapshotted.
    const ids = new Map<string, string>();
    for (const name of SHOOTS) {
      const body = shootOn(LOST, name, name === 's5' ? { 'gardenless.io/evacuation-priority': '10' } : undefined);
      const put = await garden.setup.request<Shoot>('PUT', `/projects/${PROJECT}/shoots/${name}`, { body });
      expect(put.status).toBe(201);
      ids.set(name, put.body.status.technicalID);
    }
    for (const name of SHOOTS) {
      const url = await until(
        `${name} serving on ${LOST}`,
        async () => {
          const cp = await controlPlane(LOST, ids.get(name)!);
          return cp?.active && cp.etcdClientUrl;
        },
        { timeoutMs: 180_000 },
      );
      await writeKeys(url, `evac/${name}/`, KEYS);
    }
    // Delta snapshots every 2 s: the bad path restores the latest one, so give it a few.
    await new Promise((r) => setTimeout(r, 8_000));

    // Act: kill the seed's agent, sidecars and etcds; drive rounds (the `after` clock) until the first moves start.
    expect(kill(LOST)).toBeGreaterThan(6);
    const killedAt = Date.now();
    // The ownership audit watches throughout: no split brain ever.
    const splitBrain: string[] = [];
    let audits = 0;
    const audit = async () => {
      const findings = await splitBrainFindings(lambda, deployment.outputs.OwnershipAuditFunctionName);
      audits += 1;
      splitBrain.push(
        ...findings.filter((f) => f.project === PROJECT).map((f) => `${f.shoot}: ${f.reason} (${f.message})`),
      );
    };
    let driven = 0;
    const firstWave = await until(
      'the first moves',
      async () => {
        await round();
        driven += 1;
        const e = await evacuationOf(LOST);
        return count(e, 'Migrating') > 0 && e;
      },
      { timeoutMs: AFTER_S * 1_000 + 120_000 },
    );
    expect(count(firstWave, 'Migrating')).toBe(MAX_PARALLEL);
    // From here on no round is driven: only the moves' events wake the controller.
    const evacuation = await until(
      'the evacuation to complete',
      async () => {
        await audit();
        const e = await evacuationOf(LOST);
        return e?.phase === 'Completed' && e;
      },
      { timeoutMs: EVACUATION_BOUND_MS, intervalMs: 1_000 },
    );
    const elapsed = Date.now() - killedAt;
    await audit();

    // Assess: every shoot Moved, the highest priority first, and each one's place freed at its owner change.
    expect(evacuation.shoots.map((s) => s.state)).toEqual(SHOOTS.map(() => 'Moved'));
    expect(evacuation.shoots[0]!.name).toBe('s5');
    expect(splitBrain).toEqual([]);
    expect(audits).toBeGreaterThan(2);
    const claimed = (s: Evacuation['shoots'][number]) => Date.parse(s.startedAt!);
    const freed = (s: Evacuation['shoots'][number]) => Date.parse(s.slotFreedAt!);
    const ended = (s: Evacuation['shoots'][number]) => Date.parse(s.endedAt!);
    for (const s of evacuation.shoots) expect(freed(s), s.name).toBeLessThan(ended(s));
    // At most maxParallel moves held a place at once, while more moved at once (the copy's wait holds none).
    const holding = peakOverlap(evacuation.shoots.map((s) => [claimed(s), freed(s)]));
    const moving = peakOverlap(evacuation.shoots.map((s) => [claimed(s), ended(s)]));
    expect(holding).toBeLessThanOrEqual(MAX_PARALLEL);
    expect(moving).toBeGreaterThan(MAX_PARALLEL);
    // Every move after the first wave was started by a round an event woke, after a place was freed.
    const later = evacuation.shoots.filter(
      (s) => !firstWave.shoots.some((f) => f.name === s.name && f.state === 'Migrating'),
    );
    expect(later).toHaveLength(SHOOTS.length - MAX_PARALLEL);
    const gaps = later.map((s) => {
      const before = evacuation.shoots.map(freed).filter((t) => t <= claimed(s));
      expect(before.length, `${s.name} claimed before any place was free`).toBeGreaterThan(0);
      return claimed(s) - Math.max(...before);
    });
    for (const name of SHOOTS) {
      const shoot = (await api.request<Shoot>('GET', `/projects/${PROJECT}/shoots/${name}`)).body;
      const destination = shoot.status.seedName!;
      expect(OTHERS).toContain(destination);
      const migration = (await api.request<MigrationRecord>('GET', `/projects/${PROJECT}/shoots/${name}/migration`))
        .body;
      // The dead seed's last heartbeat reported its sidecars' settings: the copy waited by its bounds, from
      // the lease's loss (5 s limit + 1 s reaction), not the fixed wait.
      expect(migration).toMatchObject({
        state: 'Succeeded',
        mode: 'bad',
        path: 'bad',
        destination: { name: destination },
        copyWait: { basis: 'bounds-since-lease-loss', lossBoundMs: 6_000 },
      });
      const record = await owners.get(`owner.${name}.${PROJECT}.${deployment.outputs.InternalDomain}`);
      expect(record?.value).toBe((await seed(destination))?.status.identity);
      const url = await until(`${name} serving on ${destination}`, async () => {
        const cp = await controlPlane(destination, ids.get(name)!);
        return cp?.active && cp.etcdClientUrl;
      });
      expect(await hasKeys(url, `evac/${name}/`, KEYS)).toBe(true);
    }
    passed += 1;
    console.log(
      `evacuation: 6 shoots moved ${(elapsed / 1000).toFixed(1)} s after the kill (after ${AFTER_S} s, lease 6 s; ${driven} rounds driven until the first moves, the rest woken by events); at most ${holding} moves held a place (maxParallel ${MAX_PARALLEL}) while up to ${moving} moved at once; a freed place was taken ${gaps.map((g) => (g / 1000).toFixed(1)).join(', ')} s later; moves began at ${evacuation.shoots.map((s) => ((claimed(s) - killedAt) / 1000).toFixed(0)).join(', ')} s after the kill; ${audits} ownership audits without split brain`,
    );
  }, 900_000);
  it('evacuates two lost seeds one after the other (cap 1); pause and cancel stop new moves and let running ones finish; all seeds lost start nothing', async () => {
    // Prepare: four shoots on X, one on Y, serving.
    const placed: [string, string][] = [
      ['x0', X],
      ['x1', X],
      ['x2', X],
      ['x3', X],
      ['y0', Y],
    ];
    for (const [name, seedName] of placed) {
      const put = await garden.setup.request<Shoot>('PUT', `/projects/${PROJECT}/shoots/${name}`, {
        body: shootOn(seedName, name),
      });
      expect(put.status).toBe(201);
      await until(
        `${name} serving on ${seedName}`,
        async () => (await controlPlane(seedName, put.body.status.technicalID))?.active,
        { timeoutMs: 180_000 },
      );
    }
    await new Promise((r) => setTimeout(r, 6_000));

    // Act 1: X lost first, Y a few seconds later; the cap lets one evacuation run.
    kill(X);
    await new Promise((r) => setTimeout(r, 4_000));
    kill(Y);
    const firstMove = await until(
      'a move of X',
      async () => {
        const body = await round();
        expect((body.queued as string[] | undefined) ?? []).not.toContain(X);
        const e = await evacuationOf(X);
        return count(e, 'Migrating') > 0 && e;
      },
      { timeoutMs: 120_000 },
    );
    expect(await evacuationOf(Y)).toBeUndefined();
    expect(count(firstMove, 'Migrating')).toBe(1);

    // Pause: the moves under way finish (the first, and one it let start when it freed its place, if that
    // came before the pause), no other starts.
    const pausing = (await api.request<Evacuation>('POST', `/seeds/${X}/evacuation/pause`)).body;
    expect(pausing.phase).toBe('Paused');
    const begun = count(pausing, 'Migrating') + count(pausing, 'Moved');
    const paused = await until(
      'the moves under way to finish while paused',
      async () => {
        await round();
        const e = await evacuationOf(X);
        return count(e, 'Moved') === begun && e;
      },
      { timeoutMs: 180_000 },
    );
    for (let i = 0; i < 3; i++) await round();
    const stillPaused = (await evacuationOf(X))!;
    expect(stillPaused).toMatchObject({ phase: 'Paused' });
    expect(count(stillPaused, 'Migrating')).toBe(0);
    expect(count(stillPaused, 'Pending')).toBe(4 - begun);
    expect(await evacuationOf(Y)).toBeUndefined();
    expect(paused.phase).toBe('Paused');

    // Resume, then cancel once the second move runs: the moves under way finish (a move that freed its place
    // may have let a third start before the cancel), the shoots not moved stay on X.
    expect((await api.request<Evacuation>('POST', `/seeds/${X}/evacuation/resume`)).body.phase).toBe('Running');
    await until(
      'the second move of X',
      async () => {
        await round();
        return count(await evacuationOf(X), 'Migrating') === 1;
      },
      { timeoutMs: 60_000 },
    );
    const cancelling = (await api.request<Evacuation>('POST', `/seeds/${X}/evacuation/cancel`)).body;
    expect(cancelling.phase).toBe('Cancelling');
    const underWay = count(cancelling, 'Migrating') + count(cancelling, 'Moved');
    const cancelled = await until(
      'X cancelled',
      async () => {
        await round();
        const e = await evacuationOf(X);
        return e?.phase === 'Cancelled' && e;
      },
      { timeoutMs: 180_000 },
    );
    expect(count(cancelled, 'Moved')).toBe(underWay);
    expect(underWay).toBeGreaterThan(begun);
    expect(count(cancelled, 'Pending')).toBe(4 - underWay);
    expect(count(cancelled, 'Pending')).toBeGreaterThan(0);
    expect(cancelled.shoots.every((s) => s.state !== 'Moved' || OTHERS.includes(s.destination!))).toBe(true);

    // Then Y, after X ended.
    const y = await until(
      'Y evacuated',
      async () => {
        await round();
        const e = await evacuationOf(Y);
        return e?.phase === 'Completed' && e;
      },
      { timeoutMs: 180_000 },
    );
    expect(Date.parse(y.createdAt)).toBeGreaterThanOrEqual(Date.parse(cancelled.endedAt!));
    expect(count(y, 'Moved')).toBe(1);

    // Act 2: every seed lost at once (a seed hosting shoots opted in first): no evacuation starts.
    const hosts = new Map<string, number>();
    for (const s of (await api.request<{ items: Shoot[] }>('GET', `/projects/${PROJECT}/shoots`)).body.items)
      hosts.set(s.status.seedName!, (hosts.get(s.status.seedName!) ?? 0) + 1);
    const busiest = OTHERS.filter((n) => hosts.has(n)).sort((a, b) => hosts.get(b)! - hosts.get(a)!)[0]!;
    const body = seedBody(busiest, [LOST, ...OTHERS, X, Y].indexOf(busiest));
    body.spec.settings = { evacuation: { enabled: true, after: '1s' } };
    expect((await garden.setup.request('PUT', `/seeds/${busiest}`, { body })).status).toBe(200);
    for (const name of OTHERS) kill(name);
    await new Promise((r) => setTimeout(r, 10_000));
    const held = await round();
    expect(held.held).toMatch(/6 of 6 seeds have lost their lease/);
    expect(held.queued).toContain(busiest);
    expect(await evacuationOf(busiest)).toBeUndefined();
    passed += 1;
    console.log(
      `evacuation: X cancelled after ${underWay} of 4 moves, Y evacuated in ${((Date.parse(y.endedAt!) - Date.parse(y.createdAt)) / 1000).toFixed(1)} s, begun after X ended; all 6 seeds lost: held`,
    );
  }, 900_000);
});
