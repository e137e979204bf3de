import { Route53Client } from '@aws-sdk/client-route-53';
import { Etcd3 } from 'etcd3';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoShootStateStore } from '../../adapters/dynamodb/shoot-state-store.js';
import { KmsDataKeys, kmsApi } from '../../adapters/kms/data-keys.js';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { gardenContext, openSecrets } from '../../core/shootstate/sealed.js';
import { readShootSecrets } from '../../seed/agent/secret-files.js';
import type { LastOperation } from '../../core/model/common.js';
import type { HostedControlPlane } from '../../core/model/seed.js';
import { technicalID } from '../../core/model/names.js';
import { ownerRecordName } from '../../core/ownership/index.js';
import type { LocalHosting } from '../../seed/agent/local-hosting.js';
import { backedSeed, fixture } from '../../harness/fixtures/index.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import {
  checkHistory,
  checkLeasedFixture,
  FAITHFUL_FIXTURE,
  writeLeasedFixture,
  gatewayGet,
  gatewayPut,
  HistoryRecorder,
  recordFinalReads,
  resolving,
  startRegisterClients,
} from '../../harness/scenario/index.js';
import { untilWith } from '../../harness/until.js';
import { registerLocalSeed, startLocalSeedAgent, type LocalSeed } from '../../harness/local-seed.js';
import { destroyKube } from '../../seed/agent/control-plane-flow.js';

/**
 * The everyday lifecycle on the deployed stack with real seed agents (local runtime: real etcd with its
 * sidecar): create, hibernate and wake, deletion with confirmation, pending placement, the seed lease,
 * and the source that comes back after a bad-case migration.
 */
const garden = testGarden();
const { api, deployment, aws } = garden;
const owners = new Route53OwnerRecords({
  hostedZoneId: deployment.outputs.HostedZoneId,
  api: route53Api(new Route53Client(aws)),
});
const internalDomain = deployment.outputs.InternalDomain;
const HEARTBEAT_MS = 1_000;
const project = 'life';
const workDir = mkdtempSync(join(tmpdir(), 'gl-lifecycle-'));
const agents: LocalSeed[] = [];
const logs: string[] = [];
const etcdClients: Etcd3[] = [];
const CONFIRM = { metadata: { annotations: { 'confirmation.gardener.cloud/deletion': 'true' } } };
const MERGE_PATCH = { 'content-type': 'application/merge-patch+json' };

interface ShootView {
  metadata: { resourceVersion: string; deletionTimestamp?: string };
  status: { seedName?: string; lastOperation?: LastOperation; conditions: { type: string; status: string }[] };
}

async function registerSeed(name: string, networkIndex: number): Promise<void> {
  await registerLocalSeed({ garden: api, deployment, name, networkIndex });
}

async function startAgent(name: string): Promise<LocalSeed> {
  const seed = await startLocalSeedAgent({
    deployment,
    garden: api,
    name,
    workDir: join(workDir, name),
    heartbeatIntervalMs: HEARTBEAT_MS,
    log: (entry) => logs.push(JSON.stringify({ seed: name, ...entry })),
  });
  agents.push(seed);
  return seed;
}

function shootBody(name: string, seedName?: string): Record<string, unknown> {
  const shoot = fixture('shoot-dev-api1');
  shoot.metadata = { name };
  if (seedName) shoot.spec.seedName = seedName;
  else delete shoot.spec.seedName;
  delete shoot.spec.tolerations;
  delete shoot.spec.controlPlane;
  return shoot;
}

async function shoot(name: string): Promise<ShootView | undefined> {
  const res = await api.request<ShootView>('GET', `/projects/${project}/shoots/${name}`);
  return res.status === 200 ? res.body : undefined;
}

async function reported(seed: string, name: string): Promise<HostedControlPlane | undefined> {
  const res = await api.request<{ status: { controlPlanes?: HostedControlPlane[] } }>('GET', `/seeds/${seed}`);
  return res.body.status.controlPlanes?.find((p) => p.technicalID === technicalID(project, name));
}

const until = untilWith({ timeoutMs: 60_000, intervalMs: 250, explain: () => logs.slice(-20).join('\n') });

const succeeded = (name: string, type: LastOperation['type'], timeoutMs = 90_000) =>
  until(
    `${name}: ${type} Succeeded`,
    async () => {
      const s = await shoot(name);
      const op = s?.status.lastOperation;
      if (op?.type === type && op.state === 'Failed') throw new Error(`${type} failed: ${op.description}`);
      return op?.type === type && op.state === 'Succeeded' ? s : undefined;
    },
    { timeoutMs: timeoutMs },
  );

