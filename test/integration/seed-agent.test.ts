import { Route53Client } from '@aws-sdk/client-route-53';
import { SQSClient } from '@aws-sdk/client-sqs';
import { Etcd3 } from 'etcd3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { route53Api, Route53OwnerRecords } from '../../adapters/route53/owner-records.js';
import { sendTaskCommand } from '../../adapters/sqs/command-sender.js';
import { COMMAND_API_VERSION, type SeedCommand } from '../../core/commands/index.js';
import type { HostedControlPlane } from '../../core/model/seed.js';
import { technicalID as technicalIDOf } from '../../core/model/names.js';
import { ownerRecordName } from '../../core/ownership/index.js';
import type { SeedAgent } from '../../seed/agent/agent.js';
import { fixture } from '../../harness/fixtures/index.js';
import { resetGardenState } from '../../harness/garden.js';
import { testGarden } from '../harness/garden.js';
import { untilWith } from '../../harness/until.js';
import { startLocalSeed, type LocalSeed } from '../../harness/local-seed.js';
import { httpsGet } from '../../harness/kube/binaries.js';
import { testShootSecrets } from '../harness/shoot-secrets.js';

const garden = testGarden();
const { api, deployment, aws } = garden;
const sqs = new SQSClient(aws);
const owners = new Route53OwnerRecords({
  hostedZoneId: deployment.outputs.HostedZoneId,
  api: route53Api(new Route53Client(aws)),
});
const internalDomain = deployment.outputs.InternalDomain;

const project = 'agent';
const shootName = 'etcd1';
const id = technicalIDOf(project, shootName);
const shootRef = { project, name: shootName, technicalID: id };
const apiDomain = `api.${shootName}.${project}.${deployment.outputs.ExternalDomain}`;
const secrets = testShootSecrets(deployment);
const workDir = mkdtempSync(join(tmpdir(), 'gl-seed-agent-'));
const agents: LocalSeed[] = [];
const logs: string[] = [];
const etcdClients: Etcd3[] = [];

async function startSeed(name: string, networkIndex: number): Promise<LocalSeed> {
  const seed = await startLocalSeed({
    deployment,
    garden: api,
    name,
    networkIndex,
    workDir: join(workDir, name),
    log: (entry) => logs.push(JSON.stringify({ seed: name, ...entry })),
  });
  agents.push(seed);
  return seed;
}

let serial = 0;
async function send(agent: SeedAgent, command: Record<string, unknown>): Promise<void> {
  serial += 1;
  // What the garden adds to every command that starts components: the secrets sealed for the seed, the API domain.
  const starts = ['create-control-plane', 'reconcile', 'restore'].includes(command.type as string);
  const full = {
    apiVersion: COMMAND_API_VERSION,
    commandId: `test/${Date.now()}-${serial}`,
    shoot: shootRef,
    seed: agent.seed,
    issuedAt: new Date().toISOString(),
    ...(starts ? { secrets: await secrets.forSeed(shootRef, agent.seed), apiDomain } : {}),
    ...command,
  } as SeedCommand;
  await sendTaskCommand({ client: sqs, queueUrl: agent.queueUrl!, messageGroupId: id, command: full });
}

/** The control plane as the garden last heard of it from the seed's heartbeat. */
async function reported(seed: string): Promise<HostedControlPlane | undefined> {
  const res = await api.request<{ status: { controlPlanes?: HostedControlPlane[] } }>('GET', `/seeds/${seed}`);
  return res.body.status.controlPlanes?.find((p) => p.technicalID === id);
}

const until = untilWith({ timeoutMs: 30_000, intervalMs: 250, explain: () => logs.slice(-20).join('\n') });

function etcdAt(url: string): Etcd3 {
  const client = new Etcd3({ hosts: url, dialTimeout: 2_000 });
  etcdClients.push(client);
  return client;
}

const controlPlane = (seed: string) => ({ hibernated: false, backup: { bucket: `gl-backup-${seed}` } });

