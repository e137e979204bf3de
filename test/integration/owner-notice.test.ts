import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MigrationRecord } from '../../core/migration/record.js';
import type { HostedControlPlane, Seed } from '../../core/model/seed.js';
import { backedSeed, fixture } from '../../harness/fixtures/index.js';
import { registerSeedWithAgent, type AgentProcess } from '../../harness/agent-process.js';
import { gatewayPut } from '../../harness/scenario/index.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { TEST_OWNERSHIP_TIMINGS } from '../../harness/timings.js';
import { until } from '../../harness/until.js';

/**
 * Owner-change notices end to end on the deployed test stack: two real seed agents whose sidecars check
 * the owner record only every 10 s, a writer on the source's etcd, and a migration. Right after the
 * owner step changes the record, the owner function puts a check-owner notice on the source's queue; the
 * agent posts it to the sidecars (the fixture's shoot is HA: three etcd members, each with its sidecar),
 * which check at once and fence. Good path (the record deleted), then the bad path with a live source
 * (the record set to the destination).
 */
const garden = testGarden();
const { api, deployment } = garden;
const workDir = mkdtempSync(join(tmpdir(), 'gl-owner-notice-'));
const [A, B] = ['notice-a', 'notice-b'];
const PROJECT = 'notice';
const SHOOT = 'web';
/** Far longer than the notice's path: a fence within it comes from the notice, not from a poll. */
const CHECK_INTERVAL_MS = 10_000;
const agents = new Map<string, AgentProcess>();
let passed = 0;

const seed = async (name: string) => (await api.request<Seed>('GET', `/seeds/${name}`)).body;
const controlPlane = async (seedName: string, technicalID: string): Promise<HostedControlPlane | undefined> =>
  (await seed(seedName)).status.controlPlanes?.find((c) => c.technicalID === technicalID);

/** Puts a key every 20 ms and records when each was acknowledged or refused (Date.now()). */
function startWriter(clientUrl: string) {
  const acks: number[] = [];
  const refusals: number[] = [];
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      try {
        await gatewayPut({ endpoint: clientUrl, key: `notice/${i}`, value: 'x', timeoutMs: 1_000 });
        acks.push(Date.now());
      } catch {
        refusals.push(Date.now());
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
    /** The source's fence as its clients see it: the first refusal after its last acknowledged write. */
    fencedAt: () => {
      const lastAck = Math.max(...acks);
      return { lastAck, firstRefused: refusals.find((t) => t > lastAck) };
    },
  };
}

/**
 * Keeps copying the sidecars' logs (one per etcd member) while the migration runs: the source's control
 * plane (and its folder) is deleted before the migration ends.
 */
function followSidecarLogs(seedName: string, technicalID: string) {
  const dir = join(workDir, seedName, technicalID);
  const texts = new Map<string, string>();
  const timer = setInterval(() => {
    try {
      const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('sidecar.log'));
      for (const f of files) texts.set(f, readFileSync(join(dir, f), 'utf8'));
    } catch {
      // Deleted with the control plane: keep what was read.
    }
  }, 100);
  return {
    stop: () => clearInterval(timer),
    /** The first owner check of any member that saw the record gone or moved, and what started it. */
    firstNotOwnerCheck: () => firstNotOwnerCheck([...texts.values()].join('\n')),
  };
}

function firstNotOwnerCheck(log: string): { trigger?: string; time?: string } | undefined {
  return log
    .split('\n')
    .map((l) => {
      try {
        return JSON.parse(l) as { event?: string; result?: string; trigger?: string; time?: string };
      } catch {
        return undefined;
      }
    })
    .filter((e) => e?.event === 'owner-check' && e.result === 'not-owner')
    .sort((a, b) => Date.parse(a!.time ?? '') - Date.parse(b!.time ?? ''))[0];
}