function etcdAt(url: string): Etcd3 {
  const client = new Etcd3({ hosts: url, dialTimeout: 2_000 });
  etcdClients.push(client);
  return client;
}

describe('the shoot and seed lifecycle with real seed agents and etcd', () => {
  let a: Awaited<ReturnType<typeof startAgent>>;

  beforeAll(async () => {
    await resetGardenState(garden);
    await registerSeed('life-a', 70);
    a = await startAgent('life-a');
  });

  afterAll(async () => {
    for (const c of etcdClients.splice(0)) c.close();
    await Promise.all(agents.splice(0).map((x) => x.agent.stop()));
    if (process.env.KEEP_LIFECYCLE_WORKDIR === undefined) rmSync(workDir, { recursive: true, force: true });
  });

  it('create reaches Succeeded, with the owner record naming the seed and etcd serving', async () => {
    expect(
      (await api.request('PUT', `/projects/${project}/shoots/one`, { body: shootBody('one', a.name) })).status,
    ).toBe(201);
    const created = await succeeded('one', 'Create');
    expect(created.status.lastOperation).toMatchObject({ progress: 100 });
    expect((await owners.get(ownerRecordName({ shoot: 'one', project, internalDomain })))?.value).toBe(
      a.agent.identity,
    );
    await until('etcd serving', async () => (await reported(a.name, 'one'))?.active);

    // The shoot's secrets: sealed in the garden's ShootState (no key in the clear), opened on the seed into a
    // file only the agent's user reads, the same secrets on both sides.
    const stored = await new DynamoShootStateStore({
      tableName: deployment.outputs.TableName,
      client: new DynamoDBClient(aws),
    }).load({ project, name: 'one' });
    expect(JSON.stringify(stored)).not.toContain('PRIVATE KEY');
    const id = technicalID(project, 'one');
    const inGarden = await openSecrets(
      stored!.state.secrets!,
      new KmsDataKeys({ api: kmsApi(new KMSClient(aws)) }),
      gardenContext(id),
    );
    const planeDir = a.hosting().dataDir(id);
    expect(readShootSecrets(planeDir)).toEqual(inGarden);
    expect(statSync(join(planeDir, 'pki', 'shoot-secrets.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(planeDir, 'pki')).mode & 0o777).toBe(0o700);
  });

  it('hibernation stops etcd after a full snapshot; waking serves the keys written before, with their leases and revisions', async () => {
    const id = technicalID(project, 'one');
    const etcd = etcdAt(a.hosting().sidecar(id)!.clientUrl);
    await etcd.put('/registry/before-hibernation').value('kept');
    const leased = await writeLeasedFixture(a.hosting().sidecar(id)!.clientUrl, '/registry/hibernation');
    expect(
      (
        await api.request('PATCH', `/projects/${project}/shoots/one`, {
          body: { spec: { hibernation: { enabled: true } } },
          headers: MERGE_PATCH,
        })
      ).status,
    ).toBe(200);
    await succeeded('one', 'Hibernate');
    expect(a.hosting().sidecar(id)).toBeUndefined();
    await until('reported without etcd', async () => (await reported(a.name, 'one'))?.etcdReady === false);

    expect(
      (
        await api.request('PATCH', `/projects/${project}/shoots/one`, {
          body: { spec: { hibernation: { enabled: false } } },
          headers: MERGE_PATCH,
        })
      ).status,
    ).toBe(200);
    await succeeded('one', 'Wake');
    const woken = etcdAt(a.hosting().sidecar(id)!.clientUrl);
    expect(
      await until(
        'the key after waking',
        async () => (await woken.get('/registry/before-hibernation').string()) ?? undefined,
        { timeoutMs: 20_000 },
      ),
    ).toBe('kept');
    // A lease does not run down while etcd is stopped: waking renews it to its granted TTL, as a leader change does.
    expect(await checkLeasedFixture(a.hosting().sidecar(id)!.clientUrl, leased)).toEqual(FAITHFUL_FIXTURE);
  });

  it('a seed that hosts a running control plane cannot be deleted', async () => {
    const res = await api.request<{ code: string }>('DELETE', `/seeds/${a.name}`);
    expect(res.status).toBe(409);
  });

  it('deletion: refused without the annotation; with it no etcd process, no data directory, no owner record, a freed count', async () => {
    const id = technicalID(project, 'one');
    const dataDir = a.hosting().dataDir(id);
    expect(existsSync(dataDir)).toBe(true);
    const refused = await api.request<{ code: string; message: string }>('DELETE', `/projects/${project}/shoots/one`);
    expect(refused.status).toBe(422);
    expect(refused.body.message).toContain('confirmation.gardener.cloud/deletion');
    expect(
      (await api.request('PATCH', `/projects/${project}/shoots/one`, { body: CONFIRM, headers: MERGE_PATCH })).status,
    ).toBe(200);
    const requested = await api.request<ShootView>('DELETE', `/projects/${project}/shoots/one`);
    expect(requested.status).toBe(202);
    expect(requested.body.metadata.deletionTimestamp).toEqual(expect.any(String));

    await until('the shoot gone', async () => (await shoot('one')) === undefined, { timeoutMs: 90_000 });
    expect(a.hosting().sidecar(id)).toBeUndefined();
    expect(existsSync(dataDir)).toBe(false);
    expect(await owners.get(ownerRecordName({ shoot: 'one', project, internalDomain }))).toBeUndefined();
    expect((await api.request<{ status: { shoots: number } }>('GET', `/seeds/${a.name}`)).body.status.shoots).toBe(0);
    await until('the heartbeat without the plane', async () => (await reported(a.name, 'one')) === undefined);
  });

  it('a shoot created before any seed can host it is placed within a minute of a seed becoming ready', async () => {
    // Region eu-central-1: only seed life-p, registered below, serves it.
    const body = shootBody('pending');
    (body.spec as Record<string, unknown>).region = 'eu-central-1';
    expect((await api.request('PUT', `/projects/${project}/shoots/pending`, { body })).status).toBe(201);
    expect((await shoot('pending'))?.status.lastOperation).toMatchObject({ type: 'Create', state: 'Pending' });
    const seed = backedSeed('life-p', 72);
    (seed.spec.provider as Record<string, unknown>).region = 'eu-central-1';
    (seed.spec.provider as Record<string, unknown>).zones = ['eu-central-1a', 'eu-central-1b', 'eu-central-1c'];
    await registerLocalSeed({ garden: api, deployment, name: 'life-p', networkIndex: 72, body: seed });
    const ready = Date.now();
    await startAgent('life-p');
    const placed = await until('placed', async () => (await shoot('pending'))?.status.seedName, { timeoutMs: 60_000 });
    const placedMs = Date.now() - ready;
    console.log(`pending shoot placed ${placedMs} ms after its seed's agent started`);
    expect(placed).toBe('life-p');
    expect(placedMs).toBeLessThan(60_000);
    await succeeded('pending', 'Create');
  });

  it('a seed whose agent stopped heartbeating becomes Unknown and is not chosen; its next heartbeat makes it ready again', async () => {
    const p = agents.find((x) => x.name === 'life-p')!;
    await p.agent.pause();
    const unknown = await until(
      'GardenletReady Unknown',
      async () => {
        const res = await api.request<{ status: { conditions: { type: string; status: string; reason?: string }[] } }>(
          'GET',
          '/seeds/life-p',
        );
        const c = res.body.status.conditions.find((x) => x.type === 'GardenletReady');
        return c?.status === 'Unknown' ? c : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(unknown.reason).toBe('LeaseExpired');
    const spec = { ...(shootBody('x').spec as Record<string, unknown>), region: 'eu-central-1' };
    const dry = await api.request<{ candidates: { seed: string }[]; rejected: { seed: string }[] }>(
      'POST',
      '/scheduling/dry-run',
      { body: { shoot: { spec } } },
    );
    expect(dry.status).toBe(200);
    expect(dry.body.candidates.map((c) => c.seed)).not.toContain('life-p');
    await p.agent.resume();
    await until(
      'ready again',
      async () => {
        const res = await api.request<{ status: { conditions: { type: string; status: string }[] } }>(
          'GET',
          '/seeds/life-p',
        );
        return res.body.status.conditions.find((x) => x.type === 'GardenletReady')?.status === 'True';
      },
      { timeoutMs: 20_000 },
    );
  });

  it('a source whose agent was frozen during a bad-case migration removes its leftover within one heartbeat interval after it wakes', async () => {
    // Prepare: a shoot on life-a, and a destination life-b.
    await registerSeed('life-b', 71);
    await startAgent('life-b');
    expect(
      (await api.request('PUT', `/projects/${project}/shoots/moved`, { body: shootBody('moved', a.name) })).status,
    ).toBe(201);
    await succeeded('moved', 'Create');
    const id = technicalID(project, 'moved');
    const sourceUrl = await until('etcd serving on life-a', async () => {
      const plane = await reported(a.name, 'moved');
      return plane?.active && plane.etcdClientUrl;
    });
    const leased = await writeLeasedFixture(sourceUrl, 'lifecycle/moved-fidelity');
    // Clients of the shoot's etcd record a history throughout (issue 19): the bad case with the source's
    // sidecar alive promises no lost acknowledged write, so it must be linearizable. They reach the
    // source, and the destination once it reports the shoot's etcd.
    const urls: Record<string, string | undefined> = { source: sourceUrl };
    const history = new HistoryRecorder();
    const registers = startRegisterClients({
      history,
      endpoints: { source: 'source', destination: 'destination' },
      clients: ['source', 'source', 'destination', 'destination'],
      keys: ['k0', 'k1', 'k2', 'k3'].map((k) => `lifecycle/moved/${k}`),
      opsPerSecond: 10,
      readShare: 0.5,
      timeoutMs: 1_000,
      put: resolving(gatewayPut, (name) => urls[name]),
      get: resolving(gatewayGet, (name) => urls[name]),
    });
    try {
      await until('the clients acknowledged a write on life-a', async () =>
        history.operations().some((o) => o.op === 'put' && o.outcome === 'ok'),
      );
      // Act: the source's agent freezes (etcd and its sidecar keep running); a bad-case migration moves the shoot.
      await a.agent.pause();
      const started = await api.request('POST', `/projects/${project}/shoots/moved/migrate`, {
        body: { destinationSeed: 'life-b', mode: 'bad' },
      });
      expect(started.status).toBe(202);
      const migration = await until(
        'the migration settled',
        async () => {
          const res = await api.request<{ state: string; error?: unknown }>(
            'GET',
            `/projects/${project}/shoots/moved/migration`,
          );
          return res.status === 200 && res.body.state !== 'Running' ? res.body : undefined;
        },
        { timeoutMs: 180_000 },
      );
      expect(
        migration.state,
        `${JSON.stringify(migration.error)}\n${logs
          .filter((l) => l.includes('life-b'))
          .slice(-30)
          .join('\n')}`,
      ).toBe('Succeeded');
      urls.destination = await until('etcd serving on life-b', async () => {
        const plane = await reported('life-b', 'moved');
        return plane?.active && plane.etcdClientUrl;
      });
      const served = history.operations().length;
      await until(
        'the clients acknowledged writes on life-b',
        async () =>
          history
            .operations()
            .slice(served)
            .filter((o) => o.seed === 'destination' && o.op === 'put' && o.outcome === 'ok').length >= 5,
      );
    } finally {
      await registers.stop();
    }
    await recordFinalReads({ history, seed: 'destination', endpoint: urls.destination! });
    const verdict = await checkHistory('lifecycle-bad-case-frozen-agent', history);
    expect(verdict.result, JSON.stringify(verdict)).toBe('linearizable');
    expect(await checkLeasedFixture(urls.destination!, leased)).toEqual(FAITHFUL_FIXTURE);
    expect(a.hosting().sidecar(id)).toBeDefined();
    const dataDir = a.hosting().dataDir(id);
    const woke = Date.now();
    await a.agent.resume();
    await until('the leftover removed', async () => a.hosting().sidecar(id) === undefined && !existsSync(dataDir), {
      timeoutMs: 10_000,
    });
    const removedMs = Date.now() - woke;
    console.log(
      `leftover removed ${removedMs} ms after the source's agent woke (heartbeat interval ${HEARTBEAT_MS} ms)`,
    );
    // One heartbeat interval to learn of the release, plus the removal itself (stopping etcd and its sidecar).
    expect(removedMs).toBeLessThan(HEARTBEAT_MS + 5_000);
    await until('life-a reports no plane', async () => (await reported(a.name, 'moved')) === undefined);
    expect((await shoot('moved'))?.status.seedName).toBe('life-b');
  });

  it('a hibernation whose command the source had not answered when a bad-case migration moved the shoot follows it to the new seed', async () => {
    // Prepare: a shoot on life-a, created; life-c as the destination.
    await registerSeed('life-c', 72);
    const c = await startAgent('life-c');
    expect(
      (await api.request('PUT', `/projects/${project}/shoots/follows`, { body: shootBody('follows', a.name) })).status,
    ).toBe(201);
    await succeeded('follows', 'Create');
    // Act: the source's agent freezes with the Hibernate command sent to it; a bad-case migration moves the shoot; the agent wakes.
    const frozenAt = logs.length;
    await a.agent.pause();
    expect(
      (
        await api.request('PATCH', `/projects/${project}/shoots/follows`, {
          body: { spec: { hibernation: { enabled: true } } },
          headers: MERGE_PATCH,
        })
      ).status,
    ).toBe(200);
    await until('the Hibernate command sent to life-a', async () => {
      const op = (await shoot('follows'))?.status.lastOperation;
      return op?.type === 'Hibernate' && op.progress === 50 && op.description.includes(a.name);
    });
    const started = await api.request('POST', `/projects/${project}/shoots/follows/migrate`, {
      body: { destinationSeed: 'life-c', mode: 'bad' },
    });
    expect(started.status).toBe(202);
    const migration = await until(
      'the migration settled',
      async () => {
        const res = await api.request<{ state: string }>('GET', `/projects/${project}/shoots/follows/migration`);
        return res.status === 200 && res.body.state !== 'Running' ? res.body : undefined;
      },
      { timeoutMs: 180_000 },
    );
    await a.agent.resume();
    // Assess: hibernated on life-c, where the shoot is; nothing of it runs on life-a.
    expect(migration.state).toBe('Succeeded');
    // A receive in flight when the agent froze took the command off the queue unseen: it comes back after
    // the queue's 60 s visibility timeout, and the old seed's answer (NotOwner) sends it to the new seed.
    const hibernated = await succeeded('follows', 'Hibernate', 180_000);
    expect(hibernated.status.seedName).toBe('life-c');
    expect(hibernated.status.lastOperation?.description).toContain('on seed life-c');
    await until('life-c reports it without etcd', async () => (await reported(c.name, 'follows'))?.etcdReady === false);
    expect(c.hosting().sidecar(technicalID(project, 'follows'))).toBeUndefined();
    await until('life-a reports no plane', async () => (await reported(a.name, 'follows')) === undefined, {
      timeoutMs: 30_000,
    });
    // The Hibernate command reached the old seed late and was refused there (the owner record names life-c),
    // not run: running it built the plane there again. Its refusal is what sent the hibernation on.
    const doneOnA = await until('life-a to have answered a command of the shoot since it froze', () => {
      const entries = logs.slice(frozenAt).map((l) => JSON.parse(l) as Record<string, unknown>);
      const ofShoot = new Set(
        entries
          .filter((e) => e.seed === a.name && e.event === 'command' && e.shoot === technicalID(project, 'follows'))
          .map((e) => e.commandId),
      );
      const done = entries.filter((e) => e.seed === a.name && e.event === 'command-done' && ofShoot.has(e.commandId));
      return done.length > 0 && done;
    });
    expect(doneOnA.map(({ type, outcome, error }) => ({ type, outcome, error }))).toEqual(
      doneOnA.map(() => ({ type: 'reconcile', outcome: 'failure', error: 'NotOwner' })),
    );
  }, 300_000);

  it('an agent that restarts after a crash adopts its control planes from its work dir: the ones still placed on it serve their data again (a three-member cluster too), one moved away meanwhile is released', async () => {
    // Prepare: three shoots on life-d, each with a key; life-e as a destination.
    await registerSeed('life-d', 73);
    await registerSeed('life-e', 74);
    const d = await startAgent('life-d');
    await startAgent('life-e');
    // keptha: a `node` shoot, three etcd members on life-d.
    const ha = shootBody('keptha', d.name) as { spec: Record<string, unknown> };
    ha.spec.controlPlane = { highAvailability: { failureTolerance: { type: 'node' } } };
    for (const [name, body] of [
      ['kept', shootBody('kept', d.name)],
      ['gone', shootBody('gone', d.name)],
      ['keptha', ha],
    ] as const) {
      expect((await api.request('PUT', `/projects/${project}/shoots/${name}`, { body })).status).toBe(201);
    }
    const urls: Record<string, string> = {};
    for (const name of ['kept', 'gone', 'keptha']) {
      await succeeded(name, 'Create');
      urls[name] = await until(`${name} serving on life-d`, async () => {
        const plane = await reported(d.name, name);
        return plane?.active && plane.etcdClientUrl;
      });
      await etcdAt(urls[name]!).put(`restart/${name}`).value('before the crash');
    }
    const [kept, gone, keptha] = [
      technicalID(project, 'kept'),
      technicalID(project, 'gone'),
      technicalID(project, 'keptha'),
    ];
    const goneDataDir = d.hosting().dataDir(gone);
    const memberUrls = (hosting: LocalHosting) =>
      hosting.members(keptha).map((m) => `${m.name} ${m.sidecar?.clientUrl}`);
    const haMembers = memberUrls(d.hosting());
    expect(haMembers).toHaveLength(3);
    // Act: the agent dies. Nothing of it shuts down: its kube-apiserver stand-ins go with its process; kept's
    // sidecar and etcd die too, gone's and keptha's three are left running (their process groups outlive a
    // SIGKILLed agent; nothing restarts keptha's members any more).
    await d.agent.pause();
    d.hosting().stopRestarting(keptha);
    for (const id of [kept, gone, keptha]) await destroyKube(d.hosting().components(id));
    d.hosting().sidecar(kept)!.kill();
    // While it is down, a bad-case migration moves gone to life-e (its live sidecar fences on the owner change).
    expect(
      (
        await api.request('POST', `/projects/${project}/shoots/gone/migrate`, {
          body: { destinationSeed: 'life-e', mode: 'bad' },
        })
      ).status,
    ).toBe(202);
    const migration = await until(
      'the migration settled',
      async () => {
        const res = await api.request<{ state: string; error?: unknown }>(
          'GET',
          `/projects/${project}/shoots/gone/migration`,
        );
        return res.status === 200 && res.body.state !== 'Running' ? res.body : undefined;
      },
      { timeoutMs: 180_000 },
    );
    expect(migration.state, JSON.stringify(migration.error)).toBe('Succeeded');
    // A new agent process for life-d, on the same work dir.
    const restarted = Date.now();
    const d2 = await startAgent('life-d');
    // Assess: kept serves its key again, at the address it had; gone's old sidecar was stopped, its plane
    // came back fenced (not the owner) and was released; gone serves its key on life-e.
    const keptUrl = await until('kept serving on life-d again', async () => {
      const plane = await reported(d.name, 'kept');
      // Observed by the new agent: the garden still shows the old one's last report until then.
      return plane?.active && Date.parse(plane.internalProbeTime ?? '') > restarted && plane.etcdClientUrl;
    });
    console.log(`kept serving again ${Date.now() - restarted} ms after life-d's agent restarted`);
    expect(keptUrl).toBe(urls.kept);
    expect(await etcdAt(keptUrl).get('restart/kept').string()).toBe('before the crash');
    const haUrl = await until('keptha serving on life-d again', async () => {
      const plane = await reported(d.name, 'keptha');
      return (
        plane?.active &&
        Date.parse(plane.internalProbeTime ?? '') > restarted &&
        plane.etcdMembers?.length === 3 &&
        plane.etcdClientUrl
      );
    });
    expect(memberUrls(d2.hosting())).toEqual(haMembers);
    expect(await etcdAt(haUrl).get('restart/keptha').string()).toBe('before the crash');
    await until(
      'gone released on life-d',
      async () =>
        d2.hosting().sidecar(gone) === undefined &&
        !existsSync(goneDataDir) &&
        (await reported(d.name, 'gone')) === undefined,
      { timeoutMs: 30_000 },
    );
    const onD = logs.filter((l) => l.includes('"seed":"life-d"'));
    expect(onD.some((l) => l.includes('"event":"stale-process-stopped"') && l.includes(gone))).toBe(true);
    for (const id of [kept, gone, keptha])
      expect(onD.some((l) => l.includes('"event":"adopted"') && l.includes(id))).toBe(true);
    expect(onD.filter((l) => l.includes('"event":"stale-process-stopped"') && l.includes(keptha))).toHaveLength(3);
    const goneOnE = await until('gone serving on life-e', async () => {
      const plane = await reported('life-e', 'gone');
      return plane?.active && plane.etcdClientUrl;
    });
    expect(await etcdAt(goneOnE).get('restart/gone').string()).toBe('before the crash');
    expect((await shoot('kept'))?.status.seedName).toBe('life-d');
  }, 300_000);
});
