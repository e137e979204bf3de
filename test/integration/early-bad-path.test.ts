import { LambdaClient } from '@aws-sdk/client-lambda';
import { Etcd3 } from 'etcd3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MigrationRecord } from '../../core/migration/record.js';
import type { HostedControlPlane, Seed } from '../../core/model/seed.js';
import { backedSeed, fixture } from '../../harness/fixtures/index.js';
import { registerSeedWithAgent, type AgentProcess } from '../../harness/agent-process.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { TEST_OWNERSHIP_TIMINGS } from '../../harness/timings.js';
import { until } from '../../harness/until.js';
import { startLeaseMonitorRounds } from '../../harness/lease-monitor.js';

/**
 * Issue 10, early switch: a migration in mode auto whose source agent is frozen (SIGSTOP of the agent
 * process alone; its sidecar and etcd keep running) reaches Succeeded on the bad path without waiting for
 * the source command's timeout, the lease monitor having failed the waiting step with SourceLeaseExpired.
 */
const garden = testGarden();
const { api, deployment, aws } = garden;
const lambda = new LambdaClient(aws);
const workDir = mkdtempSync(join(tmpdir(), 'gl-early-switch-'));
const [SOURCE, DESTINATION] = ['early-src', 'early-dst'];
const PROJECT = 'early';
const SHOOT = 'web';
const KEYS = 50;
/** The test stack's command timeout (global-setup: migrationCommandTimeoutSeconds). */
const COMMAND_TIMEOUT_MS = 15_000;
const agents = new Map<string, AgentProcess>();
let passed = false;

async function seed(name: string): Promise<Seed> {
  return (await api.request<Seed>('GET', `/seeds/${name}`)).body;
}

const controlPlane = async (seedName: string, technicalID: string): Promise<HostedControlPlane | undefined> =>
  (await seed(seedName)).status.controlPlanes?.find((c) => c.technicalID === technicalID);

describe('early switch to the bad path: the source agent frozen, mode auto', () => {
  beforeAll(async () => {
    await resetGardenState(garden);
    for (const [i, name] of [SOURCE, DESTINATION].entries()) {
      agents.set(
        name,
        await registerSeedWithAgent({
          garden: garden.setup,
          seed: name,
          body: backedSeed(name, i),
          workDir,
          deployment,
          ownership: TEST_OWNERSHIP_TIMINGS,
        }),
      );
    }
    for (const name of [SOURCE, DESTINATION]) {
      await until(`seed ${name} ready`, async () =>
        (await seed(name)).status.conditions.some((c) => c.type === 'GardenletReady' && c.status === 'True'),
      );
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all([...agents.values()].map((a) => a.stop()));
    // A failure keeps the agents' logs for the operator.
    if (passed) rmSync(workDir, { recursive: true, force: true });
    else console.log(`early switch: agent logs kept in ${workDir}`);
  });

  it('reaches Succeeded on the bad path, switched by SourceLeaseExpired well before the command timeout, with every key', async () => {
    // Prepare: the shoot's control plane serves on the source, with keys in its etcd.
    const shoot = fixture('shoot-dev-api1');
    shoot.metadata = { name: SHOOT };
    shoot.spec.seedName = SOURCE;
    delete shoot.spec.tolerations;
    const put = await garden.setup.request<{ status: { technicalID: string } }>(
      'PUT',
      `/projects/${PROJECT}/shoots/${SHOOT}`,
      { body: shoot },
    );
    expect(put.status).toBe(201);
    const id = put.body.status.technicalID;
    const sourceEtcd = await until('the control plane to serve on the source', async () => {
      const cp = await controlPlane(SOURCE, id);
      return cp?.active && cp.etcdClientUrl;
    });
    const etcd = new Etcd3({ hosts: sourceEtcd });
    for (let i = 0; i < KEYS; i++) await etcd.put(`early/key-${i}`).value(`v${i}`);
    etcd.close();
    const source = agents.get(SOURCE)!;
    const sidecars = source.descendants();
    expect(sidecars.length).toBeGreaterThan(0);

    // Act: freeze the source's agent alone, then migrate in mode auto while its last heartbeat is fresh.
    const frozen = source.freeze();
    expect(frozen.length).toBeGreaterThan(0);
    const t0 = Date.now();
    const started = await api.request<{ migrationId: string }>('POST', `/projects/${PROJECT}/shoots/${SHOOT}/migrate`, {
      body: { destinationSeed: DESTINATION, mode: 'auto' },
    });
    expect(started.status).toBe(202);
    // The lease monitor's rounds (its schedule is off in the test stack) until the migration ends.
    const monitor = startLeaseMonitorRounds({ lambda, functionName: deployment.outputs.LeaseMonitorFunctionName });
    let record: MigrationRecord;
    try {
      record = await until(
        'the migration to end',
        async () => {
          const r = (await api.request<MigrationRecord>('GET', `/projects/${PROJECT}/shoots/${SHOOT}/migration`)).body;
          return r.state !== 'Running' && r;
        },
        { timeoutMs: 120_000 },
      );
    } finally {
      await monitor.stop();
    }
    const elapsed = Date.now() - t0;

    // Assess: Succeeded on the bad path, switched because the source's lease expired, not by the timeout.
    expect(record.state, JSON.stringify(record.error)).toBe('Succeeded');
    expect(record.mode).toBe('auto');
    expect(record.path).toBe('bad');
    expect(record.pathReason).toMatch(/younger than 3 intervals/);
    expect(record.badPathSwitch).toEqual({
      failedStep: 'migrate-extensions',
      reason: expect.stringMatching(new RegExp(`^SourceLeaseExpired: the source seed ${SOURCE}'s lease expired at`)),
    });
    const switchedAfter = Date.parse(record.switchedToBadPathAt!) - Date.parse(record.createdAt);
    expect(switchedAfter).toBeLessThan(COMMAND_TIMEOUT_MS);
    // Whoever noticed first switched it: the lease monitor (failing the waiting task) or the dispatch step (lease already gone).
    // The source's sidecar was not frozen: it saw the owner record move, fenced etcd and wrote the final snapshot the copy found.
    expect(record.copy?.final).toBe(true);
    expect(monitor.switched).toEqual(
      record.badPathSwitch!.reason.includes('seen by the lease monitor') ? [`${PROJECT}/${SHOOT}`] : [],
    );
    const destinationEtcd = await until('the restored control plane on the destination', async () => {
      const cp = await controlPlane(DESTINATION, id);
      return cp?.active && cp.etcdClientUrl;
    });
    const restored = new Etcd3({ hosts: destinationEtcd });
    expect(await restored.getAll().prefix('early/').count()).toBe(KEYS);
    restored.close();
    passed = true;
    console.log(
      `early switch: request -> Succeeded ${(elapsed / 1000).toFixed(1)} s, switched ${(switchedAfter / 1000).toFixed(1)} s after admission (command timeout ${COMMAND_TIMEOUT_MS / 1000} s)`,
    );
  }, 240_000);
});