async function migrate(options: { to: string; mode: 'good' | 'bad' }): Promise<MigrationRecord> {
  const started = await api.request('POST', `/projects/${PROJECT}/shoots/${SHOOT}/migrate`, {
    body: { destinationSeed: options.to, mode: options.mode },
  });
  expect(started.status).toBe(202);
  return until(
    'the migration to end',
    async () => {
      const r = (await api.request<MigrationRecord>('GET', `/projects/${PROJECT}/shoots/${SHOOT}/migration`)).body;
      return r.state !== 'Running' && r;
    },
    { timeoutMs: 150_000 },
  );
}

describe('owner-change notices: the source fences within about a second although it polls every 10 s', () => {
  let technicalID = '';

  beforeAll(async () => {
    await resetGardenState(garden);
    for (const [i, name] of [A, B].entries()) {
      const ownership = { ownerCheckInterval: CHECK_INTERVAL_MS, unknownGrace: TEST_OWNERSHIP_TIMINGS.unknownGrace };
      agents.set(
        name,
        await registerSeedWithAgent({
          garden: garden.setup,
          seed: name,
          body: backedSeed(name, i),
          workDir,
          deployment,
          ownership,
        }),
      );
    }
    for (const name of [A, B]) {
      await until(`seed ${name} ready`, async () =>
        (await seed(name)).status.conditions.some((c) => c.type === 'GardenletReady' && c.status === 'True'),
      );
    }
    const shoot = fixture('shoot-dev-api1');
    shoot.metadata = { name: SHOOT };
    shoot.spec.seedName = A;
    delete shoot.spec.tolerations;
    const put = await garden.setup.request<{ status: { technicalID: string } }>(
      'PUT',
      `/projects/${PROJECT}/shoots/${SHOOT}`,
      { body: shoot },
    );
    expect(put.status).toBe(201);
    technicalID = put.body.status.technicalID;
  }, 180_000);

  afterAll(async () => {
    await Promise.all([...agents.values()].map((a) => a.stop()));
    if (passed === 2) rmSync(workDir, { recursive: true, force: true });
    else console.log(`owner notices: agent and sidecar logs kept in ${workDir}`);
  });

  it.each([
    { path: 'good', from: A, to: B, step: 'delete-owner-record' },
    { path: 'bad', from: B, to: A, step: 'set-owner-destination' },
  ] as const)(
    '$path path: fenced within about a second of $step, by the check the notice brought forward',
    async ({ path, from, to, step }) => {
      // Prepare: the control plane serves on the source, a writer on its etcd.
      const clientUrl = await until(`the control plane to serve on ${from}`, async () => {
        const cp = await controlPlane(from, technicalID);
        return cp?.active && cp.etcdClientUrl;
      });
      const writer = startWriter(clientUrl);
      const log = followSidecarLogs(from, technicalID);
      await new Promise((r) => setTimeout(r, 1_000));

      // Act
      let record: MigrationRecord;
      try {
        record = await migrate({ to, mode: path });
      } finally {
        await writer.stop();
        log.stop();
      }

      // Assess: the migration went the way asked, the source was told, and it fenced at once.
      expect(record.state, JSON.stringify(record.error)).toBe('Succeeded');
      expect(record.path).toBe(path);
      const change = record.steps.find((s) => s.id === step)!;
      expect(change.message).toContain('source told to check now');
      const { lastAck, firstRefused } = writer.fencedAt();
      expect(firstRefused).toBeDefined();
      // From the start of the owner step (before the record changed) to the first write the source refused.
      const fence = firstRefused! - Date.parse(change.startedAt!);
      expect(fence).toBeLessThan(2_000);
      expect(lastAck).toBeLessThan(firstRefused!);
      // Not a lucky poll: the first check (of any member) that found the record changed was the notice's (or one of its follow-ups).
      expect(['notice', 'follow-up']).toContain(log.firstNotOwnerCheck()?.trigger);
      expect(record.copy?.final).toBe(true);
      console.log(
        `owner notice (${path} path): owner step started -> first refused write ${fence} ms (check interval ${CHECK_INTERVAL_MS} ms)`,
      );
      passed += 1;
    },
    240_000,
  );
});