describe('the seed agent with the local runtime on the deployed stack', () => {
  let a: Awaited<ReturnType<typeof startSeed>>;
  let b: Awaited<ReturnType<typeof startSeed>>;

  beforeAll(async () => {
    await resetGardenState(garden);
    a = await startSeed('agent-a', 60);
    b = await startSeed('agent-b', 61);
    const shoot = fixture('shoot-dev-api1');
    shoot.metadata = { name: shootName };
    shoot.spec.seedName = a.name;
    delete shoot.spec.tolerations;
    // Non-HA: one replica per component keeps the numbers below plain.
    delete shoot.spec.controlPlane;
    expect((await api.request('PUT', `/projects/${project}/shoots/${shootName}`, { body: shoot })).status).toBe(201);
    // The orchestrator writes owner records; for a shoot created outside a migration the test does, with the seed's identity.
    await owners.set({
      name: ownerRecordName({ shoot: shootName, project, internalDomain }),
      value: a.agent.identity!,
    });
  });

  afterAll(async () => {
    for (const c of etcdClients.splice(0)) c.close();
    await Promise.all(agents.splice(0).map((x) => x.agent.stop()));
    if (process.env.KEEP_SEED_AGENT_WORKDIR === undefined) rmSync(workDir, { recursive: true, force: true });
  });

  it('creates a control plane with a real etcd and reports it in the heartbeat', async () => {
    await send(a.agent, { type: 'create-control-plane', controlPlane: controlPlane(a.name) });

    const plane = await until('the control plane reported active', async () => {
      const p = await reported(a.name);
      return p?.active && p.etcdReady && p.internalProbe === 'Success' ? p : undefined;
    });
    expect(plane).toMatchObject({
      ownerCheck: 'owner',
      components: { 'kube-apiserver': { replicas: 1 }, 'kube-controller-manager': { replicas: 1 } },
    });
    expect(plane.externalUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(plane.pods?.length).toBe(7);

    const etcd = etcdAt(a.hosting().sidecar(id)!.clientUrl);
    await etcd.put('/registry/agent-test').value('written-on-a');
    expect(await etcd.get('/registry/agent-test').string()).toBe('written-on-a');
  });

  it('scales, holds the scale through a reconcile, and restarts a crash-looping pod', async () => {
    await send(a.agent, { type: 'scale', component: 'kube-controller-manager', replicas: 0 });
    await send(a.agent, { type: 'reconcile', controlPlane: controlPlane(a.name) });
    await until(
      'kcm at 0 after the reconcile',
      async () => (await reported(a.name))?.components?.['kube-controller-manager']?.replicas === 0,
    );
    await a.agent.idle();
    expect(a.agent.runtime && (await reported(a.name))?.components?.['kube-controller-manager']?.replicas).toBe(0);

    await a.hosting().breakApiServer(id, 'internal', true);
    const crashing = await until('dependents crash-looping', async () => {
      const p = await reported(a.name);
      return p?.internalProbe === 'Failure'
        ? p.pods?.find((x) => x.labels.app === 'kube-scheduler' && x.state === 'CrashLoopBackOff')
        : undefined;
    });
    await a.hosting().breakApiServer(id, 'internal', false);
    // The weeder restarts dependents once it sees kube-apiserver answer again, not before.
    await until('kube-apiserver answering again', async () => (await reported(a.name))?.internalProbe === 'Success');
    await send(a.agent, { type: 'restart', pod: crashing.name, dependency: 'kube-apiserver' });
    await until('the restarted scheduler Running', async () =>
      (await reported(a.name))?.pods?.some((x) => x.labels.app === 'kube-scheduler' && x.state === 'Running'),
    );
    await send(a.agent, { type: 'scale', component: 'kube-controller-manager', replicas: 1 });
    await until(
      'kcm back at 1',
      async () => (await reported(a.name))?.components?.['kube-controller-manager']?.replicas === 1,
    );
  });

  it('a broken load balancer fails the external URL while the internal probe stays Success', async () => {
    const externalUrl = (await reported(a.name))!.externalUrl!;
    const ca = (await secrets.open(shootRef)).clusterCA.certificate;
    // Through the load balancer under the API domain (SNI), the shoot's CA checked.
    expect((await httpsGet(`${externalUrl}/healthz`, { servername: apiDomain, ca })).status).toBe(200);
    await expect(httpsGet(`${externalUrl}/healthz`, { servername: 'api.other.agent.example', ca })).rejects.toThrow();

    await a.hosting().breakApiServer(id, 'external', true);
    await expect(httpsGet(`${externalUrl}/healthz`, { servername: apiDomain, ca })).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await reported(a.name))?.internalProbe).toBe('Success');
    await a.hosting().breakApiServer(id, 'external', false);
    expect((await httpsGet(`${externalUrl}/healthz`, { servername: apiDomain, ca })).status).toBe(200);
  });

  it('migrates the shoot between two real agents, and the key is in the destination etcd', async () => {
    const started = await api.request<{ migrationId: string }>(
      'POST',
      `/projects/${project}/shoots/${shootName}/migrate`,
      { body: { destinationSeed: b.name, mode: 'good' } },
    );
    expect(started.status).toBe(202);

    const migration = await until(
      'the migration settled',
      async () => {
        const res = await api.request<{ state: string; path: string; error?: unknown }>(
          'GET',
          `/projects/${project}/shoots/${shootName}/migration`,
        );
        return res.status === 200 && res.body.state !== 'Running' ? res.body : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect(migration.state, `${JSON.stringify(migration.error)}\n${logs.slice(-30).join('\n')}`).toBe('Succeeded');
    expect(migration.path).toBe('good');

    const sidecar = b.hosting().sidecar(id);
    expect(sidecar).toBeDefined();
    const etcd = etcdAt(sidecar!.clientUrl);
    const value = await until(
      'the key readable on the destination',
      async () =>
        etcd
          .get('/registry/agent-test')
          .string()
          .then((v) => v ?? undefined),
      { timeoutMs: 20_000 },
    );
    expect(value).toBe('written-on-a');
    expect(a.hosting().sidecar(id)).toBeUndefined();
    await until('the destination reports the plane active', async () => (await reported(b.name))?.active);
    expect(a.agent.errors.filter((e) => !/heartbeat/.test(e.message))).toEqual([]);
  });
});
