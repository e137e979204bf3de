import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Route53Client } from '@aws-sdk/client-route-53';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import type { MigrationRecord } from '../../core/migration/record.js';
import { technicalID } from '../../core/model/names.js';
import { backedSeed, fixture } from '../../harness/fixtures/index.js';
import { FakeSidecar } from '../../harness/fake-sidecar.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { TestAgent } from '../../harness/test-agent.js';
import { until } from '../../harness/until.js';

const garden = testGarden();
const { api, deployment, aws } = garden;
const s3 = new S3Client({ ...aws, forcePathStyle: true });
const owners = new Route53OwnerRecords({
  hostedZoneId: deployment.outputs.HostedZoneId,
  api: route53Api(new Route53Client(aws)),
});

type View = MigrationRecord & { progress: number };
interface ShootView {
  status: { seedName?: string; lastOperation?: { type: string; state: string }; migration?: { state: string } };
}
interface SeedView {
  status: { identity: string; shoots: number };
}

const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop()));
});

let run = 0;
/** Two seeds with backup buckets and agents, and shoots on the first with stand-in sidecars owning them. */
async function landscape(options: { shoots?: number; hibernated?: boolean; sidecar?: boolean } = {}) {
  run += 1;
  const names = { source: `src-${run}`, destination: `dst-${run}` };
  const agents: Record<'source' | 'destination', TestAgent> = {} as never;
  for (const role of ['source', 'destination'] as const) {
    const name = names[role];
    await s3.send(new CreateBucketCommand({ Bucket: `gl-backup-${name}` }));
    const seed = backedSeed(name, run * 2 + (role === 'source' ? 0 : 1));
    expect((await api.request('PUT', `/seeds/${name}`, { body: seed })).status).toBe(201);
    agents[role] = TestAgent.onDeployment(deployment, { seed: name, ownerCheck: true });
    await agents[role].start();
    running.push(agents[role]);
  }
  const identity = (await api.request<SeedView>('GET', `/seeds/${names.source}`)).body.status.identity;
  const project = `mig${run}`;
  const shoots: string[] = [];
  const sidecars: FakeSidecar[] = [];
  for (let i = 0; i < (options.shoots ?? 1); i++) {
    const name = `s${i}`;
    const shoot = fixture('shoot-dev-api1');
    shoot.metadata = { name };
    shoot.spec.seedName = names.source;
    delete shoot.spec.tolerations;
    if (options.hibernated) shoot.spec.hibernation = { enabled: true };
    expect((await api.request('PUT', `/projects/${project}/shoots/${name}`, { body: shoot })).status).toBe(201);
    // Placed on the source: provisioning has the source's agent create its control plane.
    await agents.source.waitForCommand({ type: 'create-control-plane', technicalID: technicalID(project, name) });
    const sidecar = FakeSidecar.onDeployment(deployment, {
      shoot: { project, name, technicalID: technicalID(project, name) },
      identity,
      bucket: `gl-backup-${names.source}`,
      claim: true,
    });
    await sidecar.start();
    // A hibernated shoot's etcd has no sidecar: its last full snapshot is all there is.
    if (options.hibernated || options.sidecar === false) sidecar.silence();
    running.push(sidecar);
    sidecars.push(sidecar);
    shoots.push(name);
  }
  return { names, agents, project, shoots, sidecars };
}

async function migrate(project: string, name: string, body: Record<string, unknown> = {}) {
  return api.request<{ migrationId: string; resumed: boolean; destinationSeed: string; code?: string }>(
    'POST',
    `/projects/${project}/shoots/${name}/migrate`,
    { body },
  );
}

async function settled(project: string, name: string, timeoutMs = 120_000): Promise<View> {
  let last: unknown;
  return until(
    `the migration of ${project}/${name} to settle`,
    async () => {
      const res = await api.request<View>('GET', `/projects/${project}/shoots/${name}/migration`);
      last = res.body;
      return res.status === 200 && res.body.state !== 'Running' && res.body;
    },
    { timeoutMs, intervalMs: 500, explain: () => JSON.stringify(last).slice(0, 2000) },
  );
}

const stepStates = (m: View) => Object.fromEntries(m.steps.map((s) => [s.id, s.state]));
/** What an agent received from the migration (provisioning sends create-control-plane when the shoot is placed). */
const migrationCommands = (agent: TestAgent) =>
  agent.received.filter((c) => c.type !== 'create-control-plane').map((c) => c.type);

async function assertOnDestination(project: string, name: string, names: { source: string; destination: string }) {
  const shoot = await api.request<ShootView>('GET', `/projects/${project}/shoots/${name}`);
  expect(shoot.body.status.seedName).toBe(names.destination);
  expect(shoot.body.status.lastOperation).toMatchObject({ type: 'Restore', state: 'Succeeded' });
  const destination = await api.request<SeedView>('GET', `/seeds/${names.destination}`);
  const record = await owners.get(`owner.${name}.${project}.${deployment.outputs.InternalDomain}`);
  expect(record?.value).toBe(destination.body.status.identity);
  const copied = await s3.send(
    new ListObjectsV2Command({ Bucket: `gl-backup-${names.destination}`, Prefix: `${technicalID(project, name)}/v2/` }),
  );
  return { copied: (copied.Contents ?? []).map((o) => o.Key ?? '') };
}

describe('migrate-shoot on the deployed stack', () => {
  beforeAll(() => resetGardenState(garden));

  it('takes the good path when the source answers, and loses no acknowledged state', async () => {
    const l = await landscape();
    const started = await migrate(l.project, 's0', { destinationSeed: l.names.destination });
    expect(started.status).toBe(202);

    const m = await settled(l.project, 's0');
    expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
    expect(m.path).toBe('good');
    expect(stepStates(m)).toMatchObject({
      'pre-copy-snapshots': 'succeeded',
      'restore-etcd-ahead': 'skipped',
      'migrate-extensions': 'succeeded',
      'persist-shootstate': 'succeeded',
      'delete-owner-record': 'succeeded',
      'wait-final-snapshot': 'succeeded',
      'delete-source-control-plane': 'succeeded',
      'set-owner-destination': 'succeeded',
      'copy-snapshots': 'succeeded',
      'restore-etcd': 'succeeded',
      'restore-extensions': 'succeeded',
      finalize: 'succeeded',
    });
    // The pre-copy moved the stand-in sidecar's full snapshot before the owner change (its final snapshot is a full one, which the copy after it moves).
    const message = (id: string) => m.steps.find((s) => s.id === id)?.message ?? '';
    expect(message('pre-copy-snapshots')).toMatch(/^pre-copied 1 objects, \d+ bytes, up to revision 100$/);
    expect(m.preCopy).toMatchObject({ copied: 1, lastRevision: 100 });
    // The test agent's runtime does not restore ahead: it declines, and restore-etcd restores in full.
    expect(message('restore-etcd-ahead')).toMatch(/^the destination does not restore ahead/);
    expect(l.agents.destination.received.filter((c) => c.type === 'restore').map((c) => c.disposition)).toEqual([
      'declined-ahead',
      'run',
      'run',
    ]);
    const { copied } = await assertOnDestination(l.project, 's0', l.names);
    expect(copied.some((k) => k.endsWith('.final'))).toBe(true);
    // The owner-change notice after the record's deletion; none after set-owner-destination, the source's plane being gone.
    expect(migrationCommands(l.agents.source)).toEqual(['migrate', 'check-owner', 'delete-control-plane']);
    expect(migrationCommands(l.agents.destination)).toEqual(['restore', 'restore', 'restore']);
    expect((await api.request<SeedView>('GET', `/seeds/${l.names.source}`)).body.status.shoots).toBe(0);
    expect((await api.request<SeedView>('GET', `/seeds/${l.names.destination}`)).body.status.shoots).toBe(1);
  });

  it('takes the bad path from the start when the source has gone silent', async () => {
    const l = await landscape();
    await l.agents.source.stop();
    // Three heartbeat intervals of the test stack (2 s each) without a heartbeat.
    await new Promise((r) => setTimeout(r, 7_000));

    expect((await migrate(l.project, 's0', { destinationSeed: l.names.destination })).status).toBe(202);
    const m = await settled(l.project, 's0');
    expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
    expect(m.path).toBe('bad');
    // The pre-copy reads the source's bucket, not the source: it runs on the bad path too.
    expect(stepStates(m)).toMatchObject({
      'pre-copy-snapshots': 'succeeded',
      'migrate-extensions': 'skipped',
      'set-owner-destination': 'succeeded',
      finalize: 'succeeded',
    });
    expect(migrationCommands(l.agents.source)).toEqual([]);
    // The source's sidecar still ran: it fenced on the owner change and its final snapshot was copied.
    const { copied } = await assertOnDestination(l.project, 's0', l.names);
    expect(copied.some((k) => k.endsWith('.final'))).toBe(true);
  });

  it('switches to the bad path at the right step when the source stops answering after migrating its extensions', async () => {
    const l = await landscape();
    l.agents.source.silenceAfter('migrate');

    expect((await migrate(l.project, 's0', { destinationSeed: l.names.destination, mode: 'good' })).status).toBe(202);
    const m = await settled(l.project, 's0');
    expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
    expect(m.path).toBe('bad');
    expect(m.badPathSwitch?.failedStep).toBe('delete-source-control-plane');
    expect(m.switchedToBadPathAt).toBeDefined();
    expect(m.shootState?.source).toBe('migrated');
    expect(stepStates(m)).toMatchObject({
      'migrate-extensions': 'succeeded',
      'persist-shootstate': 'succeeded',
      'delete-source-control-plane': 'failed',
      'set-owner-destination': 'succeeded',
      finalize: 'succeeded',
    });
    await assertOnDestination(l.project, 's0', l.names);
  });

  it('goes on without the restore ahead when the destination fails it: a pre-copy never fails a migration', async () => {
    const l = await landscape();
    l.agents.destination.failOn('restore-ahead', 'RuntimeUnavailable', {
      message: 'injected: the restore ahead broke',
    });

    expect((await migrate(l.project, 's0', { destinationSeed: l.names.destination })).status).toBe(202);
    const m = await settled(l.project, 's0');
    expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
    const ahead = m.steps.find((s) => s.id === 'restore-etcd-ahead');
    expect(ahead).toMatchObject({
      state: 'failed',
      message: expect.stringMatching(
        /^RuntimeUnavailable: injected: the restore ahead broke; continuing without it: restore-etcd restores etcd in full/,
      ),
    });
    expect(stepStates(m)).toMatchObject({
      'pre-copy-snapshots': 'succeeded',
      'restore-etcd': 'succeeded',
      finalize: 'succeeded',
    });
    expect(l.agents.destination.received.filter((c) => c.type === 'restore').map((c) => c.disposition)).toEqual([
      'injected-failure',
      'run',
      'run',
    ]);
    await assertOnDestination(l.project, 's0', l.names);
  });

  it('ends in Error on a destination failure, and a second migrate call resumes where it failed', async () => {
    const l = await landscape();
    l.agents.destination.failOn('restore', 'EtcdRestoreFailed', {
      times: 1,
      message: 'injected: the snapshots do not restore',
    });

    expect((await migrate(l.project, 's0', { destinationSeed: l.names.destination })).status).toBe(202);
    const failed = await settled(l.project, 's0');
    expect(failed.state).toBe('Error');
    expect(failed.error?.step).toBe('restore-etcd');
    expect(failed.error?.message).toContain('EtcdRestoreFailed');
    const shoot = await api.request<ShootView>('GET', `/projects/${l.project}/shoots/s0`);
    expect(shoot.body.status.lastOperation).toMatchObject({ state: 'Error' });
    expect(shoot.body.status.seedName).toBe(l.names.source);

    const resumed = await migrate(l.project, 's0');
    expect(resumed.status).toBe(202);
    expect(resumed.body).toMatchObject({ migrationId: failed.id, resumed: true });
    const m = await settled(l.project, 's0');
    expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
    const attempts = Object.fromEntries(m.steps.map((s) => [s.id, s.attempts]));
    expect(attempts).toMatchObject({
      'pre-copy-snapshots': 1,
      'restore-etcd-ahead': 1,
      'migrate-extensions': 1,
      'copy-snapshots': 1,
      'restore-etcd': 2,
    });
    await assertOnDestination(l.project, 's0', l.names);
  });

  it('migrates a hibernated shoot without waiting for a final snapshot it can never get', async () => {
    const l = await landscape({ hibernated: true });
    expect((await migrate(l.project, 's0', { destinationSeed: l.names.destination })).status).toBe(202);
    const m = await settled(l.project, 's0');
    expect(m.state, JSON.stringify(m.error)).toBe('Succeeded');
    expect(stepStates(m)).toMatchObject({
      'pre-copy-snapshots': 'skipped',
      'restore-etcd-ahead': 'skipped',
      'wait-final-snapshot': 'skipped',
    });
    expect(m.steps.find((s) => s.id === 'pre-copy-snapshots')?.message).toMatch(/^hibernated: /);
    const { copied } = await assertOnDestination(l.project, 's0', l.names);
    expect(copied.length).toBeGreaterThan(0);
    expect(copied.some((k) => k.endsWith('.final'))).toBe(false);
  });

  it('accepts exactly one of 20 concurrent migrate requests for one shoot', async () => {
    const l = await landscape();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => migrate(l.project, 's0', { destinationSeed: l.names.destination })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    expect((await settled(l.project, 's0')).state).toBe('Succeeded');
  });

  it('migrates 10 shoots off one seed at once', async () => {
    const l = await landscape({ shoots: 10 });
    const answers = await Promise.all(
      l.shoots.map((name) => migrate(l.project, name, { destinationSeed: l.names.destination })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(202));
    const results = await Promise.all(l.shoots.map((name) => settled(l.project, name, 240_000)));
    expect(results.map((m) => m.state)).toEqual(Array(10).fill('Succeeded'));
    expect((await api.request<SeedView>('GET', `/seeds/${l.names.source}`)).body.status.shoots).toBe(0);
    expect((await api.request<SeedView>('GET', `/seeds/${l.names.destination}`)).body.status.shoots).toBe(10);
  });

  it('refuses a migration to the same seed (422) and of an unknown shoot (404)', async () => {
    const l = await landscape();
    const same = await migrate(l.project, 's0', { destinationSeed: l.names.source });
    expect(same.status).toBe(422);
    expect(same.body.code).toBe('SameSeed');
    expect((await migrate(l.project, 'nope', {})).status).toBe(404);
    expect((await migrate(l.project, 's0', { mode: 'sideways' })).status).toBe(400);
  });
});
